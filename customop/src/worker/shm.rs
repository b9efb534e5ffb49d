//! The shared memory of a call: a memfd mapped by the parent and by the
//! worker (made before the fork), grown on demand by either side. With a
//! library that has the staging simulator, the memfd is the worker's
//! simulated HBM and the view its tensor area (from byte `base`): the
//! parent writes arguments where the simulator places them and reads the
//! output where the run left it.

use std::io;
use std::os::fd::RawFd;
use std::ptr::NonNull;

/// A memfd mapped shared: the parent's and the worker's view of the
/// argument and output bytes.
pub(super) struct Shm {
    pub(super) fd: RawFd,
    pub(super) ptr: NonNull<u8>,
    pub(super) len: usize,
    /// Where in the memfd the view starts.
    pub(super) base: u64,
}

// SAFETY: the mapping is owned by this value; access goes through `&mut`.
unsafe impl Send for Shm {}

impl Shm {
    /// A new memfd, its view from byte `base`.
    pub(super) fn new(base: u64) -> io::Result<Self> {
        // SAFETY: memfd_create with a literal name; the fd is checked.
        let fd = unsafe { libc::memfd_create(c"customop-args".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut s = Self { fd, ptr: NonNull::dangling(), len: 0, base };
        s.grow(1 << 16)?;
        Ok(s)
    }

    /// Maps the first `len` bytes of the memfd (replacing the old view).
    pub(super) fn map(&mut self, len: usize) -> io::Result<()> {
        // SAFETY: mapping our own memfd, shared; the old view is unmapped
        // after the new one exists (no reference into it is live: every
        // access goes through `&mut self`).
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, self.fd, self.base as libc::off_t) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        if self.len > 0 {
            // SAFETY: the old view, ours, no longer used.
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
        }
        self.ptr = NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        self.len = len;
        Ok(())
    }

    /// Makes the region at least `n` bytes (both sides' memfd; this
    /// side's view).
    pub(super) fn grow(&mut self, n: usize) -> io::Result<()> {
        if n <= self.len {
            return Ok(());
        }
        // The file never shortened (the other side may have made it longer:
        // the worker's simulator makes it the HBM's size).
        // SAFETY: fstat fills a plain struct for our own descriptor.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let now = if unsafe { libc::fstat(self.fd, &mut st) } == 0 { st.st_size as u64 } else { 0 };
        let len = n.next_power_of_two();
        let end = self.base + len as u64;
        // SAFETY: lengthening our own memfd.
        if now < end && unsafe { libc::ftruncate(self.fd, end as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        self.map(len)
    }

    /// Follows the other side's growth: maps `n` bytes if the view is smaller.
    pub(super) fn follow(&mut self, n: usize) -> io::Result<()> {
        if n > self.len {
            self.map(n)?;
        }
        Ok(())
    }

    /// Gives the pages back (both views then read zeros; the size stays).
    pub(super) fn release(&mut self) {
        // SAFETY: punching a hole in our own memfd.
        unsafe { libc::fallocate(self.fd, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, self.base as libc::off_t, self.len as libc::off_t) };
    }

    /// The view's bytes `[at, at + len)`; None when they are not all in
    /// the view.
    ///
    /// # Safety
    /// The other process shares these bytes: it must not write them while
    /// the slice lives. The call protocol gives each side its turn (the
    /// caller stages before the request, the worker writes the output
    /// before its reply or its output frame, and fills ahead only after
    /// the caller's release): the caller names the turn it holds.
    pub(super) unsafe fn range(&self, at: usize, len: usize) -> Option<&[u8]> {
        let end = at.checked_add(len).filter(|&e| e <= self.len)?;
        // SAFETY: `[at, end)` lies in the view, mapped while `self` lives;
        // the caller's contract keeps the other side from writing it.
        Some(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(at), end - at) })
    }

    /// The view's bytes `[at, at + len)` to write; None when they are not
    /// all in the view.
    ///
    /// # Safety
    /// As [`Shm::range`]: the other process neither reads nor writes these
    /// bytes while the slice lives.
    pub(super) unsafe fn range_mut(&mut self, at: usize, len: usize) -> Option<&mut [u8]> {
        let end = at.checked_add(len).filter(|&e| e <= self.len)?;
        // SAFETY: as in `range`; `&mut self` makes it this side's only view.
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(at), end - at) })
    }
}

impl Drop for Shm {
    fn drop(&mut self) {
        if self.fd < 0 {
            return;
        }
        // SAFETY: our own view and descriptor.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
            libc::close(self.fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_region_grows_and_both_views_see_it() {
        let mut a = Shm::new(0).unwrap();
        // SAFETY: duplicating our own descriptor for a second view.
        let mut b = Shm { fd: unsafe { libc::dup(a.fd) }, ptr: NonNull::dangling(), len: 0, base: 0 };
        a.grow(1 << 20).unwrap();
        // SAFETY: one thread, no other process: nothing else writes the view.
        unsafe { a.range_mut((1 << 20) - 1, 1).unwrap()[0] = 9 };
        b.follow(a.len).unwrap();
        // The byte `b` sees (one thread, no other process, as above).
        let at = |v: &Shm, i: usize, n: usize| {
            // SAFETY: as above.
            unsafe { v.range(i, n) }.map(<[u8]>::to_vec)
        };
        assert_eq!(at(&b, (1 << 20) - 1, 1).unwrap(), [9]);
        assert!(at(&b, b.len, 1).is_none(), "past the view");
        assert!(at(&b, usize::MAX, 2).is_none(), "an overflowing range");
        // Never shrunk below what the other side made it.
        b.grow(10).unwrap();
        b.grow(b.len + 1).unwrap();
        assert!(b.len >= 1 << 20);
        a.release();
        assert_eq!(at(&b, (1 << 20) - 1, 1).unwrap(), [0]);
    }

    #[test]
    fn a_view_from_an_offset_sees_that_part_of_the_file() {
        let base = 1 << 30;
        let mut a = Shm::new(base).unwrap();
        a.grow(3 << 20).unwrap();
        assert_eq!(a.len, 4 << 20);
        // SAFETY: one thread, no other process.
        unsafe { a.range_mut(5, 1).unwrap()[0] = 7 };
        let mut at = [0u8; 1];
        // SAFETY: pread into a local byte from our own descriptor.
        assert_eq!(unsafe { libc::pread(a.fd, at.as_mut_ptr().cast(), 1, (base + 5) as libc::off_t) }, 1);
        assert_eq!(at[0], 7);
        // A file the other side lengthened is not shortened.
        // SAFETY: lengthening our own memfd.
        assert_eq!(unsafe { libc::ftruncate(a.fd, (8u64 << 30) as libc::off_t) }, 0);
        a.grow(8 << 20).unwrap();
        // SAFETY: fstat fills a plain struct for our own descriptor.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        assert_eq!(unsafe { libc::fstat(a.fd, &mut st) }, 0);
        assert_eq!(st.st_size as u64, 8 << 30);
        a.release();
        // SAFETY: one thread, no other process.
        assert_eq!(unsafe { a.range(5, 1) }.unwrap(), [0]);
    }
}
