//! The device printf ring: one entry per call; visible to the host after
//! `customop_cleanup` flushes it.

use super::status;
use crate::binding::with_core;
use core::ffi::c_char;

/// Appends `n` bytes of `text` as one entry of the printf ring (the C++
/// headers' `neuron_printf` and kernel `printf` format with their own
/// freestanding formatter and call this).
///
/// # Safety
/// `text` valid for `n` bytes of reads (null with `n == 0` is fine).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_print(text: *const c_char, n: usize) {
    let _ = with_core(|b| {
        let bytes = if text.is_null() || n == 0 {
            &[][..]
        } else {
            // SAFETY: the caller guarantees n readable bytes.
            unsafe { core::slice::from_raw_parts(text.cast::<u8>(), n) }
        };
        // The ring's block comes from the libc heap on first use: its
        // bookkeeping is the library's, not the kernel's.
        crate::trace::quietly!(b.state.printf(bytes));
        Ok(())
    });
}

/// Sets the printf ring's size: a power of two from 64 bytes to 128 KiB
/// (the ring is emptied). 0 or -1.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_set_printf_ring_size(bytes: u32) -> i32 {
    status(crate::trace::quietly!(with_core(|b| b.state.set_printf_size(bytes as usize))))
}
