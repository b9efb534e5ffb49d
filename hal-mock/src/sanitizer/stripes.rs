//! How several cores' hooks change one region's element states without a
//! locked read-modify-write per element: a lock per stripe of states,
//! held over a hook's range, under which a state's writer bits are set by
//! a plain load and store.

use super::UNWRITTEN;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

/// States per stripe lock: a 4 KiB DMA's 1024 floats take one.
pub(super) const STRIPE: usize = 4096;

/// The stripe locks of one region's states.
#[derive(Debug)]
pub(super) struct Stripes(Box<[AtomicBool]>);

/// Stripes of a region held by one hook (released when dropped).
pub(super) struct Held<'a>(&'a [AtomicBool]);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        for l in self.0 {
            l.store(false, Ordering::Release);
        }
    }
}

impl Stripes {
    /// The locks of `n` states.
    pub(super) fn for_states(n: usize) -> Self {
        Self((0..n.div_ceil(STRIPE)).map(|_| AtomicBool::new(false)).collect())
    }

    /// The stripes over states `[lo, hi]`, locked in order (so two hooks
    /// never wait on each other in a cycle).
    pub(super) fn hold(&self, lo: u64, hi: u64) -> Option<Held<'_>> {
        let (a, b) = (lo as usize / STRIPE, (hi as usize / STRIPE).min(self.0.len().saturating_sub(1)));
        let locks = self.0.get(a..=b)?;
        for l in locks {
            let mut spins = 0u32;
            while l.swap(true, Ordering::Acquire) {
                // Held briefly (a few thousand states); more threads than
                // host cores: after a short spin, let the holder run.
                spins += 1;
                if spins < 64 {
                    core::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
        Some(Held(locks))
    }
}

/// Adds writer bits `bits` to each state of `states` (a contiguous range
/// of elements one hook wrote), under [`Stripes::hold`] unless
/// `one_writer`: how many were [`UNWRITTEN`] before.
pub(super) fn mark_range(states: &[AtomicU16], bits: u16, one_writer: bool) -> u64 {
    let mut fresh = 0u64;
    if !one_writer {
        // Other threads load states meanwhile: atomic loads and stores
        // (plain moves), not a plain slice.
        for s in states {
            fresh += u64::from(s.load(Ordering::Relaxed) == UNWRITTEN);
            mark(s, bits);
        }
        return fresh;
    }
    // SAFETY: AtomicU16 has u16's size and alignment; with one writer (a
    // one-core run, the host waiting) no other thread touches the states
    // while this plain view lives. A plain or over the range is
    // vectorised: a 4 KiB DMA's 1024 states in a few dozen instructions,
    // not a load and a store each.
    let plain = unsafe { core::slice::from_raw_parts_mut(states.as_ptr().cast_mut().cast::<u16>(), states.len()) };
    // Two passes, each vectorised (one loop doing both is not).
    fresh += plain.iter().fold(0u32, |n, &s| n + u32::from(s == UNWRITTEN)) as u64;
    for s in plain {
        *s |= bits;
    }
    fresh
}

/// Adds the writer bits `bits` to an element's state: a load and a store,
/// as the only thread that changes it now (one writer, or under
/// [`Stripes::hold`]).
#[inline]
pub(super) fn mark(state: &AtomicU16, bits: u16) {
    let v = state.load(Ordering::Relaxed);
    if v & bits != bits {
        state.store(v | bits, Ordering::Relaxed);
    }
}
