//! `CoreSlot`: where a core's [`Bound`] lives, with the re-entry guard
//! beside it, and `enter_slot`, the guard every entry point passes.
//! Host only: the cached-hit lanes the accessors count into, folded into
//! the translator's counts where they are read.

use super::Bound;
use neuron_runtime::{CoreState, Error};

/// Where a core's [`Bound`] lives, with the re-entry guard *beside* it:
/// the guard is checked through a shared reference before any `&mut
/// Bound` is formed, so a re-entered call never aliases the live one.
pub struct CoreSlot<H: neuron_hal::Hal> {
    /// Set while an entry point holds the state.
    pub(super) busy: core::cell::Cell<bool>,
    /// Set by a refused re-entry; the holder records `Reentered` when it
    /// returns (the refused call may not touch the held state).
    pub(super) reentered: core::cell::Cell<bool>,
    /// Host: the translator's mapping generation as last seen while no
    /// entry point held the state (by an entry point's exit or an
    /// accessor's fill), 0 while one holds it (no generation is 0). The
    /// accessors' cached check compares this one word, beside the guard,
    /// instead of reading `busy` and the translator.
    #[cfg(not(target_arch = "xtensa"))]
    pub(super) open_generation: core::cell::Cell<u32>,
    /// Host: the accessors' cached hits not yet in the translator's
    /// counts, [`HIT_LANES`] per record (`record * HIT_LANES + lane`). One
    /// counter per record made every cached element a read-modify-write
    /// of the same word, a store-forwarding chain that was most of a
    /// host element's time; the lanes (picked by the element's index) are
    /// independent chains. Folded into the translator's counts where the
    /// counts are read: by the owner's `get_mut` (`SimCore::state`, the
    /// simulator's report and run restart), not by every entry point (a
    /// check of twenty words per call, and a fold after every cached hit:
    /// a sixth of the host stream's fixed cost). Nothing inside an entry
    /// point reads the counts but tests (`with_core_exact`).
    #[cfg(not(target_arch = "xtensa"))]
    pub(super) cached_hits: [core::cell::Cell<u64>; CACHED_HIT_CELLS],
    /// Host: the lowest stack address an entry point or an element hook
    /// was called at since [`take_sp_low`](Self::take_sp_low): the depth of
    /// the kernel's own frames when it calls the library (the simulator's
    /// stack rule; the painted high water also counts the host runtime's
    /// frames, which are not the device's).
    #[cfg(not(target_arch = "xtensa"))]
    pub(super) sp_low: core::cell::Cell<usize>,
    pub(super) bound: core::cell::UnsafeCell<Bound<H>>,
}

/// Host: lanes of each record's cached-hit counter (see
/// `CoreSlot::cached_hits`).
#[cfg(not(target_arch = "xtensa"))]
pub const HIT_LANES: usize = 4;
#[cfg(not(target_arch = "xtensa"))]
pub(super) const CACHED_HIT_CELLS: usize = neuron_runtime::translate::RECORDS * HIT_LANES;

impl<H: neuron_hal::Hal> CoreSlot<H> {
    /// A slot holding `bound`, not busy (host; the device builds its
    /// static in place with [`CoreSlot::init_in_place`]).
    #[cfg_attr(target_arch = "xtensa", allow(dead_code))]
    pub const fn new(bound: Bound<H>) -> Self {
        Self {
            busy: core::cell::Cell::new(false),
            reentered: core::cell::Cell::new(false),
            #[cfg(not(target_arch = "xtensa"))]
            open_generation: core::cell::Cell::new(0),
            #[cfg(not(target_arch = "xtensa"))]
            cached_hits: [const { core::cell::Cell::new(0) }; CACHED_HIT_CELLS],
            #[cfg(not(target_arch = "xtensa"))]
            sp_low: core::cell::Cell::new(usize::MAX),
            bound: core::cell::UnsafeCell::new(bound),
        }
    }

    /// Host: notes the caller's stack depth (see `sp_low`).
    #[cfg(not(target_arch = "xtensa"))]
    #[inline(always)]
    pub(super) fn note_sp(&self) {
        let marker = 0u8;
        let sp = core::ptr::addr_of!(marker).addr();
        if sp < self.sp_low.get() {
            self.sp_low.set(sp);
        }
    }

