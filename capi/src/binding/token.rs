//! The host accessor's token and the cached-hit lanes: what a leaf keeps
//! so that an element's check is one epoch load and one compare, with no
//! thread-local lookup and no entry into the state.

use super::fastpath::range_in;
use super::host::{current, BINDING_EPOCH};
use super::slot::HIT_LANES;
use super::{CoreHal, CoreSlot};
use neuron_runtime::CoreState;

/// What a host accessor's leaf keeps instead of looking the thread's core
/// up per element: taken at the leaf's fill, while `ctx` was the bound
/// core's open context. While `BINDING_EPOCH` still reads `epoch`, this
/// thread's binding is the one of the fill, so `slot` is live (the guard
/// of `bind` outlives it) and used by this thread only; the element
/// check is then that no entry point holds the
/// state and that the translator's generation is still `generation` (no
/// window reprogrammed, the translator not re-made): one compare with the
/// slot's `open_generation`.
#[cfg(not(target_arch = "xtensa"))]
#[derive(Clone, Copy, Debug)]
pub struct HostToken {
    epoch: u64,
    slot: *const CoreSlot<CoreHal>,
    /// The cached-hit lanes, in `slot`, of the record that maps the
    /// tensor (below `RECORDS`: checked at the fill), which a cached hit
    /// bumps.
    lanes: *const core::cell::Cell<u64>,
    generation: u32,
}

#[cfg(not(target_arch = "xtensa"))]
impl HostToken {
    /// A token that never matches (no epoch is 0).
    pub const NONE: Self = Self { epoch: 0, slot: core::ptr::null(), lanes: core::ptr::null(), generation: 0 };
}

/// The host's cached-pointer check (the device's is `still_mapped`):
/// `t`'s binding unchanged, the state not held, the mapping generation
/// unchanged; a cached hit counts as a hit on the token's record, as the
/// translate it stands for would (in the counter lane of the element's
/// `index`). No thread-local lookup.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
pub fn token_hit(t: &HostToken, index: usize) -> bool {
    if BINDING_EPOCH.load(core::sync::atomic::Ordering::Relaxed) != t.epoch {
        return false;
    }
    // SAFETY: the epoch is the fill's, so this thread's binding is the
    // fill's (every bind and unbind bumps it, and a thread sees its own
    // bumps): `t.slot` is the bound slot, live and used by this thread
    // only (as in `with_core`), bound since the fill read `t.generation`
    // (not 0: a translator's) from it; `t.lanes` are its record's, taken
    // there.
    unsafe { slot_hit(t.slot, t.generation, t.lanes, index) }
}

/// The host's `open_range`: the calling thread's token for `ctx` into
/// `token` and the pointer for `lo` into `nx`, when one record maps
/// `[lo, hi]` (as `open_range`); both left as they were otherwise. No
/// install, no counter; the slot's `open_generation` is set to the
/// generation read (see [`slot_range`]).
// Writes the token and the pointer in place: returned through memory, they
// were stored field by field and loaded back by wider moves, a
// store-forwarding stall of several nanoseconds. Out of line: inlined, it
// grew every accessor's element path (a slower host accessor read).
#[cfg(not(target_arch = "xtensa"))]
#[inline(never)]
pub fn open_token(ctx: *const neuron_runtime::TranslationCtx, lo: u64, hi: u64, token: &core::cell::Cell<HostToken>, nx: &core::cell::Cell<*mut u8>) {
    // Read before the binding: a token never stands for a binding made
    // after its epoch was read.
    let epoch = BINDING_EPOCH.load(core::sync::atomic::Ordering::Relaxed);
    let slot = current();
    if slot.is_null() {
        return;
    }
    // SAFETY: a non-null slot pointer stays valid while the core is bound
    // (as in `with_core`).
    let Some((generation, record, p)) = (unsafe { slot_range(slot, ctx, lo, hi) }) else {
        return;
    };
    // SAFETY: as above; `slot_range` checked `record < RECORDS`.
    let lanes = unsafe { record_lanes(slot, record) };
    token.set(HostToken { epoch, slot, lanes, generation });
    nx.set(p);
}

