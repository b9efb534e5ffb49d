//! The kernel's `malloc`/`new` on the simulator: the core's libc heap, of
//! the device's size, as on the device (SPEC §12), not the host's malloc.
//!
//! `customop build` renames the compute objects' references to the C and
//! C++ allocation functions to these (`customop/src/kernel_heap.rs`), so
//! only the kernel's own calls come here; the simulator, the host's C++
//! library and the shape functions keep the process's malloc. A call made
//! with no core bound (a kernel object's static initialiser, at load
//! time) and a free of a block the core's heap did not hand out go to the
//! process's allocator.

use crate::binding::{is_bound, with_core};
use core::ffi::c_void;
use core::ptr::null_mut;
use neuron_runtime::heap::{HeapMut, LibcHeap};
use neuron_runtime::Error;

/// Where the core's libc heap answers: `None` when no core is bound.
fn on_core<T>(f: impl FnOnce(&mut HeapMut<'_, LibcHeap>) -> T) -> Option<T> {
    on_core_filled(|h, _| f(h))
}

/// [`on_core`], also given the run's fill byte.
fn on_core_filled<T>(f: impl FnOnce(&mut HeapMut<'_, LibcHeap>, u8) -> T) -> Option<T> {
    if !is_bound() {
        return None;
    }
    let mut out = None;
    let _ = with_core(|b| {
        out = Some(f(&mut b.state.libc(), b.empty_fill));
        Ok(())
    });
    out
}

/// A corrupted heap (its free list overwritten by a stray store) is the
/// kernel's bug, not a null it may handle as an out-of-memory: logged on
/// the core, so that the run fails with it. Other failures are returned
/// as the device returns them (null, no error the run fails for).
fn answer(r: Option<Result<*mut c_void, Error>>, process: impl FnOnce() -> *mut c_void) -> *mut c_void {
    match r {
        Some(Ok(p)) => p,
        Some(Err(e)) => {
            log_corrupted(e);
            null_mut()
        }
        None => process(),
    }
}

/// Logs `e` on the bound core when it is [`Error::HeapCorrupted`].
fn log_corrupted(e: Error) {
    if e == Error::HeapCorrupted {
        let _ = with_core(|b| {
            b.last_error = e.code();
            b.errors.record(e);
            Ok(())
        });
    }
}

/// A fresh block of `n` bytes, holding the run's fill (the device's block
/// holds whatever was there: a result computed from it shows as such).
fn filled(p: core::ptr::NonNull<u8>, n: usize, fill: u8) -> *mut c_void {
    // SAFETY: a fresh block of at least `n` bytes the heap just handed out.
    unsafe { p.as_ptr().write_bytes(fill, n) };
    p.as_ptr().cast()
}

/// `malloc(n)`: null when the core's heap has no room (as on the device).
#[unsafe(no_mangle)]
pub extern "C" fn neuron_kernel_malloc(n: usize) -> *mut c_void {
    // SAFETY: the process's malloc, for a call with no core bound.
    answer(on_core_filled(|h, fill| h.malloc(n).map(|p| filled(p, n, fill))), || unsafe { libc::malloc(n) })
}

/// `calloc(n, size)`: zeroed, overflow-checked.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_kernel_calloc(n: usize, size: usize) -> *mut c_void {
    // SAFETY: the process's calloc, for a call with no core bound.
    answer(on_core(|h| h.calloc(n, size).map(|p| p.as_ptr().cast())), || unsafe { libc::calloc(n, size) })
}

/// `aligned_alloc`/`memalign(align, n)`.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_kernel_memalign(align: usize, n: usize) -> *mut c_void {
    // SAFETY: the process's allocator, for a call with no core bound.
    answer(on_core_filled(|h, fill| h.memalign(align, n).map(|p| filled(p, n, fill))), || unsafe { libc::memalign(align, n) })
}

/// `posix_memalign(out, align, n)`: 0, or `ENOMEM`/`EINVAL`.
///
/// # Safety
/// `out` must be valid for a write of a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_kernel_posix_memalign(out: *mut *mut c_void, align: usize, n: usize) -> i32 {
    if out.is_null() || !align.is_power_of_two() {
        return libc::EINVAL;
    }
    let p = neuron_kernel_memalign(align, n);
    if p.is_null() {
        return libc::ENOMEM;
    }
    // SAFETY: the caller vouches for `out`.
    unsafe { out.write(p) };
    0
}

