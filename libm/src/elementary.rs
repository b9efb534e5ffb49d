//! The elementary and special functions: exponentials, logarithms,
//! powers, roots, trigonometric and hyperbolic functions and their
//! inverses, the error and gamma functions, Bessel functions. Each is the
//! `libm` crate's, float and double.

use core::ffi::c_int;

c_math! {
    /// `acos`: arc cosine.
    pub fn acos(x: f64) -> f64 {
        libm::acos(x)
    }

    /// `acosf`: arc cosine.
    pub fn acosf(x: f32) -> f32 {
        libm::acosf(x)
    }

    /// `acosh`: inverse hyperbolic cosine.
    pub fn acosh(x: f64) -> f64 {
        libm::acosh(x)
    }

    /// `acoshf`: inverse hyperbolic cosine.
    pub fn acoshf(x: f32) -> f32 {
        libm::acoshf(x)
    }

    /// `asin`: arc sine.
    pub fn asin(x: f64) -> f64 {
        libm::asin(x)
    }

    /// `asinf`: arc sine.
    pub fn asinf(x: f32) -> f32 {
        libm::asinf(x)
    }

    /// `asinh`: inverse hyperbolic sine.
    pub fn asinh(x: f64) -> f64 {
        libm::asinh(x)
    }

    /// `asinhf`: inverse hyperbolic sine.
    pub fn asinhf(x: f32) -> f32 {
        libm::asinhf(x)
    }

    /// `atan`: arc tangent.
    pub fn atan(x: f64) -> f64 {
        libm::atan(x)
    }

    /// `atanf`: arc tangent.
    pub fn atanf(x: f32) -> f32 {
        libm::atanf(x)
    }

    /// `atanh`: inverse hyperbolic tangent.
    pub fn atanh(x: f64) -> f64 {
        libm::atanh(x)
    }

    /// `atanhf`: inverse hyperbolic tangent.
    pub fn atanhf(x: f32) -> f32 {
        libm::atanhf(x)
    }

    /// `cbrt`: cube root.
    pub fn cbrt(x: f64) -> f64 {
        libm::cbrt(x)
    }

    /// `cbrtf`: cube root.
    pub fn cbrtf(x: f32) -> f32 {
        libm::cbrtf(x)
    }

    /// `cos`: cosine.
    pub fn cos(x: f64) -> f64 {
        libm::cos(x)
    }

    /// `cosf`: cosine.
    pub fn cosf(x: f32) -> f32 {
        libm::cosf(x)
    }

    /// `cosh`: hyperbolic cosine.
    pub fn cosh(x: f64) -> f64 {
        libm::cosh(x)
    }

    /// `coshf`: hyperbolic cosine.
    pub fn coshf(x: f32) -> f32 {
        libm::coshf(x)
    }

    /// `erf`: error function.
    pub fn erf(x: f64) -> f64 {
        libm::erf(x)
    }

    /// `erff`: error function.
    pub fn erff(x: f32) -> f32 {
        libm::erff(x)
    }

    /// `erfc`: complementary error function.
    pub fn erfc(x: f64) -> f64 {
        libm::erfc(x)
    }

    /// `erfcf`: complementary error function.
    pub fn erfcf(x: f32) -> f32 {
        libm::erfcf(x)
    }

    /// `exp`: e^x.
    pub fn exp(x: f64) -> f64 {
        libm::exp(x)
    }

    /// `expf`: e^x.
    pub fn expf(x: f32) -> f32 {
        libm::expf(x)
    }

    /// `exp2`: 2^x.
    pub fn exp2(x: f64) -> f64 {
        libm::exp2(x)
    }

    /// `exp2f`: 2^x.
    pub fn exp2f(x: f32) -> f32 {
        libm::exp2f(x)
    }

    /// `exp10`: 10^x.
    pub fn exp10(x: f64) -> f64 {
        libm::exp10(x)
    }

    /// `exp10f`: 10^x.
    pub fn exp10f(x: f32) -> f32 {
        libm::exp10f(x)
    }

    /// `expm1`: e^x - 1.
    pub fn expm1(x: f64) -> f64 {
        libm::expm1(x)
    }

    /// `expm1f`: e^x - 1.
    pub fn expm1f(x: f32) -> f32 {
        libm::expm1f(x)
    }

    /// `j0`: Bessel function of the first kind, order 0.
    pub fn j0(x: f64) -> f64 {
        libm::j0(x)
    }

    /// `j0f`: Bessel function of the first kind, order 0.
    pub fn j0f(x: f32) -> f32 {
        libm::j0f(x)
    }

    /// `j1`: Bessel function of the first kind, order 1.
    pub fn j1(x: f64) -> f64 {
        libm::j1(x)
    }

    /// `j1f`: Bessel function of the first kind, order 1.
    pub fn j1f(x: f32) -> f32 {
        libm::j1f(x)
    }

    /// `lgamma`: log |Γ(x)| (the sign is not stored: no `signgam`).
    pub fn lgamma(x: f64) -> f64 {
        libm::lgamma(x)
    }

    /// `lgammaf`: log |Γ(x)| (the sign is not stored: no `signgam`).
    pub fn lgammaf(x: f32) -> f32 {
        libm::lgammaf(x)
    }

    /// `log`: natural logarithm.
    pub fn log(x: f64) -> f64 {
        libm::log(x)
    }

    /// `logf`: natural logarithm.
    pub fn logf(x: f32) -> f32 {
        libm::logf(x)
    }

    /// `log10`: base-10 logarithm.
    pub fn log10(x: f64) -> f64 {
        libm::log10(x)
    }

    /// `log10f`: base-10 logarithm.
    pub fn log10f(x: f32) -> f32 {
        libm::log10f(x)
    }

    /// `log1p`: ln(1 + x).
    pub fn log1p(x: f64) -> f64 {
        libm::log1p(x)
    }

    /// `log1pf`: ln(1 + x).
    pub fn log1pf(x: f32) -> f32 {
        libm::log1pf(x)
    }

    /// `log2`: base-2 logarithm.
    pub fn log2(x: f64) -> f64 {
        libm::log2(x)
    }

    /// `log2f`: base-2 logarithm.
    pub fn log2f(x: f32) -> f32 {
        libm::log2f(x)
    }

    /// `sin`: sine.
    pub fn sin(x: f64) -> f64 {
        libm::sin(x)
    }

    /// `sinf`: sine.
    pub fn sinf(x: f32) -> f32 {
        libm::sinf(x)
    }

    /// `sinh`: hyperbolic sine.
    pub fn sinh(x: f64) -> f64 {
        libm::sinh(x)
    }

    /// `sinhf`: hyperbolic sine.
    pub fn sinhf(x: f32) -> f32 {
        libm::sinhf(x)
    }

    /// `sqrt`: square root.
    pub fn sqrt(x: f64) -> f64 {
        libm::sqrt(x)
    }

    /// `sqrtf`: square root.
    pub fn sqrtf(x: f32) -> f32 {
        libm::sqrtf(x)
    }

    /// `tan`: tangent.
    pub fn tan(x: f64) -> f64 {
        libm::tan(x)
    }

    /// `tanf`: tangent.
    pub fn tanf(x: f32) -> f32 {
        libm::tanf(x)
    }

    /// `tanh`: hyperbolic tangent.
    pub fn tanh(x: f64) -> f64 {
        libm::tanh(x)
    }

    /// `tanhf`: hyperbolic tangent.
    pub fn tanhf(x: f32) -> f32 {
        libm::tanhf(x)
    }

    /// `tgamma`: Γ(x).
    pub fn tgamma(x: f64) -> f64 {
        libm::tgamma(x)
    }

    /// `tgammaf`: Γ(x).
    pub fn tgammaf(x: f32) -> f32 {
        libm::tgammaf(x)
    }

    /// `y0`: Bessel function of the second kind, order 0.
    pub fn y0(x: f64) -> f64 {
        libm::y0(x)
    }

    /// `y0f`: Bessel function of the second kind, order 0.
    pub fn y0f(x: f32) -> f32 {
        libm::y0f(x)
    }

    /// `y1`: Bessel function of the second kind, order 1.
    pub fn y1(x: f64) -> f64 {
        libm::y1(x)
    }

    /// `y1f`: Bessel function of the second kind, order 1.
    pub fn y1f(x: f32) -> f32 {
        libm::y1f(x)
    }

    /// `atan2`: arc tangent of y/x (first argument y), in the quadrant of (x, y).
    pub fn atan2(y: f64, x: f64) -> f64 {
        libm::atan2(y, x)
    }

    /// `atan2f`: arc tangent of y/x (first argument y), in the quadrant of (x, y).
    pub fn atan2f(y: f32, x: f32) -> f32 {
        libm::atan2f(y, x)
    }

    /// `hypot`: √(x² + y²) without overflow.
    pub fn hypot(x: f64, y: f64) -> f64 {
        libm::hypot(x, y)
    }

    /// `hypotf`: √(x² + y²) without overflow.
    pub fn hypotf(x: f32, y: f32) -> f32 {
        libm::hypotf(x, y)
    }

    /// `pow`: x^y.
    pub fn pow(x: f64, y: f64) -> f64 {
        libm::pow(x, y)
    }

    /// `powf`: x^y.
    pub fn powf(x: f32, y: f32) -> f32 {
        libm::powf(x, y)
    }

    /// `jn`: Bessel function of the first kind, order `n`.
    pub fn jn(n: c_int, x: f64) -> f64 {
        libm::jn(n, x)
    }

    /// `jnf`.
    pub fn jnf(n: c_int, x: f32) -> f32 {
        libm::jnf(n, x)
    }

    /// `yn`: Bessel function of the second kind, order `n`.
    pub fn yn(n: c_int, x: f64) -> f64 {
        libm::yn(n, x)
    }

    /// `ynf`.
    pub fn ynf(n: c_int, x: f32) -> f32 {
        libm::ynf(n, x)
    }
}
