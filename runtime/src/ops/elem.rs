//! The element types of the eight marshallable dtypes, as the tensor
//! operations see them: load/store from little-endian bytes, and the two
//! arithmetic views (float ops in f32, integer ops in wrapping i64).

use crate::marshal::dtype::Dtype;
use half::{bf16, f16};

/// Sealed: only the eight element types below implement [`Elem`]. The
/// kernel API reads tensor bytes as `T: Elem`, which is sound only for a
/// type every bit pattern of whose size is a valid value (integers,
/// `f32`, `f16`, `bf16`); a user `impl Elem for bool` would make that UB
/// from safe code, so no other crate can write one.
mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for i8 {}
    impl Sealed for i16 {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
    impl Sealed for f32 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
}

/// An element type of one of the eight dtypes. Sealed (see the private
/// `sealed` module): every implementor is plain data for which any bit
/// pattern of its size is a valid value, so reading tensor bytes as it is
/// sound.
///
/// ```compile_fail,E0277
/// use neuron_runtime::ops::elem::Elem;
/// #[derive(Clone, Copy, PartialEq, PartialOrd)]
/// struct Flag(bool);
/// impl Elem for Flag {
///     const DTYPE: neuron_runtime::marshal::dtype::Dtype = neuron_runtime::marshal::dtype::Dtype::Uint8;
///     const FLOAT: bool = false;
///     unsafe fn load(p: *const u8) -> Self { Flag(unsafe { *p } != 0) }
///     unsafe fn store(self, p: *mut u8) { unsafe { *p = self.0 as u8 } }
///     fn to_f32(self) -> f32 { 0.0 }
///     fn from_f32(_: f32) -> Self { Flag(false) }
///     fn to_i64(self) -> i64 { 0 }
///     fn from_i64(_: i64) -> Self { Flag(false) }
///     fn from_i64_saturating(_: i64) -> Self { Flag(false) }
/// }
/// ```
pub trait Elem: Copy + PartialOrd + sealed::Sealed {
    /// Its dtype.
    const DTYPE: Dtype;
    /// Whether it is a floating-point type.
    const FLOAT: bool;
    /// Reads one element at `p` (unaligned).
    ///
    /// # Safety
    /// `p` readable for `size_of::<Self>()` bytes.
    unsafe fn load(p: *const u8) -> Self;
    /// Writes one element at `p` (unaligned).
    ///
    /// # Safety
    /// `p` writable for `size_of::<Self>()` bytes.
    unsafe fn store(self, p: *mut u8);
    /// As f32 (integers convert as C does).
    fn to_f32(self) -> f32;
    /// From f32 (round to nearest for half types; integers as Rust `as`).
    fn from_f32(v: f32) -> Self;
    /// As i64 (floats truncate toward zero, saturating).
    fn to_i64(self) -> i64;
    /// From i64, wrapping to the type's width (floats convert).
    fn from_i64(v: i64) -> Self;
    /// From i64, saturating at the type's range (floats convert).
    fn from_i64_saturating(v: i64) -> Self;
}

macro_rules! int_elem {
    ($t:ty, $d:ident) => {
        impl Elem for $t {
            const DTYPE: Dtype = Dtype::$d;
            const FLOAT: bool = false;
            unsafe fn load(p: *const u8) -> Self {
                // SAFETY: forwarded from the caller.
                unsafe { p.cast::<$t>().read_unaligned() }
            }
            unsafe fn store(self, p: *mut u8) {
                // SAFETY: forwarded from the caller.
                unsafe { p.cast::<$t>().write_unaligned(self) }
            }
            fn to_f32(self) -> f32 {
                self as f32
            }
            fn from_f32(v: f32) -> Self {
                v as $t
            }
            fn to_i64(self) -> i64 {
                self as i64
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn from_i64_saturating(v: i64) -> Self {
                v.clamp(<$t>::MIN as i64, <$t>::MAX as i64) as $t
            }
        }
    };
}
int_elem!(u8, Uint8);
int_elem!(i8, Int8);
int_elem!(i16, Int16);
int_elem!(i32, Int32);
int_elem!(i64, Int64);

macro_rules! float_elem {
    ($t:ty, $d:ident, $to:expr, $from:expr) => {
        impl Elem for $t {
            const DTYPE: Dtype = Dtype::$d;
            const FLOAT: bool = true;
            unsafe fn load(p: *const u8) -> Self {
                // SAFETY: forwarded from the caller.
                unsafe { p.cast::<$t>().read_unaligned() }
            }
            unsafe fn store(self, p: *mut u8) {
                // SAFETY: forwarded from the caller.
                unsafe { p.cast::<$t>().write_unaligned(self) }
            }
            fn to_f32(self) -> f32 {
                $to(self)
            }
            fn from_f32(v: f32) -> Self {
                $from(v)
            }
            fn to_i64(self) -> i64 {
                $to(self) as i64
            }
            fn from_i64(v: i64) -> Self {
                $from(v as f32)
            }
            fn from_i64_saturating(v: i64) -> Self {
                $from(v as f32)
            }
        }
    };
}
float_elem!(f32, Fp32, |x: f32| x, |v: f32| v);
float_elem!(f16, Fp16, f16::to_f32, f16::from_f32);
float_elem!(bf16, Bfloat16, bf16::to_f32, bf16::from_f32);

/// Runs `$body` with `$T` bound to the element type of `$dtype`; any other
/// dtype evaluates `$other`.
#[macro_export]
#[doc(hidden)]
macro_rules! dispatch_dtype {
    ($dtype:expr, $T:ident => $body:expr, _ => $other:expr) => {
        match $dtype {
            $crate::marshal::dtype::Dtype::Uint8 => {
                type $T = u8;
                $body
            }
            $crate::marshal::dtype::Dtype::Int8 => {
                type $T = i8;
                $body
            }
            $crate::marshal::dtype::Dtype::Int16 => {
                type $T = i16;
                $body
            }
            $crate::marshal::dtype::Dtype::Int32 => {
                type $T = i32;
                $body
            }
            $crate::marshal::dtype::Dtype::Int64 => {
                type $T = i64;
                $body
            }
            $crate::marshal::dtype::Dtype::Fp16 => {
                type $T = $crate::half::f16;
                $body
            }
            $crate::marshal::dtype::Dtype::Bfloat16 => {
                type $T = $crate::half::bf16;
                $body
            }
            $crate::marshal::dtype::Dtype::Fp32 => {
                type $T = f32;
                $body
            }
            _ => $other,
        }
    };
}
