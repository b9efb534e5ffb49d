//! The documented tensor operations (SPEC §10) for Rust kernels: direct
//! calls into the one implementation in the runtime (`neuron_op_*` are
//! the C shell over the same functions). Elementwise, no broadcasting, no type promotion; a
//! dtype an operation does not accept is `DtypeNotSupported`.
//!
//! Each math function has a form that allocates its result in this core's
//! HBM heap ([`OwnedTensor`], freed on drop) and an `_out` form that
//! writes into a given tensor of the same shape and dtype.

use super::{Dtype, OwnedTensor, Result, Tensor, Value};
use crate::binding::with_core;
use neuron_runtime::ops::{BinaryOp, UnaryOp};

/// `empty(shape, dtype)`: uninitialised.
pub fn empty(shape: &[i64], dtype: Dtype) -> Result<OwnedTensor> {
    Ok(OwnedTensor::from_empty(crate::factory::tensor_empty(dtype.code(), shape)?))
}

/// A tensor shaped like `t` (same dtype), uninitialised.
pub fn empty_like(t: &Tensor) -> Result<OwnedTensor> {
    let d = t.dtype().ok_or(neuron_runtime::Error::DtypeNotMarshallable)?;
    empty(t.sizes(), d)
}

/// `fill_(t, v)`.
pub fn fill_(t: &Tensor, v: impl Into<Value>) -> Result<()> {
    // SAFETY: a `Tensor` is only made from a view the runtime handed out
    // (`Tensor::from_view` is unsafe), so `dst` is a tensor's storage.
    with_core(|b| unsafe { b.state.op_fill(t.view(), v.into()) })
}

/// `full(shape, v, dtype)`.
pub fn full(shape: &[i64], v: impl Into<Value>, dtype: Dtype) -> Result<OwnedTensor> {
    let t = empty(shape, dtype)?;
    fill_(&t.tensor(), v)?;
    Ok(t)
}

/// `zeros(shape, dtype)`.
pub fn zeros(shape: &[i64], dtype: Dtype) -> Result<OwnedTensor> {
    full(shape, 0i64, dtype)
}

/// `ones(shape, dtype)`.
pub fn ones(shape: &[i64], dtype: Dtype) -> Result<OwnedTensor> {
    full(shape, 1i64, dtype)
}

/// `eye(n, m, dtype)`: the `n × m` identity.
pub fn eye(n: i64, m: i64, dtype: Dtype) -> Result<OwnedTensor> {
    let t = empty(&[n, m], dtype)?;
    // SAFETY: `t` is the tensor `empty` just made.
    with_core(|b| unsafe { b.state.op_eye(t.tensor().view()) })?;
    Ok(t)
}

fn unary_out(op: UnaryOp, src: &Tensor, dst: &Tensor) -> Result<()> {
    // SAFETY: a `Tensor` is only made from a view the runtime handed out
    // (`Tensor::from_view` is unsafe), so `dst` is a tensor's storage.
    with_core(|b| unsafe { b.state.op_unary(op, src.view(), dst.view()) })
}

fn unary(op: UnaryOp, src: &Tensor) -> Result<OwnedTensor> {
    let out = empty_like(src)?;
    unary_out(op, src, &out.tensor())?;
    Ok(out)
}

macro_rules! unary_fns {
    ($($name:ident, $out:ident => $op:ident;)*) => {$(
        #[doc = concat!("`", stringify!($name), "(src)` into a new tensor.")]
        pub fn $name(src: &Tensor) -> Result<OwnedTensor> {
            unary(UnaryOp::$op, src)
        }
        #[doc = concat!("`", stringify!($name), "_out(src, dst)`.")]
        pub fn $out(src: &Tensor, dst: &Tensor) -> Result<()> {
            unary_out(UnaryOp::$op, src, dst)
        }
    )*};
}

unary_fns! {
    abs, abs_out => Abs;
    ceil, ceil_out => Ceil;
    floor, floor_out => Floor;
    sin, sin_out => Sin;
    cos, cos_out => Cos;
    tan, tan_out => Tan;
    log, log_out => Log;
    log2, log2_out => Log2;
    log10, log10_out => Log10;
    exp, exp_out => Exp;
    bitwise_not, bitwise_not_out => BitwiseNot;
}