/// What the C++ accessor's host fast path reads in place per element
/// (the simulator's `NeuronHostElements`): the words [`token_hit`] reads
/// past the binding check, as raw pointers, with the pointer for `lo`
/// (the binding check is the simulator's: it closes the window on every
/// bind and unbind of the thread, `on_rebind`).
#[cfg(not(target_arch = "xtensa"))]
#[derive(Clone, Copy, Debug)]
pub struct HostWindow {
    /// The slot's `open_generation`, and the generation of the window.
    pub open_generation: *const u32,
    pub generation: u32,
    /// The record's [`HIT_LANES`] cached-hit counters.
    pub lanes: *mut u64,
    /// Where SoC `lo` is.
    pub nx: *mut u8,
    /// The slot's lowest stack address (the stack rule's `sp_low`).
    pub sp_low: *mut usize,
}

/// [`open_token`] as raw words for C++ (see [`HostWindow`]): `None` when
/// no core is bound, its state is held, `ctx` is not its context or no
/// one record maps `[lo, hi]`. The binding is read as in `open_token`.
/// `ctx` is the context's address: only compared, never dereferenced.
#[cfg(not(target_arch = "xtensa"))]
#[inline(never)]
pub fn open_host_window(ctx: usize, lo: u64, hi: u64) -> Option<HostWindow> {
    let ctx = core::ptr::without_provenance::<neuron_runtime::TranslationCtx>(ctx);
    let slot = current();
    if slot.is_null() {
        return None;
    }
    // SAFETY: a non-null slot pointer stays valid while the core is bound
    // (as in `with_core`); the simulator closes its windows when the
    // binding changes (`on_rebind`).
    let (generation, record, nx) = unsafe { slot_range(slot, ctx, lo, hi) }?;
    // SAFETY: as above; `slot_range` checked `record < RECORDS`. Only
    // places are computed: the C++ side reads and bumps the cells (plain
    // words, `Cell` being transparent) while no entry point runs.
    unsafe {
        Some(HostWindow {
            open_generation: core::ptr::addr_of!((*slot).open_generation).cast::<u32>(),
            generation,
            lanes: record_lanes(slot, record).cast::<u64>().cast_mut(),
            nx,
            sp_low: core::ptr::addr_of!((*slot).sp_low).cast::<usize>().cast_mut(),
        })
    }
}

/// The cached-hit lanes of `record` in the slot at `p`.
///
/// # Safety
/// `p` points to a live slot and `record < RECORDS`.
#[cfg(not(target_arch = "xtensa"))]
unsafe fn record_lanes<H: neuron_hal::Hal>(p: *const CoreSlot<H>, record: usize) -> *const core::cell::Cell<u64> {
    // SAFETY: the caller's contract: the place and the offset are within
    // the slot's `cached_hits`.
    unsafe { core::ptr::addr_of!((*p).cached_hits).cast::<core::cell::Cell<u64>>().add(record * HIT_LANES) }
}

/// [`token_hit`] past the binding check: whether no entry point holds
/// `p`'s state and the mapping generation is still `generation` (one
/// compare: `CoreSlot::open_generation`); if so, one hit counted in lane
/// `index % HIT_LANES` of `lanes`. Only the cells beside the guard are
/// touched, never the state. Generic over the HAL so the aliasing is
/// checked under Miri on a fake core.
///
/// # Safety
/// `p` points to a live slot that only this thread uses, bound to it
/// since `generation` was read from it by [`slot_range`]; `lanes` is
/// [`record_lanes`] of `p` and a record below `RECORDS`; `generation` is
/// not 0.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
unsafe fn slot_hit<H: neuron_hal::Hal>(p: *const CoreSlot<H>, generation: u32, lanes: *const core::cell::Cell<u64>, index: usize) -> bool {
    // SAFETY: the caller's contract: the slot is live and this thread's;
    // a shared reference to it aliases no `&mut Bound` (the state sits in
    // an `UnsafeCell`, as in `with_core`).
    let s = unsafe { &*p };
    // `open_generation` is not 0 only while no entry point holds the state
    // (`enter_slot` zeroes it right after setting `busy` and sets it right
    // before clearing `busy`; a fill sets it only when `busy` is clear),
    // and `generation` is not 0 (the fill's, a translator's): a match
    // means the mapping is the fill's (the translator's generation changes
    // only inside an entry point, whose exit stores the new one, or with
    // the core unbound, which the caller's epoch check catches).
    if s.open_generation.get() != generation {
        return false;
    }
    // SAFETY: `lanes` starts `HIT_LANES` cells of the live slot (the
    // caller's contract) and the lane is below `HIT_LANES`.
    let c = unsafe { &*lanes.add(index % HIT_LANES) };
    c.set(c.get().wrapping_add(1));
    true
}

