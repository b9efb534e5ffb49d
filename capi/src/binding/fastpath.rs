//! The translate fast path: the hit that does not enter the core's state
//! (no `with_core`), read in place while no entry point holds it. The
//! device compares `ctx` with its open translator; the host with the
//! translator of the core bound to the thread.

#[cfg(target_arch = "xtensa")]
use super::device::open_translator;
#[cfg(not(target_arch = "xtensa"))]
use super::{host::current, CoreHal, CoreSlot};
#[cfg(not(target_arch = "xtensa"))]
use neuron_runtime::CoreState;

/// The translate hit path, without entering the core's state: when `ctx`
/// is the calling core's context and no entry point holds the state, the
/// lookup reads the context in place. Pure arithmetic (plus, on the host,
/// the per-record hit counter); `None` sends the caller to the full path
/// (a miss, a foreign context, no core, re-entry), which reports errors.
/// What the in-place probe of `neuron_translate` found.
pub enum Probe {
    /// A hit: the pointer.
    Hit(*mut u8),
    /// `ctx` is this core's open context and no record maps the address:
    /// the miss path can install without looking up again (the device's
    /// probe; the host's sends everything but a hit to the full path).
    #[cfg_attr(not(target_arch = "xtensa"), allow(dead_code))]
    Unmapped,
    /// Anything else (a foreign or closed context, the SBUF end): the full
    /// path decides and reports.
    Slow,
}

/// The device's probe (see [`translate_hit`]): the hit table inline, the
/// scan out of line.
#[cfg(target_arch = "xtensa")]
#[inline(always)]
pub fn translate_probe(ctx: *const neuron_runtime::TranslationCtx, addr: u64) -> Probe {
    let open = open_translator();
    if ctx.addr() != open || open == 0 {
        return Probe::Slow;
    }
    let t = core::ptr::with_exposed_provenance_mut::<neuron_runtime::Translator>(open);
    // SAFETY: `open` is this core's translator, exposed by `with_core`,
    // which sets it only while no entry point holds the state (it is 0
    // otherwise): nothing mutates the translator while the table is read.
    // The translator lives in a static.
    match unsafe { neuron_runtime::Translator::table_hit_in_place(t, addr) } {
        Some(q) => Probe::Hit(q),
        // SAFETY: as above.
        None => unsafe { probe_scan(t, addr) },
    }
}

/// The device probe past the hit table: the records' scan, and the hit
/// put in the table for the next time.
///
/// # Safety
/// `t` is this core's open translator (as in [`translate_probe`]): no
/// entry point holds the state, so no reference to it exists.
#[cfg(target_arch = "xtensa")]
#[inline(never)]
unsafe fn probe_scan(t: *mut neuron_runtime::Translator, addr: u64) -> Probe {
    // SAFETY: the caller's contract: the context is read through a
    // shared borrow that ends before the refill borrows the table.
    let (i, q) = match unsafe { (*neuron_runtime::Translator::ctx_of(t)).lookup_all(addr) } {
        Some(hit) => hit,
        None => return Probe::Unmapped,
    };
    // SAFETY: as above.
    if neuron_runtime::Translator::past_sbuf_on(unsafe { &*neuron_runtime::Translator::ctx_of(t) }, || &DEVICE_PLATFORM, i, addr) {
        return Probe::Slow;
    }
    // SAFETY: the caller's contract; no borrow of the translator is live.
    unsafe { neuron_runtime::Translator::refill_in_place(t, &DEVICE_PLATFORM, i, addr) };
    Probe::Hit(q)
}

/// The host's probe: the hit path, everything else on the full path.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
pub fn translate_probe(ctx: *const neuron_runtime::TranslationCtx, addr: u64) -> Probe {
    translate_hit(ctx, addr).map_or(Probe::Slow, Probe::Hit)
}

/// The platform table the device binding uses.
#[cfg(all(target_arch = "xtensa", feature = "qemu"))]
const DEVICE_PLATFORM: neuron_hal::Platform = neuron_hal::QEMU;
/// The platform table the device binding uses.
#[cfg(all(target_arch = "xtensa", not(feature = "qemu")))]
const DEVICE_PLATFORM: neuron_hal::Platform = neuron_hal::Q7;

