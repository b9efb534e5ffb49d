//! The device `printf` ring: what a kernel prints goes into a per-core
//! byte ring (a power of two from 64 bytes to 128 KiB; when full, the
//! oldest entries are overwritten). `customop_cleanup` flushes it: what
//! was written up to then becomes visible to the host, which reads it
//! after the run (on the host, the simulator's report).
//!
//! Each entry is the text of one print followed by a 0 byte. A reader that
//! fell more than a ring behind starts at the oldest byte still there and
//! skips to the next entry boundary: an entry partly overwritten is
//! dropped whole, and the number of lost bytes is reported.
//!
//! The ring's memory comes from the libc heap (reached through the pinned
//! hbm_scratch window, directly addressable), taken at the first print.

use crate::error::{Error, Result};
use crate::heap::LibcHeap;
use core::ptr::NonNull;

/// Largest ring (reference: up to 128 KiB).
pub const MAX_RING_BYTES: usize = 128 << 10;
/// Smallest ring (defined here).
pub const MIN_RING_BYTES: usize = 64;
/// Ring size until configured (defined here).
pub const DEFAULT_RING_BYTES: usize = 16 << 10;

/// One core's printf ring. Positions count bytes since the start, so
/// `pos % size` is the index in the ring.
#[derive(Debug)]
pub struct PrintfRing {
    storage: Option<NonNull<u8>>,
    size: usize,
    head: u64,
    flushed: u64,
    read: u64,
    dropped_prints: u64,
}

// SAFETY: the storage is a block of this core's own libc heap, owned by
// the core state together with the ring; it moves with the state and is
// never shared between cores.
unsafe impl Send for PrintfRing {}

impl Default for PrintfRing {
    fn default() -> Self {
        Self::new()
    }
}

/// What a reader got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drained {
    /// Bytes delivered (terminators excluded).
    pub bytes: u64,
    /// Bytes overwritten before the reader came (lost).
    pub lost: u64,
}

impl PrintfRing {
    /// A ring of the default size, without memory yet.
    pub const fn new() -> Self {
        Self { storage: None, size: DEFAULT_RING_BYTES, head: 0, flushed: 0, read: 0, dropped_prints: 0 }
    }

    /// The ring's size.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Prints that found no memory for the ring (libc heap not ready).
    pub fn dropped_prints(&self) -> u64 {
        self.dropped_prints
    }

    /// Sets the ring's size (a power of two in 64..=128 KiB). The ring is
    /// emptied; its memory is taken again at the next print.
    pub fn set_size(&mut self, libc: &mut LibcHeap, size: usize) -> Result<()> {
        if !size.is_power_of_two() || !(MIN_RING_BYTES..=MAX_RING_BYTES).contains(&size) {
            return Err(Error::BadRingSize);
        }
        if let Some(p) = self.storage.take() {
            // SAFETY: the ring's own block, taken from `libc` by `storage`
            // and dropped from the ring above.
            let _ = unsafe { libc.free(p.as_ptr()) };
        }
        *self = Self { size, ..Self::new() };
        Ok(())
    }

    fn storage(&mut self, libc: &mut LibcHeap) -> Option<NonNull<u8>> {
        if self.storage.is_none() {
            self.storage = libc.memalign(64, self.size).ok();
        }
        self.storage
    }

    /// Appends one entry (`text`, then a terminator). Text longer than the
    /// ring keeps its tail.
    pub fn print(&mut self, libc: &mut LibcHeap, text: &[u8]) {
        let Some(p) = self.storage(libc) else {
            self.dropped_prints += 1;
            return;
        };
        let keep = text.len().min(self.size - 1);
        let mask = self.size as u64 - 1;
        for &b in text[text.len() - keep..].iter().chain(core::iter::once(&0u8)) {
            // SAFETY: the storage is a live libc-heap block of `size`
            // bytes owned by this ring; the index is masked below `size`.
            unsafe { p.as_ptr().add((self.head & mask) as usize).write(b) };
            self.head += 1;
        }
    }

    /// `customop_cleanup`'s flush: everything printed so far becomes
    /// visible to the host.
    pub fn flush(&mut self) {
        self.flushed = self.head;
    }

    /// Bytes printed but not flushed.
    pub fn pending(&self) -> u64 {
        self.head - self.flushed
    }