/// [`open_token`] on a slot: when no entry point holds `p`'s state and
/// `ctx` is its context, [`range_in`] on its translator (the record
/// checked below `RECORDS`).
///
/// # Safety
/// `p` points to a live slot that only this thread uses.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
unsafe fn slot_range<H: neuron_hal::Hal>(p: *const CoreSlot<H>, ctx: *const neuron_runtime::TranslationCtx, lo: u64, hi: u64) -> Option<(u32, usize, *mut u8)> {
    // SAFETY: the caller's contract; as in `slot_hit`, the state is read
    // only once no entry point holds it, and not written. The platform
    // closure reads the HAL within this call, under the same guard.
    let (generation, record, q) = unsafe {
        if (*p).busy.get() {
            return None;
        }
        let b = core::cell::UnsafeCell::raw_get(core::ptr::addr_of!((*p).bound));
        let state = core::ptr::addr_of_mut!((*b).state);
        let tr = CoreState::translator_of(state);
        if ctx != neuron_runtime::Translator::ctx_of(tr) {
            return None;
        }
        range_in(tr, || neuron_hal::Hal::platform(&*CoreState::hal_of(state)), lo, hi)?
    };
    if record >= neuron_runtime::translate::RECORDS {
        return None;
    }
    // The generation just read with the state not held (see `slot_hit`):
    // a word left stale by a change made while the core was unbound is
    // brought up to date.
    // SAFETY: the caller's contract; a `Cell` beside the guard.
    unsafe { (*p).open_generation.set(generation) };
    Some((generation, record, q))
}

#[cfg(all(test, not(target_arch = "xtensa")))]
mod tests {
    use super::*;
    use crate::binding::{slot::enter_slot, Bound};
    use neuron_hal_mock::FakeHal;
    use std::boxed::Box;

    /// An accessor's token on a fake core (`slot_range` at the fill,
    /// `slot_hit` per element): its raw slot pointer, kept across entry
    /// points that form `&mut Bound`, is still usable after them and
    /// aliases nothing (Miri checks that); while an entry point holds the
    /// state the check refuses without reading it; an install (a new
    /// generation) and a foreign context refuse; each hit is counted on
    /// the token's record.
    #[test]
    fn a_token_is_checked_in_place_across_entry_points() {
        let mut slot = Box::new(CoreSlot::new(Bound::new(CoreState::new(FakeHal::new(3)))));
        // As `bind` does: a raw pointer from the exclusive borrow.
        let p: *const CoreSlot<FakeHal> = &mut *slot;
        // SAFETY: `p` points to the live boxed slot, used by this thread only.
        let s = unsafe { &*p };
        let (ctx, sbuf, hbm) = enter_slot(s, |b| {
            b.state.init_translate_ctx();
            let pf = *neuron_hal::Hal::platform(b.state.hal());
            Ok((b.state.translate_ctx().cast_const(), pf.sbuf_soc_base, pf.hbm_soc_base + (1 << 30)))
        })
        .unwrap();
        // SAFETY: `p` points to the live boxed slot, used by this thread
        // only; `rec` comes from `slot_range` (below `RECORDS`).
        let hit = |g: u32, rec: usize| unsafe { slot_hit(p, g, record_lanes(p, rec), 1) };
        // SAFETY: as above.
        let range = |ctx: *const neuron_runtime::TranslationCtx| unsafe { slot_range(p, ctx, sbuf, sbuf + 255) };
        let (g, rec, _) = range(ctx).expect("SBUF maps the range");
        let mut other = 0u8;
        assert!(range((&mut other as *mut u8).cast_const().cast()).is_none(), "a foreign context");
        assert!(hit(g, rec));
        // An entry point does not fold: the hit waits in its lane.
        assert_eq!(enter_slot(s, |b| Ok(b.state.translator().stats().hits[rec])), Ok(0));
        assert!(hit(g, rec));
        let held = enter_slot(s, |b| {
            b.invocation_status = 1;
            let r = hit(g, rec) || range(ctx).is_some();
            b.invocation_status = 2;
            Ok(r)
        });
        assert_eq!(held, Ok(false));
        assert!(hit(g, rec));
        assert_eq!(enter_slot(s, |b| b.state.translate_miss(hbm).map(|_| ())), Ok(()));
        assert!(!hit(g, rec), "an install is a new generation");
        let (g2, rec2, _) = range(ctx).expect("refilled");
        assert_ne!(g2, g);
        assert!(hit(g2, rec2));
        assert_eq!(slot.get_mut().state.translator().stats().hits[rec], 4, "the cached hits folded in");
        assert_eq!(slot.get().invocation_status, 2);
    }
}
