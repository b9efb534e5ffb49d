//! `neuron_memcpy` (both directions; C has no overloads, the C++ header
//! adds them) and the method table.

use super::status;
use crate::binding::with_core;
use core::ffi::c_void;
use neuron_runtime::Error;

/// HBM/SBUF → local: copies `n` bytes from SoC address `src` to `dst`
/// with the active method. 0 or -1.
///
/// # Safety
/// `dst` must be valid for `n` bytes of writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_memcpy_from_soc(dst: *mut c_void, src: u64, n: u32) -> i32 {
    status(with_core(|b| {
        if dst.is_null() && n != 0 {
            return Err(Error::DmaUnreachable);
        }
        // SAFETY: the caller guarantees dst is writable for n bytes.
        unsafe { b.state.memcpy_from_soc(dst.cast(), src, n) }
    }))
}

/// Local → HBM/SBUF. 0 or -1.
///
/// # Safety
/// `src` must be valid for `n` bytes of reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_memcpy_to_soc(dst: u64, src: *const c_void, n: u32) -> i32 {
    status(with_core(|b| {
        if src.is_null() && n != 0 {
            return Err(Error::DmaUnreachable);
        }
        // SAFETY: the caller guarantees src is readable for n bytes.
        unsafe { b.state.memcpy_to_soc(dst, src.cast(), n) }
    }))
}

/// HBM → HBM, bounced through data RAM (the core cannot stream HBM to HBM).
///
/// # Safety
/// `[dst, dst + n)` holds nothing Rust owns: not this core's heaps (the
/// libc heap is in HBM scratch), not memory a live reference points into
/// (see `CoreState::memcpy_soc_to_soc`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_memcpy_soc_to_soc(dst: u64, src: u64, n: u64) -> i32 {
    // SAFETY: forwarded from the caller.
    status(with_core(|b| unsafe { b.state.memcpy_soc_to_soc(dst, src, n) }))
}

/// `neuron_set_memcpy_method(m)`: 0 = C, 1 = vector, 2 = DMA (default).
/// Any other value is refused (-1) and the active method stays.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_set_memcpy_method(m: u32) -> i32 {
    status(with_core(|b| b.state.set_memcpy_method(m)))
}

/// The active memcpy method.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_get_memcpy_method() -> u32 {
    with_core(|b| Ok(b.state.memcpy_method() as u32)).unwrap_or(u32::MAX)
}

/// `init_dma_queue()`: arms both rings (also done by `customop_setup`).
#[unsafe(no_mangle)]
pub extern "C" fn init_dma_queue() -> i32 {
    status(with_core(|b| b.state.init_dma_queue()))
}

/// Waits for every outstanding DMA transfer in both directions.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_dma_drain() -> i32 {
    status(with_core(|b| b.state.dma_drain()))
}
