//! The phase a worker is in (shape function, kernel), in a page shared
//! with the parent (made before the fork): the parent reads it only when
//! a call ends without a result (a crash, a timeout, an interrupt), so
//! the worker announces a phase without a socket write, which would wake
//! the waiting parent twice per call for nothing (issue 28).

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU8, Ordering};

/// One shared byte: the phase (0: none yet).
pub(super) struct Phase {
    page: NonNull<AtomicU8>,
}

// SAFETY: the page is owned by this value and read and written only as an
// atomic byte.
unsafe impl Send for Phase {}

const PAGE: usize = 4096;

impl Phase {
    /// A shared anonymous page: a forked worker has the same page.
    pub(super) fn new() -> io::Result<Self> {
        // SAFETY: a fresh shared anonymous mapping at an address the
        // kernel chooses; checked below.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), PAGE, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { page: NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned null"))? })
    }

    fn cell(&self) -> &AtomicU8 {
        // SAFETY: the page is mapped (zeroed, so a valid AtomicU8) for
        // this value's lifetime; it is only ever accessed atomically.
        unsafe { self.page.as_ref() }
    }

    /// Enters phase `p` (the worker), or clears it (the parent, 0).
    pub(super) fn set(&self, p: u8) {
        self.cell().store(p, Ordering::SeqCst);
    }

    /// The phase the worker last entered.
    pub(super) fn get(&self) -> u8 {
        self.cell().load(Ordering::SeqCst)
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        // SAFETY: our own mapping, not used after this.
        unsafe { libc::munmap(self.page.as_ptr().cast(), PAGE) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forked_process_sets_the_phase_the_parent_reads() {
        let p = Phase::new().unwrap();
        p.set(0);
        // SAFETY: the child only stores a byte and `_exit`s.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            p.set(2);
            // SAFETY: ends the child without unwinding.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert_eq!(p.get(), 2);
    }
}