    /// The host's read: hands every flushed entry not read yet to `out`,
    /// one call per entry (without its terminator).
    pub fn drain(&mut self, mut out: impl FnMut(&[u8])) -> Drained {
        let mut d = Drained::default();
        let Some(p) = self.storage else {
            return d;
        };
        let oldest = self.flushed.saturating_sub(self.size as u64);
        let mask = self.size as u64 - 1;
        // SAFETY: as in `print`; every index is masked below `size`.
        let at = |pos: u64| unsafe { p.as_ptr().add((pos & mask) as usize).read() };
        let mut pos = self.read;
        if pos < oldest {
            d.lost = oldest - pos;
            pos = oldest;
            // Skip the partly overwritten entry.
            while pos < self.flushed && at(pos) != 0 {
                pos += 1;
                d.lost += 1;
            }
            // The terminator of the dropped entry.
            pos += 1;
            d.lost += 1;
        }
        let mut entry = [0u8; 256];
        let mut n = 0;
        while pos < self.flushed {
            let b = at(pos);
            pos += 1;
            if b == 0 || n == entry.len() {
                out(&entry[..n]);
                d.bytes += n as u64;
                n = 0;
                if b == 0 {
                    continue;
                }
            }
            entry[n] = b;
            n += 1;
        }
        if n > 0 {
            out(&entry[..n]);
            d.bytes += n as u64;
        }
        self.read = self.flushed.max(self.read);
        d
    }
}

/// `core::fmt::Write` into a fixed stack buffer, truncating (formats one
/// entry without allocating).
pub struct LineBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Default for LineBuf<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> LineBuf<N> {
    /// Empty.
    pub const fn new() -> Self {
        Self { buf: [0; N], len: 0 }
    }

    /// The text so far.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }
}

impl<const N: usize> core::fmt::Write for LineBuf<N> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        // Copies what fits (`zip` stops at the shorter), truncating.
        let room = self.buf.get_mut(self.len..).unwrap_or_default();
        let n = s.len().min(room.len());
        for (d, b) in room.iter_mut().zip(s.as_bytes()) {
            *d = *b;
        }
        self.len += n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::boxed::Box;
    use std::string::String;
    use std::vec::Vec;

    #[repr(C, align(64))]
    struct Arena([u8; 1 << 16]);

    fn libc(arena: &mut Arena) -> LibcHeap {
        let mut h = LibcHeap::new();
        // SAFETY: the arena outlives the heap and is used by nothing else.
        unsafe { h.init_main(arena.0.as_mut_ptr(), arena.0.len()) };
        h
    }

    fn read(r: &mut PrintfRing) -> (Vec<String>, Drained) {
        let mut v = Vec::new();
        let d = r.drain(|e| v.push(String::from_utf8_lossy(e).into_owned()));
        (v, d)
    }

    #[test]
    fn entries_become_visible_at_flush() {
        let mut a = Box::new(Arena([0; 1 << 16]));
        let mut h = libc(&mut a);
        let mut r = PrintfRing::new();
        r.print(&mut h, b"hello");
        r.print(&mut h, b"world");
        assert_eq!(read(&mut r).0, Vec::<String>::new(), "nothing before the flush");
        r.flush();
        assert_eq!(read(&mut r).0, ["hello", "world"]);
        assert_eq!(read(&mut r).0, Vec::<String>::new(), "read once");
    }

    #[test]
    fn the_oldest_entries_are_overwritten() {
        let mut a = Box::new(Arena([0; 1 << 16]));
        let mut h = libc(&mut a);
        let mut r = PrintfRing::new();
        r.set_size(&mut h, 64).unwrap();
        for i in 0..20 {
            r.print(&mut h, std::format!("line {i:02}").as_bytes()); // 8 bytes + 0
        }
        r.flush();
        let (v, d) = read(&mut r);
        // 160 bytes written, 64 kept; the reader cannot tell whether the
        // oldest byte kept starts an entry, so it drops that one: the last
        // 7 whole entries come out.
        assert_eq!(v.last().unwrap(), "line 19");
        assert!(v.iter().all(|e| e.len() == 7), "no partial entry: {v:?}");
        assert_eq!(v.len(), 7);
        assert_eq!(d.lost + d.bytes + v.len() as u64, 160);
    }

    #[test]
    fn sizes_are_checked() {
        let mut a = Box::new(Arena([0; 1 << 16]));
        let mut h = libc(&mut a);
        let mut r = PrintfRing::new();
        for bad in [0, 32, 100, 256 << 10] {
            assert_eq!(r.set_size(&mut h, bad), Err(Error::BadRingSize));
        }
        r.set_size(&mut h, 128 << 10).unwrap();
        r.print(&mut h, b"x");
        assert_eq!(r.dropped_prints(), 1, "the 64 KiB arena cannot hold a 128 KiB ring");
    }
}
