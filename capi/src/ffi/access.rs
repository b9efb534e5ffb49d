//! Accessors (SPEC §8): coherency registration and policies, the index
//! peel of the per-element accessor, the TCM accessor's copies and the
//! TCM/stream pool sizes. The element access itself is
//! `neuron_translate` at the leaf, done by the C++/Rust accessor objects.

use super::status;
use crate::binding::with_core;
use core::ffi::c_void;
use neuron_runtime::access::index::{check_view, peel};
use neuron_runtime::access::{AccessorKind, CoherencePolicy};
use neuron_runtime::marshal::tensor::TensorView;
use neuron_runtime::{Error, Result};

/// Reads the caller's tensor (null refused).
pub(crate) fn view(t: *const TensorView) -> Result<TensorView> {
    if t.is_null() {
        return Err(Error::NullStorage);
    }
    // SAFETY: a non-null tensor pointer from C points to a readable
    // `neuron_tensor` (the exports' documented contract).
    Ok(unsafe { t.read_unaligned() })
}

/// Runs `f` on the caller's tensor (null refused), read in place when it
/// is aligned (a C `neuron_tensor` always is): a copy of its 168 bytes is
/// a `memcpy` call, on a TCM transfer the biggest cost of the call after
/// the DMA itself.
pub(crate) fn with_view<R>(t: *const TensorView, f: impl FnOnce(&TensorView) -> Result<R>) -> Result<R> {
    if t.is_null() {
        return Err(Error::NullStorage);
    }
    if t.is_aligned() {
        // SAFETY: a non-null tensor pointer from C points to a readable
        // `neuron_tensor` (the exports' documented contract), aligned as
        // checked; the kernel does not write it during the call, and it is
        // none of the runtime state the entry point holds.
        return f(unsafe { &*t });
    }
    f(&view(t)?)
}

/// Checks that `t` can be viewed as `rank`-dimensional elements of dtype
/// `dtype` and `elem_size` bytes (rank, dtype, alignment). 0 or -1.
///
/// # Safety
/// `t` null (refused) or a readable `neuron_tensor`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_accessor_check(t: *const TensorView, rank: u32, dtype: u8, elem_size: u32) -> i32 {
    status(with_core(|_| with_view(t, |v| check_view(v, rank as usize, dtype, elem_size as u64))))
}

/// Registers an accessor of `kind` (0 read stream, 1 write stream,
/// 2 per-element, 3 TCM) on `t` with the coherency enforcer. -1 when the
/// tensor's policy is COHERENT and the combination is forbidden.
///
/// # Safety
/// `t` null (refused) or a readable `neuron_tensor`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_accessor_register(t: *const TensorView, kind: u32) -> i32 {
    status(with_core(|b| b.state.accessor_register(with_view(t, |v| Ok(v.storage.addr))?, AccessorKind::from_u32(kind)?)))
}

/// Deregisters an accessor registered with [`neuron_accessor_register`].
///
/// # Safety
/// `t` null (refused) or a readable `neuron_tensor`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_accessor_release(t: *const TensorView, kind: u32) -> i32 {
    status(with_core(|b| b.state.accessor_release(with_view(t, |v| Ok(v.storage.addr))?, AccessorKind::from_u32(kind)?)))
}

/// `get_accessor_coherence_policy`: 0 COHERENT, 1 INCOHERENT_VERBOSE,
/// 2 INCOHERENT_QUIET; -1 on error.
///
/// # Safety
/// `t` null (refused) or a readable `neuron_tensor`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_get_accessor_coherence_policy(t: *const TensorView) -> i32 {
    with_core(|b| Ok(b.state.coherence_policy(view(t)?.storage.addr) as i32)).unwrap_or(-1)
}

/// `set_accessor_coherence_policy`. 0 or -1.
///
/// # Safety
/// `t` null (refused) or a readable `neuron_tensor`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_set_accessor_coherence_policy(t: *const TensorView, policy: u32) -> i32 {
    status(with_core(|b| b.state.set_coherence_policy(view(t)?.storage.addr, CoherencePolicy::from_u32(policy)?)))
}

/// One step of accessor indexing: the SoC address of slice `i` of a
/// dimension (`size` entries, `stride` elements apart) starting at `addr`.
/// Pure arithmetic; 0 (and `IndexOutOfBounds` recorded) when `i` is out of
/// range, which the leaf's translate then refuses.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_index_peel(addr: u64, size: i64, stride: i64, i: i64, elem_size: u32) -> u64 {
    match peel(addr, size, stride, i, elem_size as u64) {
        Ok(a) if addr != 0 => a,
        r => {
            let e = r.err().unwrap_or(Error::NullStorage);
            let _ = with_core(|_| Err::<(), _>(e));
            0
        }
    }
}

/// `tensor_to_tcm<T>(tcm, flat_offset, n)`: elements `flat_offset..+n` of
/// `t` (which must have dtype `dtype`) into `tcm`. 0 or -1.
///
/// # Safety
/// `t` null (refused) or readable; `tcm` valid for `n` elements of writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_tensor_to_tcm(t: *const TensorView, dtype: u8, tcm: *mut c_void, flat_offset: u64, n: u64) -> i32 {
    // SAFETY: forwarded from the caller.
    status(with_core(|b| with_view(t, |v| unsafe { b.state.tensor_to_tcm(v, dtype, tcm.cast(), flat_offset, n) })))
}

/// `tcm_to_tensor<T>(tcm, flat_offset, n)`: `n` elements from `tcm` into
/// elements `flat_offset..` of `t`. 0 or -1.
///
/// # Safety
/// `t` null (refused) or readable; `tcm` valid for `n` elements of reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_tcm_to_tensor(t: *const TensorView, dtype: u8, tcm: *const c_void, flat_offset: u64, n: u64) -> i32 {
    status(with_core(|b| {
        // SAFETY: forwarded from the caller.
        #[cfg(not(target_arch = "xtensa"))]
        unsafe {
            crate::ffi::tcm_watch::check_copy_out(b, dtype, tcm.cast(), n)
        };
        // SAFETY: forwarded from the caller.
        with_view(t, |v| unsafe { b.state.tcm_to_tensor(v, dtype, tcm.cast(), flat_offset, n) })
    }))
}

/// Sets the size of the `tcm_malloc` pool (default 16 KiB; a multiple of
/// 64). Refused while a block is live. 0 or -1.
///
/// # Safety
/// Every block `tcm_malloc` returned that was freed is no longer used:
/// the pool's memory goes back to the data-RAM heap, which may hand it
/// out again. (The live-block check counts the pool's bookkeeping, which
/// an early `tcm_free` of a block still in use has already emptied.)
///
/// Safe code cannot call it:
/// ```compile_fail,E0133
/// # use neuron_capi::ffi::access::neuron_set_tcm_pool_size;
/// let rc = neuron_set_tcm_pool_size(4096);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_set_tcm_pool_size(bytes: u32) -> i32 {
    status(with_core(|b| b.state.set_tcm_pool_size(bytes)))
}

/// Sets the stream buffer pool (default 16 KiB of 4 KiB buffers; at most
/// 16 buffers; `pool_bytes` 0 makes every stream per-element). Refused
/// while a stream holds a buffer. 0 or -1.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_configure_stream_pool(pool_bytes: u32, buffer_bytes: u32) -> i32 {
    status(with_core(|b| b.state.configure_stream_pool(pool_bytes, buffer_bytes)))
}
