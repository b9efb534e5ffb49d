//! `neuron_translate` and the context singleton.

use crate::binding::with_core;
use core::ffi::c_void;

/// `neuron_translate_ctx`: the calling core's translation context, the
/// value every `Q7PtrType.ctx` holds. Null if no core is bound.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_translate_ctx() -> *mut c_void {
    with_core(|b| Ok(b.state.translate_ctx().cast::<c_void>())).unwrap_or(core::ptr::null_mut())
}

/// `neuron_translate(ctx, addr)`: the pointer through which this core
/// reaches SoC address `addr`; a miss reprograms a dynamic window. Null
/// with an error code if no window can map `addr` or `ctx` is not this
/// core's context. On the simulator, the run's first such pointer has
/// the inputs' pages hashed before it is returned: a store through it
/// into an input fails the run after it (error 114), as no accessor saw it.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_translate(ctx: *mut c_void, addr: u64) -> *mut c_void {
    crate::translate::translate(ctx.cast(), addr).map_or(core::ptr::null_mut(), |p| p.cast())
}

/// [`neuron_translate`] without telling the HAL: for the host accessors'
/// element hooks, which told it of the one access they translate for.
#[inline(always)]
pub fn translate_unnoted(ctx: *mut c_void, addr: u64) -> *mut c_void {
    crate::translate::translate_unnoted(ctx.cast(), addr).map_or(core::ptr::null_mut(), |p| p.cast())
}

/// `neuron_translate_pinned(ctx, addr, bytes)`: the pointer to SoC
/// `addr` when all of `[addr, addr + bytes)` lies in one of this core's
/// pinned windows (hbm_scratch, or SBUF up to its end), else null. Such a
/// range never moves (pinned records are set at init and never evicted),
/// so the C++ accessor asks once, when it is made, and indexes from the
/// pointer. Nothing is recorded: "no" is an answer, not an error.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_translate_pinned(ctx: *mut c_void, addr: u64, bytes: u64) -> *mut c_void {
    let p = with_core(|b| Ok(b.state.translate_pinned(ctx.cast(), addr, bytes).map_or(core::ptr::null_mut(), |p| p.cast::<c_void>())))
        .unwrap_or(core::ptr::null_mut());
    if !p.is_null() {
        crate::translate::note_raw_pointer();
    }
    p
}
