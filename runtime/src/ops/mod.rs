//! The documented tensor operations (SPEC §10): factories, elementwise
//! math and its `_out` forms, `pow`, `clamp`, `add`/`sub` with alpha,
//! `mul`, `div`, bitwise ops on integers, `fill_`. Elementwise only, no
//! broadcasting, no type promotion: every operand has the destination's
//! dtype and shape.
//!
//! Arithmetic: floating-point dtypes compute in f32 (FP16/BF16 convert to
//! f32 and round back to nearest), with `libm`; integer dtypes compute in
//! i64 and wrap to their width.
//!
//! | operation | accepted dtypes |
//! |---|---|
//! | `abs`, `ceil`, `floor`, `clamp`, `add`, `sub`, `mul`, `fill_`, factories | all eight (`ceil`/`floor` are the identity on integers) |
//! | `sin cos tan log log2 log10 exp`, `pow`, `div` | FP16, BF16, FP32 |
//! | `bitwise_and/or/not` | UINT8, INT8, INT16, INT32, INT64 |
//!
//! Any other dtype is `DtypeNotSupported`.

pub mod elem;
pub mod engine;
mod factory;

use crate::core_state::CoreState;
use crate::dispatch_dtype;
use crate::error::{Error, Result};
use crate::marshal::args::ScalarValue;
use crate::marshal::tensor::TensorView;
use elem::Elem;
use engine::check_operands;
use neuron_hal::Hal;

/// Elementwise one-operand functions (C values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum UnaryOp {
    /// |x|.
    Abs = 0,
    /// Round up.
    Ceil = 1,
    /// Round down.
    Floor = 2,
    /// Sine.
    Sin = 3,
    /// Cosine.
    Cos = 4,
    /// Tangent.
    Tan = 5,
    /// Natural logarithm.
    Log = 6,
    /// Base-2 logarithm.
    Log2 = 7,
    /// Base-10 logarithm.
    Log10 = 8,
    /// e^x.
    Exp = 9,
    /// Bitwise complement (integers).
    BitwiseNot = 10,
}

impl UnaryOp {
    /// Every op in code order.
    pub const ALL: [Self; 11] =
        [Self::Abs, Self::Ceil, Self::Floor, Self::Sin, Self::Cos, Self::Tan, Self::Log, Self::Log2, Self::Log10, Self::Exp, Self::BitwiseNot];

    /// The op numbered `v`.
    pub fn from_u32(v: u32) -> Result<Self> {
        Self::ALL.get(v as usize).copied().ok_or(Error::DtypeNotSupported)
    }

    fn accepts(self, float: bool) -> bool {
        match self {
            Self::Abs | Self::Ceil | Self::Floor => true,
            Self::BitwiseNot => !float,
            _ => float,
        }
    }

    fn apply<T: Elem>(self, x: T) -> T {
        if !T::FLOAT {
            let v = x.to_i64();
            return T::from_i64(match self {
                Self::Abs => v.wrapping_abs(),
                Self::BitwiseNot => !v,
                _ => v,
            });
        }
        let v = x.to_f32();
        T::from_f32(match self {
            Self::Abs => libm::fabsf(v),
            Self::Ceil => libm::ceilf(v),
            Self::Floor => libm::floorf(v),
            Self::Sin => libm::sinf(v),
            Self::Cos => libm::cosf(v),
            Self::Tan => libm::tanf(v),
            Self::Log => libm::logf(v),
            Self::Log2 => libm::log2f(v),
            Self::Log10 => libm::log10f(v),
            Self::Exp => libm::expf(v),
            Self::BitwiseNot => v,
        })
    }
}

/// Elementwise two-operand functions (C values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum BinaryOp {
    /// a + alpha·b.
    Add = 0,
    /// a − alpha·b.
    Sub = 1,
    /// a·b.
    Mul = 2,
    /// a / b (floating point).
    Div = 3,
    /// a & b (integers).
    BitwiseAnd = 4,
    /// a | b (integers).
    BitwiseOr = 5,
}

impl BinaryOp {
    /// Every op in code order.
    pub const ALL: [Self; 6] = [Self::Add, Self::Sub, Self::Mul, Self::Div, Self::BitwiseAnd, Self::BitwiseOr];

    /// The op numbered `v`.
    pub fn from_u32(v: u32) -> Result<Self> {
        Self::ALL.get(v as usize).copied().ok_or(Error::DtypeNotSupported)
    }

    fn accepts(self, float: bool) -> bool {
        match self {
            Self::Add | Self::Sub | Self::Mul => true,
            Self::Div => float,
            Self::BitwiseAnd | Self::BitwiseOr => !float,
        }
    }