    /// Host: the lowest stack address noted since the last call (usize::MAX
    /// when none), and starts a new count.
    #[cfg(not(target_arch = "xtensa"))]
    pub fn take_sp_low(&self) -> usize {
        self.sp_low.replace(usize::MAX)
    }

    /// Writes `CoreSlot::new(Bound::new(CoreState::new(hal)))` into `*p`
    /// in place (see [`CoreState::init_in_place`]): not busy, no error.
    ///
    /// # Safety
    /// As [`CoreState::init_in_place`]: `p` is valid for writes, aligned,
    /// all of `*p` is zeroed memory, and no reference to it is live.
    #[cfg_attr(not(target_arch = "xtensa"), allow(dead_code))]
    pub unsafe fn init_in_place(p: *mut Self, hal: H) {
        // SAFETY: the caller's contract; each field place is written once,
        // the state through its own in-place constructor (same contract).
        unsafe {
            core::ptr::addr_of_mut!((*p).busy).write(core::cell::Cell::new(false));
            core::ptr::addr_of_mut!((*p).reentered).write(core::cell::Cell::new(false));
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*p).open_generation).write(core::cell::Cell::new(0));
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*p).cached_hits).write([const { core::cell::Cell::new(0) }; CACHED_HIT_CELLS]);
            let b = core::cell::UnsafeCell::raw_get(core::ptr::addr_of!((*p).bound));
            CoreState::init_in_place(core::ptr::addr_of_mut!((*b).state), hal);
            core::ptr::addr_of_mut!((*b).last_error).write(0);
            core::ptr::addr_of_mut!((*b).errors).write(neuron_runtime::ErrorLog::new());
            core::ptr::addr_of_mut!((*b).invocation_status).write(0);
            core::ptr::addr_of_mut!((*b).cpu_queried).write(false);
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*b).empty_fill).write(0);
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*b).launch_stack).write((0, 0));
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*b).unoptimised_kernel).write(false);
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*b).sites).write(std::vec::Vec::new());
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*b).pending_detail).write(None);
            // The view is left as found: zeroes, its value in `Bound::new`.
        }
        #[allow(dead_code)]
        fn all_fields<H: neuron_hal::Hal>(b: &Bound<H>) {
            #[cfg(target_arch = "xtensa")]
            let Bound { state: _, last_error: _, errors: _, invocation_status: _, cpu_queried: _, view: _ } = b;
            #[cfg(not(target_arch = "xtensa"))]
            let Bound {
                state: _,
                last_error: _,
                errors: _,
                invocation_status: _,
                cpu_queried: _,
                empty_fill: _,
                launch_stack: _,
                unoptimised_kernel: _,
                sites: _,
                pending_detail: _,
            } = b;
        }
    }

    /// The state, through exclusive access to the slot (host: `SimCore`),
    /// its counts exact (the cached hits folded in).
    #[cfg_attr(target_arch = "xtensa", allow(dead_code))]
    pub fn get_mut(&mut self) -> &mut Bound<H> {
        let b = self.bound.get_mut();
        #[cfg(not(target_arch = "xtensa"))]
        fold_cached_hits(&self.cached_hits, b);
        b
    }

    /// The state, the slot dropped (host: `SimCore` stood up afresh on
    /// the same hardware).
    #[cfg(not(target_arch = "xtensa"))]
    pub fn into_bound(self) -> Bound<H> {
        self.bound.into_inner()
    }

    /// The state, shared (host: `SimCore`). Its translate hit counts may
    /// lack the accessors' cached hits not yet folded in: read counts
    /// through [`CoreSlot::get_mut`].
    #[cfg_attr(target_arch = "xtensa", allow(dead_code))]
    pub fn get(&self) -> &Bound<H> {
        debug_assert!(!self.busy.get(), "core slot read while an entry point holds it");
        // SAFETY: a `&mut Bound` only exists inside `with_core`, reached
        // through the binding while the slot's owner is mutably borrowed
        // (`SimCore::enter`), so none is live while `&self` is.
        unsafe { &*self.bound.get() }
    }
}

