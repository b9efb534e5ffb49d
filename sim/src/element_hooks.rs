//! Host: the C++ per-element accessor's loads and stores, each told to the
//! simulator's sanitizer before its translate (the device's accessor
//! translates inline and tells no one). An element access is otherwise a
//! plain host load or store no hook sees. Most elements do not come here:
//! the accessor's fast path (`host_elements`) answers in place what these
//! would answer without a report, and calls them for the rest.

use crate::binding::noted_translate_hit;
use core::ffi::c_void;
use neuron_hal::Hal;

// The note and the translate's hit path share one lookup of the thread's
// core (a general-dynamic TLS access from a kernel .so: two of them were a
// tenth of a hooked element's time); the rest is the full translate.

/// `neuron_translate(ctx, addr)` for a load of `bytes` at `addr` (the C++
/// element accessor's hook, host only): the pointer is for that one load,
/// which the sanitizer has heard of. A kernel that wants a pointer to keep
/// or to store through calls `neuron_translate`, which the sanitizer backs
/// with the inputs' page hashes; this one it does not.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_translate_load(ctx: *mut c_void, addr: u64, bytes: u32) -> *mut c_void {
    match noted_translate_hit(ctx.cast_const().cast(), addr, |h| h.note_soc_read(addr, u64::from(bytes))) {
        Some(p) => p.cast(),
        None => crate::ffi::translate::translate_unnoted(ctx, addr),
    }
}

/// `neuron_translate(ctx, addr)` for a store of `bytes` at `addr` (the
/// C++ element accessor's hook, host only): the pointer is for that one
/// store, which the sanitizer has heard of (as `neuron_translate_load`).
#[unsafe(no_mangle)]
pub extern "C" fn neuron_translate_store(ctx: *mut c_void, addr: u64, bytes: u32) -> *mut c_void {
    match noted_translate_hit(ctx.cast_const().cast(), addr, |h| h.note_soc_write(addr, u64::from(bytes))) {
        Some(p) => p.cast(),
        None => crate::ffi::translate::translate_unnoted(ctx, addr),
    }
}