/// The slot of the core bound to this thread, when one is and no entry
/// point holds its state: the check every host hit path starts with.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
fn open_slot() -> Option<*mut CoreSlot<CoreHal>> {
    let p = current();
    // SAFETY: a non-null slot pointer stays valid while the core is bound
    // (as in `with_core`); only its `Cell` is read.
    (!p.is_null() && unsafe { !(*p).busy.get() }).then_some(p)
}

/// The hit for `addr` on `state`'s translator when `ctx` is its
/// context's address (compared, never followed), counted in place; `None` otherwise (a miss, a foreign context, SBUF's
/// end), which sends the caller to the full path.
///
/// # Safety
/// `state` is the state of an open slot ([`open_slot`]): no entry point
/// holds a reference to it, so plain fields are read and the hit counter
/// bumped through the raw pointer.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
unsafe fn hit_in_place(state: *mut CoreState<CoreHal>, ctx: usize, addr: u64) -> Option<*mut u8> {
    // SAFETY: the caller's contract; only places are computed, and the
    // state's own context and HAL are borrowed shared for the lookup.
    unsafe {
        let t = CoreState::translator_of(state);
        if ctx != neuron_runtime::Translator::ctx_of(t).addr() {
            return None;
        }
        let own = &*neuron_runtime::Translator::ctx_of(t);
        let (i, q) = own.lookup(addr)?;
        if neuron_runtime::Translator::past_sbuf(own, &*CoreState::hal_of(state), i, addr) {
            return None;
        }
        // `i` is a record the lookup returned: below RECORDS.
        neuron_runtime::Translator::count_hit_in_place(t, i);
        Some(q)
    }
}

/// Runs `f` on the HAL of the core bound to this thread while no entry
/// point holds its state (the host accessors' element hooks); nothing
/// when none is bound or it is held. The core is busy while `f` runs: an
/// entry point `f` calls is refused (`Reentered`).
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
pub fn with_open_hal(f: impl FnOnce(&CoreHal)) {
    if let Some(p) = open_slot() {
        // SAFETY: the slot is open (`open_slot`): no `&mut` to its state
        // exists; only a shared reference to its HAL (interior mutability)
        // is formed, for the call, while the slot is marked busy.
        unsafe { hold_hal(p, f) };
    }
}

/// Notes the stack depth and runs `f` on the open slot `p`'s HAL with the
/// slot marked busy; returns the slot's state.
///
/// # Safety
/// `p` is an open slot ([`open_slot`]).
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
unsafe fn hold_hal(p: *mut CoreSlot<CoreHal>, f: impl FnOnce(&CoreHal)) -> *mut CoreState<CoreHal> {
    // SAFETY: the caller's contract: the slot pointer is valid and no
    // reference to the state exists; the HAL is lent shared (interior
    // mutability) while `busy` refuses every entry point.
    unsafe {
        // The element hooks are where a C++ kernel calls the library
        // most: its stack depth is noted here, not on every translate.
        (*p).note_sp();
        let b = (*p).bound.get();
        let state = core::ptr::addr_of_mut!((*b).state);
        let _held = Held::new(&(*p).busy);
        f(&*CoreState::hal_of(state));
        state
    }
}

/// Marks a slot busy while a closure holds its HAL (`with_open_hal`, the
/// note of `noted_translate_hit`): an entry point it calls is refused
/// with `Reentered` instead of forming a `&mut Bound` beside the `&HAL`.
/// Cleared on drop, so also when the closure unwinds.
#[cfg(not(target_arch = "xtensa"))]
struct Held<'a>(&'a core::cell::Cell<bool>);

#[cfg(not(target_arch = "xtensa"))]
impl<'a> Held<'a> {
    /// Sets `busy` (the caller checked it was clear).
    #[inline(always)]
    fn new(busy: &'a core::cell::Cell<bool>) -> Self {
        busy.set(true);
        Self(busy)
    }
}