/// [`with_core`] on a given slot: the re-entry check, then `f` on the
/// state, then the error bookkeeping. Generic over the HAL so the guard
/// is tested on a fake core (under Miri too).
pub(super) fn enter_slot<H: neuron_hal::Hal, R>(slot: &CoreSlot<H>, f: impl FnOnce(&mut Bound<H>) -> Result<R, Error>) -> Result<R, Error> {
    if slot.busy.replace(true) {
        slot.reentered.set(true);
        return Err(Error::Reentered);
    }
    #[cfg(not(target_arch = "xtensa"))]
    slot.note_sp();
    #[cfg(target_arch = "xtensa")]
    super::device::set_open_translator(0);
    #[cfg(not(target_arch = "xtensa"))]
    slot.open_generation.set(0);
    // SAFETY: `busy` was false and is now true: no other `&mut Bound` to
    // this slot exists, and none is formed until it is false again.
    let b = unsafe { &mut *slot.bound.get() };
    // No panic crosses the C ABI: one in the runtime becomes the abort
    // report (on the device the panic handler does this).
    #[cfg(not(target_arch = "xtensa"))]
    let r = match crate::abort::catch_panic(|| f(&mut *b)) {
        Ok(r) => r,
        Err(c) => {
            slot.busy.set(false);
            crate::abort::abort_panic(c)
        }
    };
    #[cfg(target_arch = "xtensa")]
    let r = f(&mut *b);
    if slot.reentered.replace(false) {
        b.record(Error::Reentered);
    }
    if let Err(e) = &r {
        b.record(*e);
    }
    // The translator's address, exposed: the hit path turns the `ctx`
    // integer it is given back into a pointer with this provenance.
    #[cfg(target_arch = "xtensa")]
    // SAFETY: `b.state` is live; only its translator's address is taken.
    super::device::set_open_translator(unsafe { CoreState::translator_of(core::ptr::addr_of_mut!(b.state)) }.expose_provenance());
    #[cfg(not(target_arch = "xtensa"))]
    slot.open_generation.set(b.state.translator().generation());
    slot.busy.set(false);
    r
}

/// Moves the accessors' cached hits of `lanes` into `b`'s translate
/// counts (host): afterwards the counts are exact and the lanes zero.
#[cfg(not(target_arch = "xtensa"))]
pub(super) fn fold_cached_hits<H: neuron_hal::Hal>(lanes: &[core::cell::Cell<u64>; CACHED_HIT_CELLS], b: &mut Bound<H>) {
    if lanes.iter().fold(0, |a, c| a | c.get()) != 0 {
        fold_nonzero(lanes, b);
    }
}

#[cfg(not(target_arch = "xtensa"))]
#[inline(never)]
fn fold_nonzero<H: neuron_hal::Hal>(lanes: &[core::cell::Cell<u64>; CACHED_HIT_CELLS], b: &mut Bound<H>) {
    for (record, lanes) in lanes.as_chunks::<HIT_LANES>().0.iter().enumerate() {
        let n: u64 = lanes.iter().map(|c| c.take()).sum();
        if n != 0 {
            b.state.count_translate_hits(record, n);
        }
    }
}

#[cfg(all(test, not(target_arch = "xtensa")))]
mod tests {
    use super::*;
    use neuron_hal_mock::FakeHal;
    use std::boxed::Box;

    /// A call made from inside another on the same core is refused before
    /// it touches the state (no second `&mut`: Miri checks that), and the
    /// holder records `Reentered` when it returns; the slot is usable after.
    #[test]
    fn reentry_is_refused_without_aliasing_and_recorded() {
        let slot = Box::new(CoreSlot::new(Bound::new(CoreState::new(FakeHal::new(3)))));
        let r = enter_slot(&slot, |outer| {
            outer.invocation_status = 7;
            let inner = enter_slot(&slot, |b| {
                b.invocation_status = 99;
                Ok(())
            });
            assert_eq!(inner, Err(Error::Reentered));
            // The held state was not touched by the refused call.
            assert_eq!(outer.invocation_status, 7);
            Ok(5)
        });
        assert_eq!(r, Ok(5));
        assert_eq!(slot.get().last_error, Error::Reentered.code());
        assert_eq!(slot.get().errors.entries(), &[Error::Reentered]);
        assert_eq!(enter_slot(&slot, |b| Ok(b.invocation_status)), Ok(7));
        let e = enter_slot(&slot, |_| Err::<(), _>(Error::DmaFault));
        assert_eq!(e, Err(Error::DmaFault));
        assert_eq!(slot.get().errors.entries(), &[Error::Reentered, Error::DmaFault]);
    }
}
