//! The HBM and data-RAM heaps.

use super::status;
use crate::binding::with_core;
use core::ffi::c_void;
use neuron_runtime::Error;

/// `neuron_hbm_allocate(size, out, align)`: `size` bytes of HBM aligned to
/// `align` (0 or less than 64: 64); the SoC address goes to `*out`.
/// 0 on success, -1 on failure (`*out` untouched).
///
/// # Safety
/// `out` must be null (refused) or valid for a write of a `u64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_hbm_allocate(size: u32, out: *mut u64, align: u32) -> i32 {
    status(with_core(|b| {
        if out.is_null() {
            return Err(Error::ForeignPointer);
        }
        let a = b.state.hbm().allocate(size as u64, align as usize);
        #[cfg(not(target_arch = "xtensa"))]
        if a == Err(Error::OutOfMemory) {
            b.explain_oom(crate::binding::explain::Heap::Hbm, u64::from(size));
        }
        let a = a?;
        // SAFETY: the caller guarantees `out` is writable.
        unsafe { out.write(a) };
        Ok(())
    }))
}

/// `neuron_hbm_deallocate(addr)`: 0, or -1 for a double or foreign free.
///
/// # Safety
/// `addr` is 0, a foreign or freed address (refused), or a block of this
/// core's `neuron_hbm_allocate` that nothing uses after this call: no
/// Rust handle (an `OwnedTensor`, an accessor or stream over it) owns it.
/// The next allocation may return the same block.
///
/// ```
/// # use neuron_capi::ffi::heap::neuron_hbm_deallocate;
/// // SAFETY: 0 is refused, nothing is freed.
/// let rc = unsafe { neuron_hbm_deallocate(0) };
/// # let _ = rc;
/// ```
///
/// Safe code cannot call it:
/// ```compile_fail,E0133
/// # use neuron_capi::ffi::heap::neuron_hbm_deallocate;
/// let rc = neuron_hbm_deallocate(0);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_hbm_deallocate(addr: u64) -> i32 {
    // SAFETY: forwarded from the caller.
    status(with_core(|b| unsafe { b.state.hbm().free(addr) }))
}

/// `neuron_dataram_allocate(size, out, align)`: `size` bytes of data RAM,
/// directly dereferenceable; the pointer goes to `*out`.
///
/// # Safety
/// `out` must be null (refused) or valid for a write of a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_dataram_allocate(size: u32, out: *mut *mut c_void, align: u32) -> i32 {
    status(with_core(|b| {
        if out.is_null() {
            return Err(Error::ForeignPointer);
        }
        let p = b.state.dataram().allocate(size as usize, align as usize);
        #[cfg(not(target_arch = "xtensa"))]
        if p.is_err_and(|e| e == Error::OutOfMemory) {
            b.explain_oom(crate::binding::explain::Heap::DataRam, u64::from(size));
        }
        let p = p?;
        // SAFETY: the caller guarantees `out` is writable.
        unsafe { out.write(p.as_ptr().cast()) };
        Ok(())
    }))
}

/// `neuron_dataram_deallocate(p)`: 0, or -1 for a double or foreign free.
///
/// # Safety
/// `p` is null, foreign or freed (refused), or a block of this core's
/// `neuron_dataram_allocate` that nothing reads or writes after this
/// call (the next allocation may return the same memory).
///
/// Safe code cannot call it:
/// ```compile_fail,E0133
/// # use neuron_capi::ffi::heap::neuron_dataram_deallocate;
/// let rc = neuron_dataram_deallocate(core::ptr::null_mut());
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_dataram_deallocate(p: *mut c_void) -> i32 {
    // SAFETY: forwarded from the caller.
    status(with_core(|b| unsafe { b.state.dataram().free(p.cast()) }))
}

/// `tcm_malloc(n)`: data RAM for the kernel's own staging, from the TCM
/// pool (16 KiB unless `neuron_set_tcm_pool_size` says otherwise); null on
/// failure, recorded as a handled error (see `Bound::tcm_alloc`).
#[unsafe(no_mangle)]
pub extern "C" fn tcm_malloc(n: usize) -> *mut c_void {
    let p = crate::trace::quietly!(with_core(|b| Ok(b.tcm_alloc(n))).ok().flatten().map_or(core::ptr::null_mut(), |p| p.as_ptr().cast()));
    crate::trace::block(p, n, crate::trace::what::TCM);
    p
}

/// `tcm_free(p)`: frees a `tcm_malloc` block; null is harmless. A foreign
/// or double free is refused and recorded as the last error.
///
/// # Safety
/// `p` is null, foreign or freed (refused), or a block `tcm_malloc`
/// returned that nothing reads or writes after this call. In particular
/// not the block of a live `TcmBuf`: the next `tcm_malloc` (or
/// `TcmScope::buf`) may return the same memory, and the buffer frees it
/// itself when dropped.
///
/// ```
/// # use neuron_capi::ffi::heap::tcm_free;
/// // SAFETY: null is harmless.
/// unsafe { tcm_free(core::ptr::null_mut()) };
/// ```
///
/// Safe code cannot free a live buffer's block (issue 43, hole 1):
/// ```compile_fail,E0133
/// # use neuron_capi::ffi::heap::tcm_free;
/// # use neuron_capi::kernel::TcmBuf;
/// # fn f(buf: &mut TcmBuf<'_, f32>) {
/// tcm_free(buf.as_mut_ptr().cast());
/// # }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tcm_free(p: *mut c_void) {
    let _ = crate::trace::quietly!(with_core(|b| b.state.tcm_free(p.cast())));
    crate::trace::freed(p);
}
