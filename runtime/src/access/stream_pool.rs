//! Bookkeeping of the stream buffer pool: a data-RAM block cut into equal
//! buffers (by default 16 KiB as four 4 KiB buffers, SPEC §10). A stream
//! takes a free buffer when it opens; when none is free it runs
//! unbuffered (per element). Pure logic: the memory is carved by the core
//! state, this only hands out slots.

use crate::error::{Error, Result};

/// Default pool size (reference: a 16 KiB TCM pool).
pub const DEFAULT_STREAM_POOL_BYTES: u32 = 16 << 10;
/// Default buffer size (reference: 4 KiB per stream).
pub const DEFAULT_STREAM_BUFFER_BYTES: u32 = 4 << 10;
/// Most buffers a pool may have (the width of the in-use mask).
pub const MAX_STREAM_BUFFERS: u32 = 16;

/// Which buffers of the pool are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamPool {
    buffer_bytes: u32,
    /// One bit per buffer (the pool is `buffers() · buffer_bytes`): taking
    /// and giving back a slot divide nothing (no divider call on the Q7).
    all: u16,
    in_use: u16,
}

/// The slot mask of `n` buffers (`n <= MAX_STREAM_BUFFERS`).
const fn mask_of(n: u32) -> u16 {
    ((1u32 << n) - 1) as u16
}

impl Default for StreamPool {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamPool {
    /// The default geometry, nothing taken.
    pub const fn new() -> Self {
        Self { buffer_bytes: DEFAULT_STREAM_BUFFER_BYTES, all: mask_of(DEFAULT_STREAM_POOL_BYTES / DEFAULT_STREAM_BUFFER_BYTES), in_use: 0 }
    }

    /// Bytes of the whole pool.
    pub fn pool_bytes(&self) -> u32 {
        self.buffers() * self.buffer_bytes
    }

    /// Bytes per buffer.
    #[inline]
    pub fn buffer_bytes(&self) -> u32 {
        self.buffer_bytes
    }

    /// Buffers in the pool.
    pub fn buffers(&self) -> u32 {
        self.all.count_ones()
    }

    /// Buffers taken.
    pub fn taken(&self) -> u32 {
        self.in_use.count_ones()
    }

    /// Changes the geometry. Refused while a buffer is taken, or when the
    /// buffer is not a multiple of 64 bytes, does not divide the pool, or
    /// the pool would have 0 or more than 16 buffers. `pool_bytes == 0`
    /// turns buffering off (every stream runs per element).
    pub fn configure(&mut self, pool_bytes: u32, buffer_bytes: u32) -> Result<()> {
        if self.in_use != 0 {
            return Err(Error::BadPoolConfig);
        }
        if buffer_bytes == 0 || !buffer_bytes.is_multiple_of(64) || !pool_bytes.is_multiple_of(buffer_bytes) || pool_bytes / buffer_bytes > MAX_STREAM_BUFFERS {
            return Err(Error::BadPoolConfig);
        }
        self.buffer_bytes = buffer_bytes;
        self.all = mask_of(pool_bytes / buffer_bytes);
        Ok(())
    }

    /// Takes a free buffer: its slot, or `None` when all are taken.
    #[inline]
    pub fn acquire(&mut self) -> Option<u32> {
        let free = self.all & !self.in_use;
        if free == 0 {
            return None;
        }
        let slot = free.trailing_zeros();
        self.in_use |= 1 << slot;
        Some(slot)
    }

    /// Whether `slot` is a buffer of the pool that is taken.
    #[inline]
    pub fn is_taken(&self, slot: u32) -> bool {
        1u16.checked_shl(slot).is_some_and(|bit| self.in_use & bit != 0)
    }

    /// Gives a buffer back.
    #[inline]
    pub fn release(&mut self, slot: u32) -> Result<()> {
        let bit = 1u16.checked_shl(slot).unwrap_or(0);
        if bit == 0 || self.in_use & bit == 0 {
            return Err(Error::AccessorNotRegistered);
        }
        self.in_use &= !bit;
        Ok(())
    }

    /// Byte offset of `slot`'s buffer in the pool.
    #[inline]
    pub fn offset(&self, slot: u32) -> usize {
        slot as usize * self.buffer_bytes as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_buffers_then_none() {
        let mut p = StreamPool::new();
        assert_eq!(p.buffers(), 4);
        let s: [u32; 4] = core::array::from_fn(|_| p.acquire().unwrap());
        assert_eq!(s, [0, 1, 2, 3]);
        assert_eq!(p.acquire(), None, "a 5th stream falls back");
        assert_eq!(p.configure(8192, 4096), Err(Error::BadPoolConfig), "in use");
        assert!(p.is_taken(2) && !p.is_taken(4) && !p.is_taken(16) && !p.is_taken(u32::MAX));
        p.release(2).unwrap();
        assert!(!p.is_taken(2));
        assert_eq!(p.release(2), Err(Error::AccessorNotRegistered));
        assert_eq!(p.acquire(), Some(2));
        assert_eq!(p.offset(3), 12288);
    }

    #[test]
    fn geometry_is_checked() {
        let mut p = StreamPool::new();
        assert_eq!(p.configure(16384, 100), Err(Error::BadPoolConfig));
        assert_eq!(p.configure(16384, 0), Err(Error::BadPoolConfig));
        assert_eq!(p.configure(64 * 17, 64), Err(Error::BadPoolConfig));
        assert_eq!(p.pool_bytes(), DEFAULT_STREAM_POOL_BYTES);
        p.configure(0, 4096).unwrap();
        assert_eq!(p.acquire(), None, "no buffers: per element");
        assert_eq!(p.pool_bytes(), 0);
        p.configure(8192, 1024).unwrap();
        assert_eq!(p.buffers(), 8);
        assert_eq!((p.pool_bytes(), p.buffer_bytes()), (8192, 1024));
        let taken: std::vec::Vec<u32> = core::iter::from_fn(|| p.acquire()).collect();
        assert_eq!(taken, (0..8).collect::<std::vec::Vec<_>>(), "eight slots, lowest first");
        for bad in [8, 15, 16, 40, u32::MAX] {
            assert_eq!(p.release(bad), Err(Error::AccessorNotRegistered), "slot {bad}");
        }
        p.release(7).unwrap();
        assert_eq!(p.taken(), 7);
        assert_eq!(p.acquire(), Some(7));
    }
}
