//! The phase a worker is in (shape function, kernel), in a page shared
//! with the parent (made before the fork): the parent reads it only when
//! a call ends without a result (a crash, a timeout, an interrupt), so
//! the worker announces a phase without a socket write, which would wake
//! the waiting parent twice per call for nothing (issue 28).

use super::shared_page::SharedPage;
use std::io;
use std::sync::atomic::Ordering;

/// One shared byte: the phase (0: none yet).
pub(super) struct Phase {
    page: SharedPage,
}

impl Phase {
    /// A shared page: a forked worker has the same page.
    pub(super) fn new() -> io::Result<Self> {
        Ok(Self { page: SharedPage::new()? })
    }

    /// Enters phase `p` (the worker), or clears it (the parent, 0).
    pub(super) fn set(&self, p: u8) {
        self.page.u8_at(0).store(p, Ordering::SeqCst);
    }

    /// The phase the worker last entered.
    pub(super) fn get(&self) -> u8 {
        self.page.u8_at(0).load(Ordering::SeqCst)
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
