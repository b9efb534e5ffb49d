//! The marshalling surface the generated wrapper calls (SPEC §6):
//! `customop_setup`, the `customop_next_*` readers, `get_dst_tensor`,
//! `customop_return_tensor`, `customop_cleanup`.
//!
//! The original asserts on bad input; here every gate is an error code.
//! A reader that fails returns a zero value and makes the invocation's
//! status (`customop_status`) non-zero; the generated wrapper checks it and
//! skips the kernel, so a rejected invocation writes nothing to the output.

use crate::invocation as inv;
use crate::invocation::zero_tensor;
use neuron_runtime::marshal::tensor::TensorView;
use neuron_runtime::Error;

/// A scalar argument as C sees it (`at::Scalar` holds an integer or a
/// double; both forms are filled).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct NeuronScalar {
    /// The value as an integer (C conversion from a float).
    pub i: i64,
    /// The value as a double.
    pub f: f64,
    /// ISA dtype code of the argument.
    pub dtype: u8,
    /// 1 if the dtype is floating point.
    pub is_float: u8,
}

static_assertions::const_assert_eq!(core::mem::size_of::<NeuronScalar>(), 24);

/// `customop_setup(has_return)`: arms the DMA queue, clears the
/// "destination claimed" flag and binds the invocation block the loader
/// put in the mailbox. Failures go to `customop_status`.
#[unsafe(no_mangle)]
pub extern "C" fn customop_setup(has_return: bool) {
    let _ = inv::setup(has_return);
}

/// The invocation's status: 0 while every step succeeded, else the code
/// of the first failure since `customop_setup`.
#[unsafe(no_mangle)]
pub extern "C" fn customop_status() -> i32 {
    inv::status()
}

/// `customop_next_tensor()`: the next argument as a tensor (zero tensor
/// on failure).
#[unsafe(no_mangle)]
pub extern "C" fn customop_next_tensor() -> TensorView {
    inv::next_tensor()
}

/// `customop_next_scalar()`: a one-element tensor argument's value.
#[unsafe(no_mangle)]
pub extern "C" fn customop_next_scalar() -> NeuronScalar {
    inv::next_scalar()
        .map(|s| NeuronScalar { i: s.value.to_i64(), f: s.value.to_f64(), dtype: s.dtype.code(), is_float: s.dtype.is_float() as u8 })
        .unwrap_or_default()
}

/// `customop_next_int()`.
#[unsafe(no_mangle)]
pub extern "C" fn customop_next_int() -> i32 {
    inv::next_int().unwrap_or(0)
}

/// `customop_next_float()`.
#[unsafe(no_mangle)]
pub extern "C" fn customop_next_float() -> f32 {
    inv::next_float().unwrap_or(0.0)
}

/// `customop_next_long_long()`.
#[unsafe(no_mangle)]
pub extern "C" fn customop_next_long_long() -> i64 {
    inv::next_long_long().unwrap_or(0)
}

/// `customop_next_int64()` (`int64_t` arguments).
#[unsafe(no_mangle)]
pub extern "C" fn customop_next_int64() -> i64 {
    inv::next_int64().unwrap_or(0)
}

/// `customop_next_double()`.
#[unsafe(no_mangle)]
pub extern "C" fn customop_next_double() -> f64 {
    inv::next_double().unwrap_or(0.0)
}

/// `get_dst_tensor()`: the output's storage, for the kernel to write in
/// place; a later `customop_return_tensor` then copies nothing.
#[unsafe(no_mangle)]
pub extern "C" fn get_dst_tensor() -> TensorView {
    inv::dst_tensor().unwrap_or_else(|_| zero_tensor())
}

/// `customop_return_tensor(t)`: unless the output was claimed, checks the
/// dtype gate and copies `t` into the output storage through data RAM.
/// 0, or -1 with nothing written.
///
/// # Safety
/// `t` must be null (refused) or point to a readable `neuron_tensor`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn customop_return_tensor(t: *const TensorView) -> i32 {
    if t.is_null() {
        return super::status(inv::fail(Error::NullStorage));
    }
    // SAFETY: the caller guarantees t is readable; it is the kernel's
    // plain memory (a local or heap struct), not a window view, and
    // nothing writes it during the call. Borrowed, not copied: a
    // 168-byte copy here sat under the return copy's call chain, the
    // deepest of the custom-op path.
    super::status(inv::return_tensor(unsafe { &*t }))
}

/// `customop_cleanup()`: drains both DMA directions, flushes the printf
/// ring and fences. Returns 0, or -1 (e.g. the kernel neither claimed nor
/// returned its output).
#[unsafe(no_mangle)]
pub extern "C" fn customop_cleanup() -> i32 {
    super::status(inv::cleanup())
}
