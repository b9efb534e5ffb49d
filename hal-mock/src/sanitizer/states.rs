//! A watched region's element states, and the one allocation of them a
//! sanitizer keeps between runs. A simulator that serves many runs (a
//! Python op's worker) watches an output of the same size each call:
//! faulting fresh zeroed pages in for its states cost more than the
//! kernel's marking of them (a 1 Mi-element output: ~0.3 ms of a 2 ms
//! call, issue 28). A region's states go back to the spare when the
//! region ends, zeroed then (a serving simulator's reset, after its reply:
//! not on the next run's way), and the next large region takes them.

use super::UNWRITTEN;
use core::ops::Deref;
use std::boxed::Box;
use std::sync::atomic::AtomicU16;
use std::sync::{Arc, Mutex, Weak};

/// States of at least this many bytes are kept for reuse; smaller ones
/// are cheap to make.
const REUSE_BYTES: usize = 1 << 20;
/// The largest states kept while no region uses them (64 MiB: a 32
/// Mi-element output's); a larger one goes back to the system.
const SPARE_MAX_BYTES: usize = 64 << 20;

/// The allocation a sanitizer keeps for its next large region: every
/// state in it [`UNWRITTEN`].
type Kept = Mutex<Option<Box<[AtomicU16]>>>;
pub(super) type Spare = Arc<Kept>;

/// `n` element states, all [`UNWRITTEN`].
#[derive(Debug)]
pub(super) struct States {
    /// At least `n` states: the first `n` are the region's.
    buf: Box<[AtomicU16]>,
    n: usize,
    /// Where `buf` goes when the region ends (a large one only).
    spare: Option<Weak<Kept>>,
}

impl States {
    /// `n` unwritten states: for a large region, the spare's allocation
    /// when it is large enough (and not more than twice the need),
    /// else a fresh one.
    pub(super) fn new(n: usize, spare: &Spare) -> Self {
        if n * 2 < REUSE_BYTES {
            return Self { buf: fresh(n), n, spare: None };
        }
        let kept = spare.lock().unwrap_or_else(|e| e.into_inner()).take_if(|b| b.len() >= n && b.len() <= 2 * n);
        Self { buf: kept.unwrap_or_else(|| fresh(n)), n, spare: Some(Arc::downgrade(spare)) }
    }
}

impl Deref for States {
    type Target = [AtomicU16];
    fn deref(&self) -> &[AtomicU16] {
        &self.buf[..self.n]
    }
}

impl Drop for States {
    fn drop(&mut self) {
        let Some(spare) = self.spare.as_ref().and_then(Weak::upgrade) else { return };
        if self.buf.len() * 2 > SPARE_MAX_BYTES {
            return;
        }
        let mut s = spare.lock().unwrap_or_else(|e| e.into_inner());
        // The larger of the two is kept: it serves either size again.
        if s.as_ref().is_none_or(|b| b.len() <= self.buf.len()) {
            // Owned here alone: plain stores, one vectorised pass over
            // what the region used (the rest was never marked).
            self.buf[..self.n].iter_mut().for_each(|s| *s.get_mut() = UNWRITTEN);
            *s = Some(core::mem::take(&mut self.buf));
        }
    }
}

/// `n` states, all [`UNWRITTEN`], in zeroed memory the allocator maps
/// fresh for a large region (calloc: no pass writing zeros, each page
/// faulted in when first marked). Not on huge pages: on a VM that hands
/// free memory back to its host, a huge page faulted in cold cost 5-10 ms
/// per MiB here (a 64 MiB output's states: 150-400 ms), 4 KiB pages
/// 0.4 ms per MiB.
fn fresh(n: usize) -> Box<[AtomicU16]> {
    let zeroed: Box<[u16]> = std::vec![UNWRITTEN; n].into_boxed_slice();
    // A large region's states (an output's, a scratch tensor's: written
    // whole) faulted in by one call, not a fault per page as the hooks
    // first mark each (about half the time of those faults here).
    if n * 2 >= REUSE_BYTES {
        const PAGE: usize = 4096;
        let (at, end) = (zeroed.as_ptr() as usize, zeroed.as_ptr() as usize + n * 2);
        let (lo, hi) = (at.next_multiple_of(PAGE), end & !(PAGE - 1));
        if hi > lo {
            // SAFETY: whole pages inside this allocation, which it owns;
            // MADV_POPULATE_WRITE only faults them in (zeros stay zeros).
            let _ = unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_POPULATE_WRITE) };
        }
    }
    // SAFETY: AtomicU16 has u16's size, alignment and bit validity, so
    // the slice's allocation and layout are the same.
    unsafe { Box::from_raw(Box::into_raw(zeroed) as *mut [AtomicU16]) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    const BIG: usize = REUSE_BYTES / 2;

    #[test]
    fn a_large_regions_states_are_reused_unwritten_and_a_small_ones_are_not() {
        let spare = Spare::default();
        let a = States::new(BIG + 10, &spare);
        let at = a.as_ptr();
        a[5].store(3, Ordering::Relaxed);
        a[BIG - 1].store(7, Ordering::Relaxed);
        drop(a);
        let b = States::new(BIG, &spare);
        assert_eq!((b.as_ptr(), b.len()), (at, BIG), "the same allocation, the new length");
        assert!(b.iter().all(|s| s.load(Ordering::Relaxed) == UNWRITTEN));
        // In use: the next region gets its own.
        let c = States::new(BIG, &spare);
        assert_ne!(c.as_ptr(), at);
        drop((b, c));
        let small = States::new(8, &spare);
        assert_eq!(small.len(), 8);
        assert!(small.spare.is_none());
    }

    #[test]
    fn a_spare_more_than_twice_the_need_is_left_for_a_larger_region() {
        let spare = Spare::default();
        let a = States::new(3 * BIG, &spare);
        let at = a.as_ptr();
        drop(a);
        let b = States::new(BIG, &spare);
        assert_ne!(b.as_ptr(), at);
        assert_eq!(States::new(2 * BIG, &spare).as_ptr(), at);
    }

    #[test]
    fn states_that_outlive_their_sanitizer_are_freed() {
        let spare = Spare::default();
        let a = States::new(BIG, &spare);
        let kept = Arc::downgrade(&spare);
        drop(spare);
        // The sanitizer (the spare's one owner) is gone: the region holds
        // no strong reference that would keep the spare, and its states
        // have nowhere to go back to.
        assert!(kept.upgrade().is_none(), "the region kept the sanitizer's spare alive");
        assert!(a.spare.as_ref().is_some_and(|w| w.upgrade().is_none()));
        // Dropped without a spare: freed, not kept (nothing to observe them
        // but a new spare, which starts empty).
        drop(a);
        let fresh_spare = Spare::default();
        assert!(fresh_spare.lock().unwrap().is_none());
        let b = States::new(BIG, &fresh_spare);
        assert!(b.iter().all(|s| s.load(Ordering::Relaxed) == UNWRITTEN));
    }
}
