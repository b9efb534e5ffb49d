//! `neuron_translate` and the context singleton.

use crate::current::with_core;
use core::ffi::c_void;
use neuron_runtime::{Error, Result, TranslationCtx};

/// `neuron_translate_ctx`: the calling core's translation context, the
/// value every `Q7PtrType.ctx` holds. Null if no core is bound.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_translate_ctx() -> *mut c_void {
    with_core(|b| Ok(core::ptr::addr_of_mut!(b.state.translator.ctx).cast::<c_void>())).unwrap_or(core::ptr::null_mut())
}

/// `neuron_translate(ctx, addr)`: the pointer through which this core
/// reaches SoC address `addr`; a miss reprograms a dynamic window. Null
/// with an error code if no window can map `addr` or `ctx` is not this
/// core's context.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_translate(ctx: *mut c_void, addr: u64) -> *mut c_void {
    // The probe matched here, not through `translate`'s `Result`: the hit
    // stays a bare pointer return.
    let r = match crate::current::translate_probe(ctx.cast(), addr) {
        crate::current::Probe::Hit(p) => return p.cast(),
        crate::current::Probe::Unmapped => translate_miss(addr),
        crate::current::Probe::Slow => translate_slow(ctx.cast(), addr),
    };
    r.map_or(core::ptr::null_mut(), |p| p.cast())
}

/// The translate behind `neuron_translate` and the Rust kernel API: the
/// in-place hit inline, everything else out of line (errors are recorded
/// as the core's last error there, and returned).
#[inline(always)]
pub fn translate(ctx: *const TranslationCtx, addr: u64) -> Result<*mut u8> {
    match crate::current::translate_probe(ctx, addr) {
        crate::current::Probe::Hit(p) => Ok(p),
        crate::current::Probe::Unmapped => translate_miss(addr),
        crate::current::Probe::Slow => translate_slow(ctx, addr),
    }
}

/// A miss on this core's own context (the probe saw no record map
/// `addr`): the region check and the install, no second lookup.
#[inline(never)]
fn translate_miss(addr: u64) -> Result<*mut u8> {
    with_core(|b| b.state.translator.miss(&b.state.hal, addr))
}

/// Everything but a hit on this core's context: the miss, and the refusals
/// with their error codes.
#[inline(never)]
fn translate_slow(ctx: *const TranslationCtx, addr: u64) -> Result<*mut u8> {
    with_core(|b| {
        if ctx != core::ptr::addr_of!(b.state.translator.ctx) {
            return Err(Error::TranslateNotReady);
        }
        b.state.translate(addr)
    })
}
