//! `malloc`/`free`/`calloc`/`realloc` (and C++ `new`, which calls
//! `malloc`) over the core's libc heap, and the same heap as Rust's global
//! allocator. Device only: on the host the process's own malloc stays.
//!
//! Before the init prologue has run the libc heap has no arena and these
//! return null (SPEC §4: out of memory is an error, never an abort).

use crate::binding::with_core;
use crate::trace;
use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;
use core::ptr::null_mut;

/// `malloc(n)`: 64-byte aligned, null on failure.
#[unsafe(no_mangle)]
pub extern "C" fn malloc(n: usize) -> *mut c_void {
    let p = trace::quietly!(with_core(|b| b.state.libc().malloc(n)).map_or(null_mut(), |p| p.as_ptr().cast()));
    trace::block(p, n, trace::what::MALLOC);
    p
}

/// `free(p)`: null is a no-op; a foreign or double free is refused and
/// recorded as the core's last error, never passed on.
///
/// # Safety
/// As C's `free`: `p` is null or a block of this heap no longer used (see
/// [`neuron_runtime::heap::LibcHeap::free`]).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn free(p: *mut c_void) {
    // SAFETY: forwarded from the caller.
    let _ = trace::quietly!(with_core(|b| unsafe { b.state.libc().free(p.cast()) }));
    trace::freed(p);
}

/// `calloc(n, size)`: zeroed, overflow-checked.
#[unsafe(no_mangle)]
pub extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
    let p = trace::quietly!(with_core(|b| b.state.libc().calloc(n, size)).map_or(null_mut(), |p| p.as_ptr().cast()));
    trace::block(p, n.saturating_mul(size), trace::what::CALLOC);
    p
}

/// `realloc(p, n)`: null `p` allocates, `n == 0` frees and returns null.
///
/// # Safety
/// As C's `realloc`: `p` is null or a live block of this heap (see
/// [`neuron_runtime::heap::LibcHeap::realloc`]).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn realloc(p: *mut c_void, n: usize) -> *mut c_void {
    // SAFETY: forwarded from the caller.
    let q: *mut c_void = match trace::quietly!(with_core(|b| unsafe { b.state.libc().realloc(p.cast(), n) })) {
        Ok(Some(q)) => q.as_ptr().cast(),
        _ => null_mut(),
    };
    match (p.is_null(), q.is_null()) {
        (true, _) => trace::block(q, n, trace::what::MALLOC),
        (false, false) => trace::reallocated(q, p, n),
        // n == 0 frees p; a refused growth leaves p live.
        (false, true) if n == 0 => trace::freed(p),
        (false, true) => {}
    }
    q
}

/// Rust's `alloc` on the device: the libc heap.
pub struct LibcAllocator;

// SAFETY: blocks come from the core's libc heap with at least the asked
// size and alignment (memalign), and are returned to it by `dealloc`;
// the heap refuses anything it did not hand out.
unsafe impl GlobalAlloc for LibcAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // The library's own blocks: not watched, but the heap's
        // bookkeeping in freed kernel blocks is not the kernel's access.
        trace::quietly!(with_core(|b| b.state.libc().memalign(layout.align(), layout.size())).map_or(null_mut(), |p| p.as_ptr()))
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `GlobalAlloc`'s contract: `ptr` is a block `alloc` took
        // from this heap, no longer used.
        let _ = trace::quietly!(with_core(|b| unsafe { b.state.libc().free(ptr) }));
    }
}

#[cfg(feature = "global-allocator")]
#[global_allocator]
static ALLOCATOR: LibcAllocator = LibcAllocator;
