//! One page shared with a forked worker (mapped before the fork, so both
//! processes see it): the phase byte and the doorbell's counters live in
//! pages of their own, read and written only as atomics.

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicU8};

/// A shared anonymous page of zeros, unmapped when dropped.
pub(super) struct SharedPage {
    at: NonNull<u8>,
}

// SAFETY: the page is owned by this value and accessed only as atomics.
unsafe impl Send for SharedPage {}

const PAGE: usize = 4096;

impl SharedPage {
    pub(super) fn new() -> io::Result<Self> {
        // SAFETY: a fresh shared anonymous mapping at an address the
        // kernel chooses; checked below.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), PAGE, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { at: NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned null"))? })
    }

    /// The byte at `offset` (inside the page), as an atomic.
    pub(super) fn u8_at(&self, offset: usize) -> &AtomicU8 {
        assert!(offset < PAGE);
        // SAFETY: inside the page (checked), which is mapped (zeroed: a
        // valid AtomicU8) for this value's lifetime and only ever
        // accessed atomically.
        unsafe { &*self.at.as_ptr().add(offset).cast::<AtomicU8>() }
    }

    /// The 64-bit word at `offset` (8-aligned, inside the page), as an atomic.
    pub(super) fn u64_at(&self, offset: usize) -> &AtomicU64 {
        assert!(offset.is_multiple_of(8) && offset + 8 <= PAGE);
        // SAFETY: inside the page and 8-aligned (checked; the page is
        // page-aligned), mapped and zeroed for this value's lifetime, only
        // ever accessed atomically.
        unsafe { &*self.at.as_ptr().add(offset).cast::<AtomicU64>() }
    }
}

impl Drop for SharedPage {
    fn drop(&mut self) {
        // SAFETY: our own mapping, not used after this.
        unsafe { libc::munmap(self.at.as_ptr().cast(), PAGE) };
    }
}
