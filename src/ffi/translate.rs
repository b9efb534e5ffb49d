//! `neuron_translate` and the context singleton.

use crate::current::with_core;
use core::ffi::c_void;
use neuron_runtime::Error;

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
    match crate::current::translate_probe(ctx.cast(), addr) {
        crate::current::Probe::Hit(p) => p.cast(),
        crate::current::Probe::Unmapped => translate_miss(addr),
        crate::current::Probe::Slow => translate_slow(ctx, addr),
    }
}

/// A miss on this core's own context (the probe saw no record map
/// `addr`): the region check and the install, no second lookup.
#[inline(never)]
fn translate_miss(addr: u64) -> *mut c_void {
    with_core(|b| b.state.translator.miss(&b.state.hal, addr).map(|p| p.cast::<c_void>())).unwrap_or(core::ptr::null_mut())
}

/// Everything but a hit on this core's context: the miss, and the refusals
/// with their error codes.
#[inline(never)]
fn translate_slow(ctx: *mut c_void, addr: u64) -> *mut c_void {
    with_core(|b| {
        if ctx != core::ptr::addr_of_mut!(b.state.translator.ctx).cast::<c_void>() {
            return Err(Error::TranslateNotReady);
        }
        b.state.translate(addr).map(|p| p.cast::<c_void>())
    })
    .unwrap_or(core::ptr::null_mut())
}