#[cfg(not(target_arch = "xtensa"))]
impl Drop for Held<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// The host accessors' element hooks in one binding lookup: `note` on the
/// HAL of the core bound to this thread (as [`with_open_hal`], the stack
/// depth noted too), then [`translate_hit`] on the same core. `None` when
/// no core is bound or its state is held (nothing noted, as
/// `with_open_hal`), or after the note when the hit path does not answer:
/// the caller then takes the full translate, which notes nothing.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
pub fn noted_translate_hit(ctx: *const neuron_runtime::TranslationCtx, addr: u64, note: impl FnOnce(&CoreHal)) -> Option<*mut u8> {
    let p = open_slot()?;
    // SAFETY: the slot is open (`open_slot`); the note's shared borrow of
    // the HAL ends (and the slot is free again) before the hit reads the
    // translator in place.
    unsafe { hit_in_place(hold_hal(p, note), ctx.addr(), addr) }
}

/// The host's hit path (the core bound to this thread).
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
pub fn translate_hit(ctx: *const neuron_runtime::TranslationCtx, addr: u64) -> Option<*mut u8> {
    let p = open_slot()?;
    // SAFETY: the slot is open (`open_slot`), so its state is read in
    // place with no reference to it formed.
    unsafe { hit_in_place(core::ptr::addr_of_mut!((*(*p).bound.get()).state), ctx.addr(), addr) }
}

/// The accessors' cached-pointer check: whether `ctx` is the calling
/// core's open context (no entry point holds the state) and its mapping
/// generation is still `generation`, so that a pointer found through it at
/// that generation still shows the same memory. Pure reads of the
/// translator in place.
#[cfg(target_arch = "xtensa")]
#[inline(always)]
pub fn still_mapped(ctx: core::ptr::NonNull<neuron_runtime::TranslationCtx>, generation: u32, _record: usize) -> bool {
    let open = open_translator();
    // `ctx` is not null, so neither is `open` past this test.
    if ctx.addr().get() != open {
        return false;
    }
    let t = core::ptr::with_exposed_provenance::<neuron_runtime::Translator>(open);
    // SAFETY: as in `translate_probe`: `open` is this core's translator,
    // exposed by `with_core`, and nothing mutates it while it is open.
    unsafe { neuron_runtime::Translator::generation_in_place(t) == generation }
}

/// What an accessor caches: the generation, the record that maps the
/// whole range `[lo, hi]` (both ends hit it, `hi` not past the end of
/// SBUF) and the pointer for `lo`; `None` when `ctx` is not the calling
/// core's open context, no single record maps the range, or the
/// generation is exhausted. No side effect (no install, no counter).
/// (The host's is `open_token`.)
#[cfg(target_arch = "xtensa")]
#[inline(never)]
pub fn open_range(ctx: *const neuron_runtime::TranslationCtx, lo: u64, hi: u64) -> Option<(u32, usize, *mut u8)> {
    let open = open_translator();
    if ctx.addr() != open || open == 0 {
        return None;
    }
    let t = core::ptr::with_exposed_provenance::<neuron_runtime::Translator>(open);
    // SAFETY: as in `still_mapped`.
    unsafe { range_in(t, || &DEVICE_PLATFORM, lo, hi) }
}

/// [`open_range`] on a translator. The platform table is asked for only
/// when the range is in SBUF (`Translator::past_sbuf_on`): on the host it
/// is two dependent loads through the HAL, most of a leaf fill's time when
/// they were made for every range.
///
/// # Safety
/// `t` is live and nothing mutates it during the call.
pub(super) unsafe fn range_in<'a>(
    t: *const neuron_runtime::Translator,
    platform: impl FnOnce() -> &'a neuron_hal::Platform,
    lo: u64,
    hi: u64,
) -> Option<(u32, usize, *mut u8)> {
    // SAFETY: the caller's contract; shared reads only.
    let c = unsafe { &*neuron_runtime::Translator::ctx_of(t) };
    let (i, p) = c.lookup(lo)?;
    let (j, _) = c.lookup(hi)?;
    if i != j || neuron_runtime::Translator::past_sbuf_on(c, platform, j, hi) {
        return None;
    }
    // SAFETY: as above.
    let g = unsafe { neuron_runtime::Translator::generation_in_place(t) };
    (g != neuron_runtime::translate::GENERATION_EXHAUSTED).then_some((g, i, p))
}
