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
#[unsafe(no_mangle)]
pub extern "C" fn neuron_hbm_deallocate(addr: u64) -> i32 {
    status(with_core(|b| b.state.hbm().free(addr)))
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
#[unsafe(no_mangle)]
pub extern "C" fn neuron_dataram_deallocate(p: *mut c_void) -> i32 {
    status(with_core(|b| b.state.dataram().free(p.cast())))
}

/// `tcm_malloc(n)`: data RAM for the kernel's own staging, from the TCM
/// pool (16 KiB unless `neuron_set_tcm_pool_size` says otherwise); null on
/// failure, recorded as a handled error (see `Bound::tcm_alloc`).
#[unsafe(no_mangle)]
pub extern "C" fn tcm_malloc(n: usize) -> *mut c_void {
    with_core(|b| Ok(b.tcm_alloc(n))).ok().flatten().map_or(core::ptr::null_mut(), |p| p.as_ptr().cast())
}

/// `tcm_free(p)`: frees a `tcm_malloc` block; null is harmless. A foreign
/// or double free is refused and recorded as the last error.
#[unsafe(no_mangle)]
pub extern "C" fn tcm_free(p: *mut c_void) {
    let _ = with_core(|b| b.state.tcm_free(p.cast()));
}
