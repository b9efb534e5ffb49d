//! The functions that take a number apart or put it together: mantissa
//! and exponent (`frexp`, `ldexp`, `scalbn`, `ilogb`, `logb`), integral and
//! fractional parts (`modf`), the quotient's low bits (`remquo`), the sign
//! (`copysign`, `lgamma_r`'s), the neighbours (`nextafter`), NaN, and
//! `sincos` (which a host compiler calls for a `sin` and a `cos` of the
//! same argument). The functions that write through a pointer accept null
//! (the part is dropped).

use core::ffi::{c_char, c_int, c_long};

c_math! {
    /// `frexp`: the mantissa in [0.5, 1) and `*e` the exponent.
    ///
    /// # Safety
    /// `e` is null or valid for a write of an `int`.
    pub unsafe fn frexp(x: f64, e: *mut c_int) -> f64 {
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
    pub unsafe fn frexpf(x: f32, e: *mut c_int) -> f32 {
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
    pub unsafe fn modf(x: f64, i: *mut f64) -> f64 {
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
    pub unsafe fn modff(x: f32, i: *mut f32) -> f32 {
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
    pub unsafe fn remquo(x: f64, y: f64, q: *mut c_int) -> f64 {
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
    pub unsafe fn remquof(x: f32, y: f32, q: *mut c_int) -> f32 {
        let (r, n) = libm::remquof(x, y);
        // SAFETY: the caller's contract (null: the quotient is dropped).
        if let Some(q) = unsafe { q.as_mut() } {
            *q = n;
        }
        r
    }

    /// `lgamma_r`: log |Γ(x)|, and in `*sign` the sign of Γ(x).
    ///
    /// # Safety
    /// `sign` is null or valid for a write of an `int`.
    pub unsafe fn lgamma_r(x: f64, sign: *mut c_int) -> f64 {
        let (r, s) = libm::lgamma_r(x);
        // SAFETY: the caller's contract (null: the sign is dropped).
        if let Some(sign) = unsafe { sign.as_mut() } {
            *sign = s;
        }
        r
    }

    /// `lgammaf_r`.
    ///
    /// # Safety
    /// As [`lgamma_r`].
    pub unsafe fn lgammaf_r(x: f32, sign: *mut c_int) -> f32 {
        let (r, s) = libm::lgammaf_r(x);
        // SAFETY: the caller's contract (null: the sign is dropped).
        if let Some(sign) = unsafe { sign.as_mut() } {
            *sign = s;
        }
        r
    }

    /// `sincos`: `*s` the sine and `*c` the cosine of `x`, the bits `sin`
    /// and `cos` give.
    ///
    /// # Safety
    /// `s` and `c` are each null or valid for a write of a `double`.
    pub unsafe fn sincos(x: f64, s: *mut f64, c: *mut f64) {
        let (sin, cos) = libm::sincos(x);
        // SAFETY: the caller's contract (null: that part is dropped).
        if let Some(s) = unsafe { s.as_mut() } {
            *s = sin;
        }
        // SAFETY: as above.
        if let Some(c) = unsafe { c.as_mut() } {
            *c = cos;
        }
    }

    /// `sincosf`.
    ///
    /// # Safety
    /// `s` and `c` are each null or valid for a write of a `float`.
    pub unsafe fn sincosf(x: f32, s: *mut f32, c: *mut f32) {
        let (sin, cos) = libm::sincosf(x);
        // SAFETY: the caller's contract (null: that part is dropped).
        if let Some(s) = unsafe { s.as_mut() } {
            *s = sin;
        }
        // SAFETY: as above.
        if let Some(c) = unsafe { c.as_mut() } {
            *c = cos;
        }
    }

    /// `ldexp`: x·2^e.
    pub fn ldexp(x: f64, e: c_int) -> f64 {
        libm::ldexp(x, e)
    }

    /// `ldexpf`.
    pub fn ldexpf(x: f32, e: c_int) -> f32 {
        libm::ldexpf(x, e)
    }

    /// `scalbn`: x·2^n.
    pub fn scalbn(x: f64, n: c_int) -> f64 {
        libm::scalbn(x, n)
    }

    /// `scalbnf`.
    pub fn scalbnf(x: f32, n: c_int) -> f32 {
        libm::scalbnf(x, n)
    }

    /// `scalbln`: x·2^n for a `long` n (one past `int`'s range already
    /// overflows or underflows every double, so it is clamped to `int`).
    pub fn scalbln(x: f64, n: c_long) -> f64 {
        libm::scalbn(x, clamp_exponent(n))
    }

    /// `scalblnf`.
    pub fn scalblnf(x: f32, n: c_long) -> f32 {
        libm::scalbnf(x, clamp_exponent(n))
    }

    /// `ilogb`: the unbiased exponent (0: `FP_ILOGB0`, NaN: `FP_ILOGBNAN`,
    /// both `INT_MIN`; infinity: `INT_MAX`).
    pub fn ilogb(x: f64) -> c_int {
        libm::ilogb(x)
    }

    /// `ilogbf`.
    pub fn ilogbf(x: f32) -> c_int {
        libm::ilogbf(x)
    }

    /// `logb`: the exponent as a float (0: -inf; inf and NaN: themselves).
    pub fn logb(x: f64) -> f64 {
        if x == 0.0 {
            f64::NEG_INFINITY
        } else if !x.is_finite() {
            x * x
        } else {
            f64::from(libm::ilogb(x))
        }
    }

    /// `logbf`.
    pub fn logbf(x: f32) -> f32 {
        if x == 0.0 {
            f32::NEG_INFINITY
        } else if !x.is_finite() {
            x * x
        } else {
            libm::ilogbf(x) as f32
        }
    }

    /// `copysign`: |x| with the sign of y.
    pub fn copysign(x: f64, y: f64) -> f64 {
        libm::copysign(x, y)
    }

    /// `copysignf`.
    pub fn copysignf(x: f32, y: f32) -> f32 {
        libm::copysignf(x, y)
    }

    /// `nextafter`: the double after `x` in the direction of `y`.
    pub fn nextafter(x: f64, y: f64) -> f64 {
        libm::nextafter(x, y)
    }

    /// `nextafterf`.
    pub fn nextafterf(x: f32, y: f32) -> f32 {
        libm::nextafterf(x, y)
    }

    /// `nan(tag)`: the quiet NaN (the tag's payload is not used).
    pub fn nan(_tag: *const c_char) -> f64 {
        f64::NAN
    }

    /// `nanf(tag)`.
    pub fn nanf(_tag: *const c_char) -> f32 {
        f32::NAN
    }
}

/// `n` clamped to `int`'s range (`long` is wider on a 64-bit host).
fn clamp_exponent(n: c_long) -> c_int {
    c_int::try_from(n).unwrap_or(if n < 0 { c_int::MIN } else { c_int::MAX })
}

/// The C names defined on the device only (below).
pub(crate) const DEVICE_ONLY: &[&str] = &["nexttoward", "nexttowardf"];

/// `nexttoward` (device only: `long double` is `double` on the Xtensa
/// core; on the host it is the 80-bit type, which Rust has not).
#[cfg(target_arch = "xtensa")]
#[unsafe(no_mangle)]
pub extern "C" fn nexttoward(x: f64, y: f64) -> f64 {
    libm::nextafter(x, y)
}

/// `nexttowardf`: the float after `x` in the direction of the double `y`
/// (device only, as [`nexttoward`]).
#[cfg(target_arch = "xtensa")]
#[unsafe(no_mangle)]
pub extern "C" fn nexttowardf(x: f32, y: f64) -> f32 {
    toward(x, y)
}

/// The float after `x` in the direction of the double `y`.
#[cfg_attr(not(any(target_arch = "xtensa", test)), allow(dead_code))]
fn toward(x: f32, y: f64) -> f32 {
    if x.is_nan() || y.is_nan() {
        return (f64::from(x) + y) as f32;
    }
    let xd = f64::from(x);
    if xd == y {
        return y as f32;
    }
    libm::nextafterf(x, if y > xd { f32::INFINITY } else { f32::NEG_INFINITY })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats() -> impl Iterator<Item = f32> {
        (0..20_000).map(|i| (i as f32 - 10_000.0) * 0.013_7).chain([0.0, -0.0, 1e-30, 3.0e38, -1e20, 7.5e-3])
    }

    /// The host compiler turns a `sinf` and a `cosf` of one argument into
    /// one `sincosf`; the device's does not: the bits must be the same.
    #[test]
    fn sincos_gives_the_bits_of_sin_and_cos() {
        for x in floats() {
            let (mut s, mut c) = (0.0f32, 0.0f32);
            // SAFETY: two live floats.
            unsafe { sincosf(x, &mut s, &mut c) };
            assert_eq!((s.to_bits(), c.to_bits()), (sinf_bits(x), cosf_bits(x)), "sincosf({x})");
            let x = f64::from(x) * 1.37;
            let (mut s, mut c) = (0.0f64, 0.0f64);
            // SAFETY: two live doubles.
            unsafe { sincos(x, &mut s, &mut c) };
            assert_eq!((s.to_bits(), c.to_bits()), (libm::sin(x).to_bits(), libm::cos(x).to_bits()), "sincos({x})");
        }
        // Null parts are dropped.
        // SAFETY: null is allowed.
        unsafe { sincosf(1.0, core::ptr::null_mut(), core::ptr::null_mut()) };
    }

    fn sinf_bits(x: f32) -> u32 {
        crate::elementary::sinf(x).to_bits()
    }

    fn cosf_bits(x: f32) -> u32 {
        crate::elementary::cosf(x).to_bits()
    }

    #[test]
    fn pointer_parts_are_written_or_dropped() {
        let mut e = 0;
        // SAFETY: a live int, then null.
        assert_eq!(unsafe { frexpf(-24.0, &mut e) }, -0.75);
        assert_eq!(e, 5);
        // SAFETY: null is allowed.
        assert_eq!(unsafe { frexp(24.0, core::ptr::null_mut()) }, 0.75);
        let mut i = 0.0f64;
        // SAFETY: a live double.
        assert_eq!(unsafe { modf(-3.25, &mut i) }, -0.25);
        assert_eq!(i, -3.0);
        let mut q = 0;
        // SAFETY: a live int.
        let r = unsafe { remquof(10.0, 3.0, &mut q) };
        assert_eq!((r, q & 7), (1.0, 3));
        let mut s = 0;
        // SAFETY: a live int.
        let g = unsafe { lgamma_r(-0.5, &mut s) };
        assert_eq!(s, -1);
        assert_eq!(g.to_bits(), libm::lgamma(-0.5).to_bits());
    }

    #[test]
    fn exponents_and_neighbours() {
        assert_eq!(logb(0.0), f64::NEG_INFINITY);
        assert_eq!(logbf(f32::INFINITY), f32::INFINITY);
        assert!(logb(f64::NAN).is_nan());
        assert_eq!(logbf(-40.0), 5.0);
        assert_eq!(scalbln(1.0, c_long::MAX), f64::INFINITY);
        assert_eq!(scalblnf(1.0, c_long::MIN), 0.0);
        assert_eq!(scalbln(3.0, -1), 1.5);
        assert_eq!(toward(1.0, 2.0), 1.0 + f32::EPSILON);
        assert_eq!(toward(1.0, 1.0), 1.0);
        assert_eq!(toward(0.0, -1.0).to_bits(), 0x8000_0001);
        assert!(toward(f32::NAN, 1.0).is_nan());
        assert!(nan(core::ptr::null()).is_nan() && nanf(core::ptr::null()).is_nan());
    }
}