    fn apply<T: Elem>(self, x: T, y: T, alpha: ScalarValue) -> T {
        if T::FLOAT {
            let (a, b, al) = (x.to_f32(), y.to_f32(), alpha.to_f64() as f32);
            return T::from_f32(match self {
                Self::Add => a + al * b,
                Self::Sub => a - al * b,
                Self::Mul => a * b,
                _ => a / b,
            });
        }
        let (a, b, al) = (x.to_i64(), y.to_i64(), alpha.to_i64());
        T::from_i64(match self {
            Self::Add => a.wrapping_add(al.wrapping_mul(b)),
            Self::Sub => a.wrapping_sub(al.wrapping_mul(b)),
            Self::Mul => a.wrapping_mul(b),
            Self::BitwiseAnd => a & b,
            Self::BitwiseOr => a | b,
            Self::Div => 0,
        })
    }
}

impl From<i64> for ScalarValue {
    fn from(v: i64) -> Self {
        ScalarValue::Int(v)
    }
}

impl From<i32> for ScalarValue {
    fn from(v: i32) -> Self {
        ScalarValue::Int(v as i64)
    }
}

impl From<f64> for ScalarValue {
    fn from(v: f64) -> Self {
        ScalarValue::Float(v)
    }
}

impl From<f32> for ScalarValue {
    fn from(v: f32) -> Self {
        ScalarValue::Float(v as f64)
    }
}

/// A scalar as an element of `T` (floats through f32, integers wrapping).
fn scalar<T: Elem>(v: ScalarValue) -> T {
    if T::FLOAT {
        T::from_f32(v.to_f64() as f32)
    } else {
        T::from_i64(v.to_i64())
    }
}

impl<H: Hal> CoreState<H> {
    /// `abs ceil floor sin cos tan log log2 log10 exp bitwise_not`, `_out`
    /// form: `dst = op(src)` (`dst` may be `src`).
    ///
    /// # Safety
    /// `dst` names SoC memory the caller may have written: the storage of a
    /// tensor this runtime handed out (the output or an `empty`
    /// result) and nothing the runtime or Rust keeps there (the libc heap's
    /// arena, a TCM buffer). The view's address is taken as given.
    pub unsafe fn op_unary(&mut self, op: UnaryOp, src: &TensorView, dst: &TensorView) -> Result<()> {
        let d = check_operands(dst, &[src])?;
        if !op.accepts(d.is_float()) {
            return Err(Error::DtypeNotSupported);
        }
        // SAFETY: `dst` is the caller's (this function's contract).
        dispatch_dtype!(d, T => unsafe { self.elementwise::<T>(dst, Some(src), None, |_, x, _| op.apply(x)) }, _ => Err(Error::DtypeNotSupported))
    }

    /// `add sub mul div bitwise_and bitwise_or`, `_out` form:
    /// `dst = a op b` (`alpha` scales `b` for add and sub).
    ///
    /// # Safety
    /// `dst` names SoC memory the caller may have written: the storage of a
    /// tensor this runtime handed out (the output or an `empty`
    /// result) and nothing the runtime or Rust keeps there (the libc heap's
    /// arena, a TCM buffer). The view's address is taken as given.
    pub unsafe fn op_binary(&mut self, op: BinaryOp, a: &TensorView, b: &TensorView, alpha: ScalarValue, dst: &TensorView) -> Result<()> {
        let d = check_operands(dst, &[a, b])?;
        if !op.accepts(d.is_float()) {
            return Err(Error::DtypeNotSupported);
        }
        // Integers scale by an integer: libtorch refuses a floating-point
        // alpha here rather than truncate it.
        if !d.is_float() && matches!(op, BinaryOp::Add | BinaryOp::Sub) && matches!(alpha, ScalarValue::Float(_)) {
            return Err(Error::AlphaNotIntegral);
        }
        // SAFETY: `dst` is the caller's (this function's contract).
        dispatch_dtype!(d, T => unsafe { self.elementwise::<T>(dst, Some(a), Some(b), |_, x, y| op.apply(x, y, alpha)) }, _ => Err(Error::DtypeNotSupported))
    }

    /// `pow(src, exponent)`, `_out` form (floating point).
    ///
    /// # Safety
    /// `dst` names SoC memory the caller may have written: the storage of a
    /// tensor this runtime handed out (the output or an `empty`
    /// result) and nothing the runtime or Rust keeps there (the libc heap's
    /// arena, a TCM buffer). The view's address is taken as given.
    pub unsafe fn op_pow(&mut self, src: &TensorView, exponent: f64, dst: &TensorView) -> Result<()> {
        let d = check_operands(dst, &[src])?;
        if !d.is_float() {
            return Err(Error::DtypeNotSupported);
        }
        let e = exponent as f32;
        // SAFETY: `dst` is the caller's (this function's contract).
        dispatch_dtype!(d, T => unsafe { self.elementwise::<T>(dst, Some(src), None, |_, x, _| T::from_f32(libm::powf(x.to_f32(), e))) }, _ => Err(Error::DtypeNotSupported))
    }

