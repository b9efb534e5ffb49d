//! The C math functions libc++'s `<cmath>` forwards to that Rust's
//! `compiler_builtins` does not export (it has `sin`, `sqrt`, `fmod`, ...;
//! not these): from the `libm` crate, the same port of musl's libm. With
//! them every `std::` function of `<cmath>` links on the device. Each is
//! its own section: a kernel that calls none links none.

use core::ffi::{c_int, c_long, c_longlong};

/// `atanh`.
#[unsafe(no_mangle)]
pub extern "C" fn atanh(x: f64) -> f64 {
    libm::atanh(x)
}

/// `atanhf`.
#[unsafe(no_mangle)]
pub extern "C" fn atanhf(x: f32) -> f32 {
    libm::atanhf(x)
}

/// `lgamma`.
#[unsafe(no_mangle)]
pub extern "C" fn lgamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// `lgammaf`.
#[unsafe(no_mangle)]
pub extern "C" fn lgammaf(x: f32) -> f32 {
    libm::lgammaf(x)
}

/// `frexp`: the mantissa in [0.5, 1) and `*e` the exponent.
///
/// # Safety
/// `e` is null or valid for a write of an `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn frexp(x: f64, e: *mut c_int) -> f64 {
    let (m, n) = libm::frexp(x);
    // SAFETY: the caller's contract (null: the exponent is dropped).
    if let Some(e) = unsafe { e.as_mut() } {
        *e = n;
    }
    m
}

/// `frexpf`.
///
/// # Safety
/// As [`frexp`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn frexpf(x: f32, e: *mut c_int) -> f32 {
    let (m, n) = libm::frexpf(x);
    // SAFETY: the caller's contract (null: the exponent is dropped).
    if let Some(e) = unsafe { e.as_mut() } {
        *e = n;
    }
    m
}

/// `modf`: the fraction, and `*i` the integral part.
///
/// # Safety
/// `i` is null or valid for a write of a `double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn modf(x: f64, i: *mut f64) -> f64 {
    let (f, n) = libm::modf(x);
    // SAFETY: the caller's contract (null: the integral part is dropped).
    if let Some(i) = unsafe { i.as_mut() } {
        *i = n;
    }
    f
}

/// `modff`.
///
/// # Safety
/// `i` is null or valid for a write of a `float`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn modff(x: f32, i: *mut f32) -> f32 {
    let (f, n) = libm::modff(x);
    // SAFETY: the caller's contract (null: the integral part is dropped).
    if let Some(i) = unsafe { i.as_mut() } {
        *i = n;
    }
    f
}

/// `remquo`: the remainder, and in `*q` the low bits and sign of the quotient.
///
/// # Safety
/// `q` is null or valid for a write of an `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn remquo(x: f64, y: f64, q: *mut c_int) -> f64 {
    let (r, n) = libm::remquo(x, y);
    // SAFETY: the caller's contract (null: the quotient is dropped).
    if let Some(q) = unsafe { q.as_mut() } {
        *q = n;
    }
    r
}

/// `remquof`.
///
/// # Safety
/// As [`remquo`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn remquof(x: f32, y: f32, q: *mut c_int) -> f32 {
    let (r, n) = libm::remquof(x, y);
    // SAFETY: the caller's contract (null: the quotient is dropped).
    if let Some(q) = unsafe { q.as_mut() } {
        *q = n;
    }
    r
}

/// `remainder` (IEEE: the quotient rounded to even).
#[unsafe(no_mangle)]
pub extern "C" fn remainder(x: f64, y: f64) -> f64 {
    libm::remainder(x, y)
}

/// `remainderf`.
#[unsafe(no_mangle)]
pub extern "C" fn remainderf(x: f32, y: f32) -> f32 {
    libm::remainderf(x, y)
}

/// `nearbyint`: `rint` (there is no floating-point environment to keep).
#[unsafe(no_mangle)]
pub extern "C" fn nearbyint(x: f64) -> f64 {
    libm::rint(x)
}

/// `nearbyintf`.
#[unsafe(no_mangle)]
pub extern "C" fn nearbyintf(x: f32) -> f32 {
    libm::rintf(x)
}

/// `lrint` (out of range: saturated; C leaves it unspecified).
#[unsafe(no_mangle)]
pub extern "C" fn lrint(x: f64) -> c_long {
    libm::rint(x) as c_long
}

/// `lrintf`.
#[unsafe(no_mangle)]
pub extern "C" fn lrintf(x: f32) -> c_long {
    libm::rintf(x) as c_long
}

