//! Rounding to an integral value, the integer conversions, absolute value,
//! minimum and maximum, remainders and the fused multiply-add: the exact
//! functions (every result is the one correctly rounded, so any libm gives
//! the same bits; these are here so that a kernel's calls all land in one
//! library). Each is the `libm` crate's, float and double.

use core::ffi::{c_long, c_longlong};

c_math! {
    /// `ceil`: the least integral value ≥ x.
    pub fn ceil(x: f64) -> f64 {
        libm::ceil(x)
    }

    /// `ceilf`: the least integral value ≥ x.
    pub fn ceilf(x: f32) -> f32 {
        libm::ceilf(x)
    }

    /// `floor`: the greatest integral value ≤ x.
    pub fn floor(x: f64) -> f64 {
        libm::floor(x)
    }

    /// `floorf`: the greatest integral value ≤ x.
    pub fn floorf(x: f32) -> f32 {
        libm::floorf(x)
    }

    /// `trunc`: x rounded toward zero.
    pub fn trunc(x: f64) -> f64 {
        libm::trunc(x)
    }

    /// `truncf`: x rounded toward zero.
    pub fn truncf(x: f32) -> f32 {
        libm::truncf(x)
    }

    /// `round`: x rounded half away from zero.
    pub fn round(x: f64) -> f64 {
        libm::round(x)
    }

    /// `roundf`: x rounded half away from zero.
    pub fn roundf(x: f32) -> f32 {
        libm::roundf(x)
    }

    /// `roundeven`: x rounded half to even.
    pub fn roundeven(x: f64) -> f64 {
        libm::roundeven(x)
    }

    /// `roundevenf`: x rounded half to even.
    pub fn roundevenf(x: f32) -> f32 {
        libm::roundevenf(x)
    }

    /// `rint`: x rounded in the current mode (to nearest even: there is no other).
    pub fn rint(x: f64) -> f64 {
        libm::rint(x)
    }

    /// `rintf`: x rounded in the current mode (to nearest even: there is no other).
    pub fn rintf(x: f32) -> f32 {
        libm::rintf(x)
    }

    /// `fabs`: |x|.
    pub fn fabs(x: f64) -> f64 {
        libm::fabs(x)
    }

    /// `fabsf`: |x|.
    pub fn fabsf(x: f32) -> f32 {
        libm::fabsf(x)
    }

    /// `nearbyint`: `rint` (there is no floating-point environment to keep).
    pub fn nearbyint(x: f64) -> f64 {
        libm::rint(x)
    }

    /// `nearbyintf`: `rintf`.
    pub fn nearbyintf(x: f32) -> f32 {
        libm::rintf(x)
    }

    /// `lrint`: x rounded to nearest even, as a `long` (out of range: saturated; C leaves it unspecified).
    pub fn lrint(x: f64) -> c_long {
        libm::rint(x) as c_long
    }

    /// `lrintf`: x rounded to nearest even, as a `long` (out of range: saturated; C leaves it unspecified).
    pub fn lrintf(x: f32) -> c_long {
        libm::rintf(x) as c_long
    }

    /// `llrint`: as `lrint`, a `long long`.
    pub fn llrint(x: f64) -> c_longlong {
        libm::rint(x) as c_longlong
    }

    /// `llrintf`: as `lrint`, a `long long`.
    pub fn llrintf(x: f32) -> c_longlong {
        libm::rintf(x) as c_longlong
    }

    /// `lround`: x rounded half away from zero, as a `long` (out of range: saturated).
    pub fn lround(x: f64) -> c_long {
        libm::round(x) as c_long
    }

    /// `lroundf`: x rounded half away from zero, as a `long` (out of range: saturated).
    pub fn lroundf(x: f32) -> c_long {
        libm::roundf(x) as c_long
    }

    /// `llround`: as `lround`, a `long long`.
    pub fn llround(x: f64) -> c_longlong {
        libm::round(x) as c_longlong
    }

    /// `llroundf`: as `lround`, a `long long`.
    pub fn llroundf(x: f32) -> c_longlong {
        libm::roundf(x) as c_longlong
    }

    /// `fdim`: x - y when x > y, else +0.
    pub fn fdim(x: f64, y: f64) -> f64 {
        libm::fdim(x, y)
    }

    /// `fdimf`: x - y when x > y, else +0.
    pub fn fdimf(x: f32, y: f32) -> f32 {
        libm::fdimf(x, y)
    }

    /// `fmax`: the larger (a NaN loses to a number).
    pub fn fmax(x: f64, y: f64) -> f64 {
        libm::fmax(x, y)
    }

    /// `fmaxf`: the larger (a NaN loses to a number).
    pub fn fmaxf(x: f32, y: f32) -> f32 {
        libm::fmaxf(x, y)
    }

    /// `fmin`: the smaller (a NaN loses to a number).
    pub fn fmin(x: f64, y: f64) -> f64 {
        libm::fmin(x, y)
    }

    /// `fminf`: the smaller (a NaN loses to a number).
    pub fn fminf(x: f32, y: f32) -> f32 {
        libm::fminf(x, y)
    }

    /// `fmaximum`: the larger (IEEE 754-2019: a NaN wins, -0 < +0).
    pub fn fmaximum(x: f64, y: f64) -> f64 {
        libm::fmaximum(x, y)
    }

    /// `fmaximumf`: the larger (IEEE 754-2019: a NaN wins, -0 < +0).
    pub fn fmaximumf(x: f32, y: f32) -> f32 {
        libm::fmaximumf(x, y)
    }

    /// `fminimum`: the smaller (IEEE 754-2019: a NaN wins, -0 < +0).
    pub fn fminimum(x: f64, y: f64) -> f64 {
        libm::fminimum(x, y)
    }

    /// `fminimumf`: the smaller (IEEE 754-2019: a NaN wins, -0 < +0).
    pub fn fminimumf(x: f32, y: f32) -> f32 {
        libm::fminimumf(x, y)
    }

    /// `fmaximum_num`: the larger (IEEE 754-2019: a NaN loses, -0 < +0).
    pub fn fmaximum_num(x: f64, y: f64) -> f64 {
        libm::fmaximum_num(x, y)
    }

    /// `fmaximum_numf`: the larger (IEEE 754-2019: a NaN loses, -0 < +0).
    pub fn fmaximum_numf(x: f32, y: f32) -> f32 {
        libm::fmaximum_numf(x, y)
    }

    /// `fminimum_num`: the smaller (IEEE 754-2019: a NaN loses, -0 < +0).
    pub fn fminimum_num(x: f64, y: f64) -> f64 {
        libm::fminimum_num(x, y)
    }

    /// `fminimum_numf`: the smaller (IEEE 754-2019: a NaN loses, -0 < +0).
    pub fn fminimum_numf(x: f32, y: f32) -> f32 {
        libm::fminimum_numf(x, y)
    }

    /// `fmod`: x - n·y, n = x/y truncated.
    pub fn fmod(x: f64, y: f64) -> f64 {
        libm::fmod(x, y)
    }

    /// `fmodf`: x - n·y, n = x/y truncated.
    pub fn fmodf(x: f32, y: f32) -> f32 {
        libm::fmodf(x, y)
    }

    /// `remainder`: x - n·y, n = x/y rounded to even (IEEE).
    pub fn remainder(x: f64, y: f64) -> f64 {
        libm::remainder(x, y)
    }

    /// `remainderf`: x - n·y, n = x/y rounded to even (IEEE).
    pub fn remainderf(x: f32, y: f32) -> f32 {
        libm::remainderf(x, y)
    }

    /// `fma`: x·y + z rounded once.
    pub fn fma(x: f64, y: f64, z: f64) -> f64 {
        libm::fma(x, y, z)
    }

    /// `fmaf`: x·y + z rounded once.
    pub fn fmaf(x: f32, y: f32, z: f32) -> f32 {
        libm::fmaf(x, y, z)
    }
}
