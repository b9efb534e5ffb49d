//! Four counters in a page shared by the parent and its worker (made
//! before the fork): requests posted, replies sent, replies the parent is
//! done with (it reads nothing of that call's memory again), and calls
//! whose output the worker is done filling ahead. Before it blocks on
//! the socket, each side spins a short while (giving the CPU away each
//! turn) for the other's count to reach what it waits for: a side that
//! is not asleep when the other writes to the socket needs no wake-up,
//! and on this VM a wake-up each way cost a small call more than its
//! run (issue 28). A spin that runs out ends in the blocking wait as
//! before: the counters are a hint, the socket carries every message.

use super::shared_page::SharedPage;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a side spins before it blocks: longer than a small call's
/// run, far shorter than anything a person or a timeout notices.
pub(super) const SPIN: Duration = Duration::from_micros(250);

/// The shared page: `posted` at byte 0, `replied` at byte 64, `released`
/// at byte 128, `settled` at byte 192 (apart, so the writers do not share
/// a cache line).
pub(super) struct Doorbell {
    page: SharedPage,
}

impl Doorbell {
    /// A shared page of zeros: a forked worker has the same page.
    pub(super) fn new() -> io::Result<Self> {
        Ok(Self { page: SharedPage::new()? })
    }

    /// Requests the parent has sent (it stores the count after each send).
    pub(super) fn posted(&self) -> &AtomicU64 {
        self.page.u64_at(0)
    }

    /// Replies the worker has sent (it stores the count after each reply).
    pub(super) fn replied(&self) -> &AtomicU64 {
        self.page.u64_at(64)
    }

    /// Replies the parent is done with: it stores the count when a call
    /// ends, after it last read that call's output.
    pub(super) fn released(&self) -> &AtomicU64 {
        self.page.u64_at(128)
    }

    /// Calls after which the worker no longer writes the call memory
    /// before the next request: it stores the count once its fill ahead
    /// of that call's output place is done (or skipped). The parent
    /// writes the next call's arguments over that place only after it.
    pub(super) fn settled(&self) -> &AtomicU64 {
        self.page.u64_at(192)
    }
}

/// Spins, giving the CPU to whatever else can run each turn, until
/// `count` reaches `target` or `SPIN` has passed: whether it did.
pub(super) fn spin_until(count: &AtomicU64, target: u64) -> bool {
    let start = Instant::now();
    loop {
        if count.load(Ordering::Acquire) >= target {
            return true;
        }
        if start.elapsed() >= SPIN {
            return false;
        }
        // SAFETY: sched_yield has no preconditions.
        unsafe { libc::sched_yield() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forked_process_rings_and_the_spin_hears_it_or_gives_up() {
        let d = Doorbell::new().unwrap();
        assert!(!spin_until(d.replied(), 1), "nobody replied: the spin runs out");
        // SAFETY: the child only waits on and stores into the shared page,
        // then `_exit`s.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let heard = (0..4000).any(|_| spin_until(d.posted(), 1));
            d.replied().store(if heard { 1 } else { 2 }, Ordering::Release);
            // SAFETY: ends the child without unwinding.
            unsafe { libc::_exit(0) };
        }
        d.posted().store(1, Ordering::Release);
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert_eq!(d.replied().load(Ordering::Acquire), 1);
    }
}