/// `llrint`.
#[unsafe(no_mangle)]
pub extern "C" fn llrint(x: f64) -> c_longlong {
    libm::rint(x) as c_longlong
}

/// `llrintf`.
#[unsafe(no_mangle)]
pub extern "C" fn llrintf(x: f32) -> c_longlong {
    libm::rintf(x) as c_longlong
}

/// `lround` (half away from zero).
#[unsafe(no_mangle)]
pub extern "C" fn lround(x: f64) -> c_long {
    libm::round(x) as c_long
}

/// `lroundf`.
#[unsafe(no_mangle)]
pub extern "C" fn lroundf(x: f32) -> c_long {
    libm::roundf(x) as c_long
}

/// `llround`.
#[unsafe(no_mangle)]
pub extern "C" fn llround(x: f64) -> c_longlong {
    libm::round(x) as c_longlong
}

/// `llroundf`.
#[unsafe(no_mangle)]
pub extern "C" fn llroundf(x: f32) -> c_longlong {
    libm::roundf(x) as c_longlong
}

/// `scalbn`: x·2^n.
#[unsafe(no_mangle)]
pub extern "C" fn scalbn(x: f64, n: c_int) -> f64 {
    libm::scalbn(x, n)
}

/// `scalbnf`.
#[unsafe(no_mangle)]
pub extern "C" fn scalbnf(x: f32, n: c_int) -> f32 {
    libm::scalbnf(x, n)
}

/// `scalbln` (`long` is `int`'s width on the Xtensa core).
#[unsafe(no_mangle)]
pub extern "C" fn scalbln(x: f64, n: c_long) -> f64 {
    libm::scalbn(x, n)
}

/// `scalblnf`.
#[unsafe(no_mangle)]
pub extern "C" fn scalblnf(x: f32, n: c_long) -> f32 {
    libm::scalbnf(x, n)
}

/// `ilogb`: the unbiased exponent.
#[unsafe(no_mangle)]
pub extern "C" fn ilogb(x: f64) -> c_int {
    libm::ilogb(x)
}

/// `ilogbf`.
#[unsafe(no_mangle)]
pub extern "C" fn ilogbf(x: f32) -> c_int {
    libm::ilogbf(x)
}

/// `logb`: the exponent as a float (0: -inf; inf and NaN: themselves).
#[unsafe(no_mangle)]
pub extern "C" fn logb(x: f64) -> f64 {
    if x == 0.0 {
        f64::NEG_INFINITY
    } else if !x.is_finite() {
        x * x
    } else {
        f64::from(libm::ilogb(x))
    }
}

/// `logbf`.
#[unsafe(no_mangle)]
pub extern "C" fn logbf(x: f32) -> f32 {
    if x == 0.0 {
        f32::NEG_INFINITY
    } else if !x.is_finite() {
        x * x
    } else {
        libm::ilogbf(x) as f32
    }
}

/// `nextafter`.
#[unsafe(no_mangle)]
pub extern "C" fn nextafter(x: f64, y: f64) -> f64 {
    libm::nextafter(x, y)
}

/// `nextafterf`.
#[unsafe(no_mangle)]
pub extern "C" fn nextafterf(x: f32, y: f32) -> f32 {
    libm::nextafterf(x, y)
}

/// `nexttoward` (`long double` is `double` on the Xtensa core).
#[unsafe(no_mangle)]
pub extern "C" fn nexttoward(x: f64, y: f64) -> f64 {
    libm::nextafter(x, y)
}

/// `nexttowardf`: the float after `x` in the direction of the double `y`.
#[unsafe(no_mangle)]
pub extern "C" fn nexttowardf(x: f32, y: f64) -> f32 {
    if x.is_nan() || y.is_nan() {
        return (f64::from(x) + y) as f32;
    }
    let xd = f64::from(x);
    if xd == y {
        return y as f32;
    }
    libm::nextafterf(x, if y > xd { f32::INFINITY } else { f32::NEG_INFINITY })
}

/// `nan(tag)`: a quiet NaN (the tag's payload is not used).
#[unsafe(no_mangle)]
pub extern "C" fn nan(_tag: *const core::ffi::c_char) -> f64 {
    f64::NAN
}

/// `nanf(tag)`.
#[unsafe(no_mangle)]
pub extern "C" fn nanf(_tag: *const core::ffi::c_char) -> f32 {
    f32::NAN
}