/// `realloc(p, n)`: a block of the core's heap moves within it; any other
/// block is the process's.
///
/// # Safety
/// `p` is null or a live block of the core's heap or of the process's
/// allocator (as C's `realloc`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_kernel_realloc(p: *mut c_void, n: usize) -> *mut c_void {
    // SAFETY: `owns` reads nothing; a pointer in the core's arenas is, by
    // the caller's contract, a live block of the core's heap.
    let mine = on_core(|h| (p.is_null() || h.owns(p.cast())).then(|| unsafe { h.realloc(p.cast(), n) }));
    match mine {
        Some(Some(Ok(Some(q)))) => q.as_ptr().cast(),
        Some(Some(Err(e))) => {
            log_corrupted(e);
            null_mut()
        }
        Some(Some(_)) => null_mut(),
        // SAFETY: not a block of the core's heap: the caller vouches it is
        // the process's.
        _ => unsafe { libc::realloc(p, n) },
    }
}

/// `free(p)`: the core's heap takes its own blocks back; any other block
/// goes to the process's allocator.
///
/// # Safety
/// `p` is null or a live block of the core's heap or of the process's
/// allocator (as C's `free`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_kernel_free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: as in `neuron_kernel_realloc`. A pointer in the core's
    // arenas stays there even when refused (a double free is the heap's
    // error, never the process allocator's).
    let mine = on_core(|h| h.owns(p.cast()).then(|| unsafe { h.free(p.cast()) }));
    if let Some(Some(Err(e))) = mine {
        log_corrupted(e);
    }
    if mine.flatten().is_none() {
        // SAFETY: not a block of the core's heap: the caller vouches it is
        // the process's.
        unsafe { libc::free(p) };
    }
}

/// Throwing `operator new`: kernels are built without exceptions (as the
/// vendor's device library), so a failed allocation is the abort report.
fn kernel_new(n: usize) -> *mut c_void {
    let p = neuron_kernel_malloc(n.max(1));
    if p.is_null() {
        crate::abort::abort_with(Error::OutOfMemory, "operator new: the core's 1 MiB libc heap has no room", core::panic::Location::caller());
    }
    p
}

/// `operator new(n, std::nothrow)`: null on failure.
fn kernel_new_nothrow(n: usize, _tag: *const c_void) -> *mut c_void {
    neuron_kernel_malloc(n.max(1))
}

/// Aligned `operator new(n, std::align_val_t)`.
fn kernel_new_aligned(n: usize, align: usize) -> *mut c_void {
    let p = neuron_kernel_memalign(align, n.max(1));
    if p.is_null() {
        crate::abort::abort_with(Error::OutOfMemory, "operator new: the core's 1 MiB libc heap has no room", core::panic::Location::caller());
    }
    p
}

/// Aligned `operator new(n, std::align_val_t, std::nothrow)`.
fn kernel_new_aligned_nothrow(n: usize, align: usize, _tag: *const c_void) -> *mut c_void {
    neuron_kernel_memalign(align, n.max(1))
}

/// Every `operator delete` form: the size, alignment and tag add nothing
/// the heap does not know.
///
/// # Safety
/// As [`neuron_kernel_free`].
unsafe fn kernel_delete(p: *mut c_void, _size_or_align: usize, _align: usize) {
    // SAFETY: forwarded from the caller.
    unsafe { neuron_kernel_free(p) };
}

/// `aligned_alloc(align, n)`: as `memalign`, with C11's argument order.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_kernel_aligned_alloc(align: usize, n: usize) -> *mut c_void {
    neuron_kernel_memalign(align, n)
}

/// Defines `neuron_kernel_<symbol>` for each C++ allocation symbol the
/// build renames (`customop/src/kernel_heap.rs`), as one of the above.
macro_rules! cxx_new {
    ($($sym:ident => $f:ident($($a:ident: $t:ty),*);)*) => {$(
        /// The C++ `operator new` form of the same name, on the core's
        /// libc heap.
        #[unsafe(no_mangle)]
        pub extern "C" fn $sym($($a: $t),*) -> *mut c_void { $f($($a),*) }
    )*};
}

