//! The translate both surfaces use: `neuron_translate` (the C shell,
//! `ffi::translate`) and the Rust kernel API (`kernel::translate`, the
//! accessor's leaf). The in-place probe is `binding::translate_probe`.

use crate::binding::with_core;
use neuron_runtime::{Error, Result, TranslationCtx};

/// The translate behind `neuron_translate` and the Rust kernel API: the
/// in-place hit inline, everything else out of line (errors are recorded
/// as the core's last error there, and returned). The pointer is the
/// kernel's, which nothing watches: on the host the HAL hears of it first
/// ([`note_raw_pointer`]).
#[inline(always)]
pub fn translate(ctx: *const TranslationCtx, addr: u64) -> Result<*mut u8> {
    // The hit and the note in one lookup of the thread's core.
    #[cfg(not(target_arch = "xtensa"))]
    if let Some(p) = crate::binding::noted_translate_hit(ctx, addr, neuron_hal::Hal::note_raw_pointer) {
        return Ok(p);
    }
    let p = translate_unnoted(ctx, addr);
    if p.is_ok() {
        note_raw_pointer();
    }
    p
}

/// [`translate`] without telling the HAL: for the host accessors' element
/// hooks, which told it of the one access they translate for.
#[inline(always)]
pub fn translate_unnoted(ctx: *const TranslationCtx, addr: u64) -> Result<*mut u8> {
    match crate::binding::translate_probe(ctx, addr) {
        crate::binding::Probe::Hit(p) => Ok(p),
        crate::binding::Probe::Unmapped => miss(addr),
        crate::binding::Probe::Slow => slow(ctx, addr),
    }
}

/// Tells the HAL of the core bound to this thread that kernel code is
/// about to get a pointer whose accesses no hook sees
/// (`Hal::note_raw_pointer`: the host's sanitizer then hashes the run's
/// inputs, once). The device's HAL has nothing to hear.
#[inline(always)]
pub(crate) fn note_raw_pointer() {
    #[cfg(not(target_arch = "xtensa"))]
    crate::binding::with_open_hal(neuron_hal::Hal::note_raw_pointer);
}

/// A miss on this core's own context (the probe saw no record map
/// `addr`): the region check and the install, no second lookup.
#[inline(never)]
pub(crate) fn miss(addr: u64) -> Result<*mut u8> {
    with_core(|b| b.state.translate_miss(addr))
}

/// Everything but a hit on this core's context: the miss, and the refusals
/// with their error codes.
#[inline(never)]
pub(crate) fn slow(ctx: *const TranslationCtx, addr: u64) -> Result<*mut u8> {
    with_core(|b| {
        if ctx != core::ptr::from_ref(b.state.translator().ctx()) {
            return Err(Error::TranslateNotReady);
        }
        b.state.translate(addr)
    })
}