fn binary_out(op: BinaryOp, a: &Tensor, b: &Tensor, alpha: Value, dst: &Tensor) -> Result<()> {
    // SAFETY: a `Tensor` is only made from a view the runtime handed out
    // (`Tensor::from_view` is unsafe), so `dst` is a tensor's storage.
    with_core(|c| unsafe { c.state.op_binary(op, a.view(), b.view(), alpha, dst.view()) })
}

fn binary(op: BinaryOp, a: &Tensor, b: &Tensor, alpha: Value) -> Result<OwnedTensor> {
    let out = empty_like(a)?;
    binary_out(op, a, b, alpha, &out.tensor())?;
    Ok(out)
}

/// `add(a, b, alpha)`: `a + alpha·b`.
pub fn add(a: &Tensor, b: &Tensor, alpha: impl Into<Value>) -> Result<OwnedTensor> {
    binary(BinaryOp::Add, a, b, alpha.into())
}

/// `add_out(a, b, alpha, dst)`.
pub fn add_out(a: &Tensor, b: &Tensor, alpha: impl Into<Value>, dst: &Tensor) -> Result<()> {
    binary_out(BinaryOp::Add, a, b, alpha.into(), dst)
}

/// `sub(a, b, alpha)`: `a − alpha·b`.
pub fn sub(a: &Tensor, b: &Tensor, alpha: impl Into<Value>) -> Result<OwnedTensor> {
    binary(BinaryOp::Sub, a, b, alpha.into())
}

/// `sub_out(a, b, alpha, dst)`.
pub fn sub_out(a: &Tensor, b: &Tensor, alpha: impl Into<Value>, dst: &Tensor) -> Result<()> {
    binary_out(BinaryOp::Sub, a, b, alpha.into(), dst)
}

macro_rules! binary_fns {
    ($($name:ident, $out:ident => $op:ident;)*) => {$(
        #[doc = concat!("`", stringify!($name), "(a, b)` into a new tensor.")]
        pub fn $name(a: &Tensor, b: &Tensor) -> Result<OwnedTensor> {
            binary(BinaryOp::$op, a, b, Value::Int(1))
        }
        #[doc = concat!("`", stringify!($name), "_out(a, b, dst)`.")]
        pub fn $out(a: &Tensor, b: &Tensor, dst: &Tensor) -> Result<()> {
            binary_out(BinaryOp::$op, a, b, Value::Int(1), dst)
        }
    )*};
}

binary_fns! {
    mul, mul_out => Mul;
    div, div_out => Div;
    bitwise_and, bitwise_and_out => BitwiseAnd;
    bitwise_or, bitwise_or_out => BitwiseOr;
}

/// `pow(src, exponent)` (floating point).
pub fn pow(src: &Tensor, exponent: f64) -> Result<OwnedTensor> {
    let out = empty_like(src)?;
    pow_out(src, exponent, &out.tensor())?;
    Ok(out)
}

/// `pow_out(src, exponent, dst)`.
pub fn pow_out(src: &Tensor, exponent: f64, dst: &Tensor) -> Result<()> {
    // SAFETY: a `Tensor` is only made from a view the runtime handed out
    // (`Tensor::from_view` is unsafe), so `dst` is a tensor's storage.
    with_core(|b| unsafe { b.state.op_pow(src.view(), exponent, dst.view()) })
}

/// `clamp(src, min, max)`.
pub fn clamp(src: &Tensor, min: impl Into<Value>, max: impl Into<Value>) -> Result<OwnedTensor> {
    let out = empty_like(src)?;
    clamp_out(src, min, max, &out.tensor())?;
    Ok(out)
}

/// `clamp_out(src, min, max, dst)`.
pub fn clamp_out(src: &Tensor, min: impl Into<Value>, max: impl Into<Value>, dst: &Tensor) -> Result<()> {
    // SAFETY: a `Tensor` is only made from a view the runtime handed out
    // (`Tensor::from_view` is unsafe), so `dst` is a tensor's storage.
    with_core(|b| unsafe { b.state.op_clamp(src.view(), min.into(), max.into(), dst.view()) })
}