/// As [`cxx_new`], for the `operator delete` forms.
macro_rules! cxx_delete {
    ($($sym:ident;)*) => {$(
        /// The C++ `operator delete` form of the same name.
        ///
        /// # Safety
        /// As [`neuron_kernel_free`] (the extra arguments are unused).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $sym(p: *mut c_void, a: usize, b: usize) {
            // SAFETY: forwarded from the caller.
            unsafe { kernel_delete(p, a, b) }
        }
    )*};
}

cxx_new! {
    neuron_kernel__Znwm => kernel_new(n: usize);
    neuron_kernel__Znam => kernel_new(n: usize);
    neuron_kernel__ZnwmRKSt9nothrow_t => kernel_new_nothrow(n: usize, tag: *const c_void);
    neuron_kernel__ZnamRKSt9nothrow_t => kernel_new_nothrow(n: usize, tag: *const c_void);
    neuron_kernel__ZnwmSt11align_val_t => kernel_new_aligned(n: usize, align: usize);
    neuron_kernel__ZnamSt11align_val_t => kernel_new_aligned(n: usize, align: usize);
    neuron_kernel__ZnwmSt11align_val_tRKSt9nothrow_t => kernel_new_aligned_nothrow(n: usize, align: usize, tag: *const c_void);
    neuron_kernel__ZnamSt11align_val_tRKSt9nothrow_t => kernel_new_aligned_nothrow(n: usize, align: usize, tag: *const c_void);
}

cxx_delete! {
    neuron_kernel__ZdlPv;
    neuron_kernel__ZdaPv;
    neuron_kernel__ZdlPvm;
    neuron_kernel__ZdaPvm;
    neuron_kernel__ZdlPvSt11align_val_t;
    neuron_kernel__ZdaPvSt11align_val_t;
    neuron_kernel__ZdlPvmSt11align_val_t;
    neuron_kernel__ZdaPvmSt11align_val_t;
    neuron_kernel__ZdlPvRKSt9nothrow_t;
    neuron_kernel__ZdaPvRKSt9nothrow_t;
    neuron_kernel__ZdlPvSt11align_val_tRKSt9nothrow_t;
    neuron_kernel__ZdaPvSt11align_val_tRKSt9nothrow_t;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_no_core_bound_the_process_allocator_serves() {
        let p = neuron_kernel_malloc(100);
        assert!(!p.is_null());
        // SAFETY: p is the block just allocated; q and null are freeable.
        unsafe {
            let q = neuron_kernel_realloc(p, 200);
            assert!(!q.is_null());
            neuron_kernel_free(q);
            neuron_kernel_free(null_mut());
        }
        let mut out = null_mut();
        // SAFETY: out is a local.
        assert_eq!(unsafe { neuron_kernel_posix_memalign(&mut out, 64, 10) }, 0);
        assert_eq!(out as usize % 64, 0);
        // SAFETY: out is the block just allocated.
        unsafe { kernel_delete(out, 0, 0) };
        // SAFETY: out is a local.
        assert_eq!(unsafe { neuron_kernel_posix_memalign(&mut out, 3, 10) }, libc::EINVAL);
    }

    /// A block of the core's heap is the core's heap's to take back, even
    /// when it refuses it: a double free is its error, and never reaches
    /// the process allocator (which would abort on a pointer it does not
    /// know).
    #[test]
    fn a_double_free_of_a_core_block_stays_with_the_core_heap() {
        let soc = neuron_hal_mock::MockSoc::new().expect("mock SoC");
        let mut c = crate::SimCore::new(soc.core(0).expect("core"));
        c.state().init_prologue();
        c.enter(|| {
            let p = neuron_kernel_malloc(100);
            assert!(!p.is_null());
            // SAFETY: p is a live block of the core's heap, then a freed one
            // (refused by the heap, untouched).
            unsafe {
                neuron_kernel_free(p);
                neuron_kernel_free(p);
            }
            // SAFETY: as above: a freed block of the core's heap.
            assert!(unsafe { neuron_kernel_realloc(p, 10) }.is_null());
        });
        let st = c.state().libc().stats();
        assert_eq!((st.allocs, st.frees, st.failures, st.in_use), (1, 1, 2, 0));
    }
}