    /// `clamp(src, min, max)`, `_out` form: `min(max(x, min), max)`; NaN
    /// stays NaN.
    ///
    /// # Safety
    /// `dst` names SoC memory the caller may have written: the storage of a
    /// tensor this runtime handed out (the output or an `empty`
    /// result) and nothing the runtime or Rust keeps there (the libc heap's
    /// arena, a TCM buffer). The view's address is taken as given.
    pub unsafe fn op_clamp(&mut self, src: &TensorView, min: ScalarValue, max: ScalarValue, dst: &TensorView) -> Result<()> {
        let d = check_operands(dst, &[src])?;
        dispatch_dtype!(d, T => {
            // Integer bounds saturate at the type's range (clamping a u8
            // to [-20, 30] keeps 0..=30), float bounds convert.
            let bound = |v: ScalarValue| if T::FLOAT { scalar::<T>(v) } else { T::from_i64_saturating(v.to_i64()) };
            let (lo, hi) = (bound(min), bound(max));
            // SAFETY: `dst` is the caller's (this function's contract).
            unsafe {
                self.elementwise::<T>(dst, Some(src), None, |_, x, _| {
                    let v = if x < lo { lo } else { x };
                    if v > hi { hi } else { v }
                })
            }
        }, _ => Err(Error::DtypeNotSupported))
    }

    /// `fill_(dst, value)`. Every writer here takes its destination's
    /// address from a view, which is plain data, so safe code cannot call
    /// one:
    ///
    /// ```compile_fail,E0133
    /// use neuron_runtime::marshal::{ScalarValue, TensorView};
    /// fn f(s: &mut neuron_runtime::CoreState<impl neuron_hal::Hal>, any: &TensorView) {
    ///     let _ = s.op_fill(any, ScalarValue::Int(0));
    /// }
    /// ```
    ///
    /// ```compile_fail,E0133
    /// use neuron_runtime::marshal::TensorView;
    /// fn f(s: &mut neuron_runtime::CoreState<impl neuron_hal::Hal>, any: &TensorView) {
    ///     let _ = s.elementwise::<f32>(any, None, None, |_, _, _| 0.0);
    /// }
    /// ```
    ///
    /// # Safety
    /// `dst` names SoC memory the caller may have written: the storage of a
    /// tensor this runtime handed out (the output or an `empty`
    /// result) and nothing the runtime or Rust keeps there (the libc heap's
    /// arena, a TCM buffer). The view's address is taken as given.
    pub unsafe fn op_fill(&mut self, dst: &TensorView, value: ScalarValue) -> Result<()> {
        let d = check_operands(dst, &[])?;
        dispatch_dtype!(d, T => {
            let v = scalar::<T>(value);
            if zero_bits(v) {
                // `elementwise` writes the `numel` elements from the start.
                let bytes = dst.numel as u64 * size_of::<T>() as u64;
                if self.hal.reads_zero(dst.storage.addr, bytes) {
                    self.hal.note_soc_write(dst.storage.addr, bytes);
                    return Ok(());
                }
            }
            // SAFETY: `dst` is the caller's (this function's contract).
            unsafe { self.elementwise::<T>(dst, None, None, |_, _, _| v) }
        }, _ => Err(Error::DtypeNotSupported))
    }

    /// `eye`'s fill: a 2-D `dst` becomes the identity (1 where row ==
    /// column, else 0).
    ///
    /// # Safety
    /// `dst` names SoC memory the caller may have written: the storage of a
    /// tensor this runtime handed out (the output or an `empty`
    /// result) and nothing the runtime or Rust keeps there (the libc heap's
    /// arena, a TCM buffer). The view's address is taken as given.
    pub unsafe fn op_eye(&mut self, dst: &TensorView) -> Result<()> {
        let d = check_operands(dst, &[])?;
        if dst.num_dim != 2 {
            return Err(Error::RankMismatch);
        }
        let cols = dst.sizes[1] as u64;
        // SAFETY: `dst` is the caller's (this function's contract).
        dispatch_dtype!(d, T => unsafe { self.elementwise::<T>(dst, None, None, |i, _, _| T::from_i64((i / cols == i % cols) as i64)) }, _ => Err(Error::DtypeNotSupported))
    }
}

/// Whether `v`'s bytes are all zero (`-0.0` is not).
fn zero_bits<T: Elem>(v: T) -> bool {
    let mut b = [0u8; 8];
    // SAFETY: every element type is at most 8 bytes: `b` holds one.
    unsafe { v.store(b.as_mut_ptr()) };
    b == [0; 8]
}
