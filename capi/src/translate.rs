//! The translate both surfaces use: `neuron_translate` (the C shell,
//! `ffi::translate`) and the Rust kernel API (`kernel::translate`, the
//! accessor's leaf). The in-place probe is `binding::translate_probe`.

use crate::binding::with_core;
use neuron_runtime::{Error, Result, TranslationCtx};

/// The translate behind `neuron_translate` and the Rust kernel API: the
/// in-place hit inline, everything else out of line (errors are recorded
/// as the core's last error there, and returned).
#[inline(always)]
pub fn translate(ctx: *const TranslationCtx, addr: u64) -> Result<*mut u8> {
    match crate::binding::translate_probe(ctx, addr) {
        crate::binding::Probe::Hit(p) => Ok(p),
        crate::binding::Probe::Unmapped => miss(addr),
        crate::binding::Probe::Slow => slow(ctx, addr),
    }
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
