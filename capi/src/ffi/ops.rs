//! The tensor operations of SPEC §10 (one implementation, in
//! `neuron-runtime`'s `ops`; the C++ header and the Rust kernel API call
//! these). Every function returns 0 or -1; no broadcasting, no promotion.

use super::access::view;
use super::customop::NeuronScalar;
use super::status;
use crate::binding::with_core;
use neuron_runtime::marshal::args::ScalarValue;
use neuron_runtime::marshal::tensor::TensorView;
use neuron_runtime::ops::{BinaryOp, UnaryOp};
use neuron_runtime::Error;

fn value(s: NeuronScalar) -> ScalarValue {
    if s.is_float != 0 {
        ScalarValue::Float(s.f)
    } else {
        ScalarValue::Int(s.i)
    }
}

/// `dst = op(src)`: `op` 0 abs, 1 ceil, 2 floor, 3 sin, 4 cos, 5 tan,
/// 6 log, 7 log2, 8 log10, 9 exp, 10 bitwise_not.
///
/// # Safety
/// Tensor pointers null (refused) or readable; `dst`'s view names a
/// tensor the kernel may write (the output or an `empty`
/// result): its address is taken as given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_op_unary(op: u32, src: *const TensorView, dst: *const TensorView) -> i32 {
    // SAFETY: this function's contract (`dst`).
    status(with_core(|b| unsafe { b.state.op_unary(UnaryOp::from_u32(op)?, &view(src)?, &view(dst)?) }))
}

/// `dst = a op b`: `op` 0 add (a + alpha·b), 1 sub (a − alpha·b), 2 mul,
/// 3 div, 4 bitwise_and, 5 bitwise_or.
///
/// # Safety
/// Tensor pointers null (refused) or readable; `dst`'s view names a
/// tensor the kernel may write (the output or an `empty`
/// result): its address is taken as given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_op_binary(op: u32, a: *const TensorView, b: *const TensorView, alpha: NeuronScalar, dst: *const TensorView) -> i32 {
    // SAFETY: this function's contract (`dst`).
    status(with_core(|c| unsafe { c.state.op_binary(BinaryOp::from_u32(op)?, &view(a)?, &view(b)?, value(alpha), &view(dst)?) }))
}

/// `dst = src ^ exponent` (floating point).
///
/// # Safety
/// Tensor pointers null (refused) or readable; `dst`'s view names a
/// tensor the kernel may write (the output or an `empty`
/// result): its address is taken as given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_op_pow(src: *const TensorView, exponent: f64, dst: *const TensorView) -> i32 {
    // SAFETY: this function's contract (`dst`).
    status(with_core(|b| unsafe { b.state.op_pow(&view(src)?, exponent, &view(dst)?) }))
}

/// `dst = min(max(src, lo), hi)`.
///
/// # Safety
/// Tensor pointers null (refused) or readable; `dst`'s view names a
/// tensor the kernel may write (the output or an `empty`
/// result): its address is taken as given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_op_clamp(src: *const TensorView, lo: NeuronScalar, hi: NeuronScalar, dst: *const TensorView) -> i32 {
    // SAFETY: this function's contract (`dst`).
    status(with_core(|b| unsafe { b.state.op_clamp(&view(src)?, value(lo), value(hi), &view(dst)?) }))
}

/// `fill_(dst, v)`.
///
/// # Safety
/// `dst` null (refused) or readable, and its view names a tensor the
/// kernel may write (the output or an `empty` result): its
/// address is taken as given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_op_fill(dst: *const TensorView, v: NeuronScalar) -> i32 {
    // SAFETY: this function's contract (`dst`).
    status(with_core(|b| unsafe { b.state.op_fill(&view(dst)?, value(v)) }))
}

/// Makes a 2-D `dst` the identity (`eye`).
///
/// # Safety
/// `dst` null (refused) or readable, and its view names a tensor the
/// kernel may write (the output or an `empty` result): its
/// address is taken as given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_op_eye(dst: *const TensorView) -> i32 {
    // SAFETY: this function's contract (`dst`).
    status(with_core(|b| unsafe { b.state.op_eye(&view(dst)?) }))
}

/// `empty(shape, dtype)`: a contiguous tensor in this core's HBM heap,
/// into `*out`. Free it with [`neuron_tensor_free`]. 0 or -1.
///
/// # Safety
/// `sizes` readable for `ndim` values; `out` null (refused) or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_tensor_empty(dtype: u8, sizes: *const i64, ndim: u32, out: *mut TensorView) -> i32 {
    if sizes.is_null() || out.is_null() || ndim as usize > neuron_runtime::marshal::tensor::MAX_DIMS {
        return status(with_core(|_| Err(Error::BadRank)));
    }
    // SAFETY: the caller guarantees ndim readable sizes (at most 8).
    let shape = unsafe { core::slice::from_raw_parts(sizes, ndim as usize) };
    status(crate::factory::tensor_empty(dtype, shape).map(|t| {
        // SAFETY: the caller guarantees `out` is writable.
        unsafe { out.write_unaligned(t) }
    }))
}

/// Frees a tensor made by [`neuron_tensor_empty`]. 0 or -1.
///
/// # Safety
/// `t` null (refused) or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_tensor_free(t: *const TensorView) -> i32 {
    status(with_core(|b| crate::factory::tensor_free(b, &view(t)?)))
}
