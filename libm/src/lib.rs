//! The C math library kernels call: the functions `<math.h>` declares and
//! libc++'s and libstdc++'s `<cmath>` forward to (`expf`, `logf`, `powf`,
//! `tanhf`, `sqrtf`, `frexp`, `sincosf`, ..., float and double), each a
//! few lines over the `libm` crate, a port of musl's libm.
//!
//! One library for both sides of the differential check: on the device
//! (Xtensa) this crate *is* the C math library, under the C names; on the
//! host the simulator links the same functions into every kernel's shared
//! object (`customop build`), so a kernel computes the same bits on the
//! simulator as on the emulated device, where the host's own libm (glibc)
//! differs from musl's in the last bit of many results.
//!
//! On the host the functions are exported as `neuron_libm_<name>`
//! ([`HOST_PREFIX`]), never under the C names: this crate is also linked
//! into the `customop` binary and the Python module, which must keep the
//! host's libm for their own code and must not offer `expf` to the rest
//! of the process. `customop build` binds a kernel's C names to these
//! symbols, inside that kernel's shared object only. [`host_names`] lists
//! the C names it binds.
//!
//! On the device the definitions are strong: `compiler_builtins` defines
//! some of the same names (its own copy of the same port) as weak symbols,
//! which these replace, so the device computes with this crate's code, as
//! the host does.
#![no_std]

#[cfg(test)]
extern crate std;

/// Defines each function as an `extern "C"` export: under its C name on
/// the device, as [`HOST_PREFIX`]`<name>` on the host; and `NAMES`, the C
/// names the invocation defines. (One item at a time: a function may be
/// `unsafe`.)
macro_rules! c_math {
    (@names [$($done:ident)*]) => {
        /// The C names this module defines.
        pub(crate) const NAMES: &[&str] = &[$(stringify!($done)),*];
    };
    (@names [$($done:ident)*] $(#[$attr:meta])* pub unsafe fn $name:ident $args:tt $(-> $ret:ty)? $body:block $($rest:tt)*) => {
        $(#[$attr])*
        #[cfg_attr(target_arch = "xtensa", unsafe(no_mangle))]
        #[cfg_attr(not(target_arch = "xtensa"), unsafe(export_name = concat!("neuron_libm_", stringify!($name))))]
        pub unsafe extern "C" fn $name $args $(-> $ret)? $body
        c_math!(@names [$($done)* $name] $($rest)*);
    };
    (@names [$($done:ident)*] $(#[$attr:meta])* pub fn $name:ident $args:tt $(-> $ret:ty)? $body:block $($rest:tt)*) => {
        $(#[$attr])*
        #[cfg_attr(target_arch = "xtensa", unsafe(no_mangle))]
        #[cfg_attr(not(target_arch = "xtensa"), unsafe(export_name = concat!("neuron_libm_", stringify!($name))))]
        pub extern "C" fn $name $args $(-> $ret)? $body
        c_math!(@names [$($done)* $name] $($rest)*);
    };
    ($($items:tt)*) => {
        c_math!(@names [] $($items)*);
    };
}

pub mod elementary;
pub mod parts;
pub mod rounding;

/// What a host symbol's name starts with: `expf` is `neuron_libm_expf`.
pub const HOST_PREFIX: &str = "neuron_libm_";

/// The C names the crate defines on every target (not `nexttoward` and
/// `nexttowardf`, whose `long double` is the host's 80-bit type).
pub fn host_names() -> impl Iterator<Item = &'static str> {
    elementary::NAMES.iter().chain(parts::NAMES).chain(rounding::NAMES).copied()
}

/// The C names the crate defines on the device: [`host_names`] and the
/// two whose `long double` is `double` there.
pub fn device_names() -> impl Iterator<Item = &'static str> {
    host_names().chain(parts::DEVICE_ONLY.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every C name once; the functions `<cmath>` forwards to that a
    /// kernel calls most are among them.
    #[test]
    fn names_are_unique_and_cover_cmath() {
        let all: std::vec::Vec<&str> = host_names().collect();
        let set: BTreeSet<&str> = all.iter().copied().collect();
        assert_eq!(set.len(), all.len(), "a name twice: {all:?}");
        assert_eq!(device_names().count(), all.len() + 2);
        assert!(device_names().any(|n| n == "nexttowardf") && !set.contains("nexttowardf"));
        for f in [
            "exp",
            "exp2",
            "expm1",
            "log",
            "log2",
            "log10",
            "log1p",
            "pow",
            "sqrt",
            "cbrt",
            "sin",
            "cos",
            "tan",
            "asin",
            "acos",
            "atan",
            "atan2",
            "sinh",
            "cosh",
            "tanh",
            "asinh",
            "acosh",
            "atanh",
            "erf",
            "erfc",
            "tgamma",
            "lgamma",
            "fmod",
            "remainder",
            "hypot",
            "floor",
            "ceil",
            "trunc",
            "round",
            "fabs",
            "fmin",
            "fmax",
            "frexp",
            "ldexp",
            "modf",
            "copysign",
            "nextafter",
            "ilogb",
            "scalbn",
            "sincos",
            "fma",
            "rint",
            "nearbyint",
            "lrint",
            "lround",
            "remquo",
            "logb",
            "nan",
        ] {
            assert!(set.contains(f), "{f}");
            let float = std::format!("{f}f");
            assert!(set.contains(float.as_str()), "{float}");
        }
    }

    unsafe extern "C" {
        #[link_name = "neuron_libm_expf"]
        safe fn exported_expf(x: f32) -> f32;
        #[link_name = "neuron_libm_frexp"]
        unsafe fn exported_frexp(x: f64, e: *mut core::ffi::c_int) -> f64;
    }

    /// The exports are linked by [`HOST_PREFIX`] and the C name (the
    /// prefix the macro writes is the constant's).
    #[test]
    fn host_symbols_are_the_prefix_and_the_c_name() {
        assert_eq!(HOST_PREFIX, "neuron_libm_");
        assert_eq!(exported_expf(1.5).to_bits(), libm::expf(1.5).to_bits());
        let mut e = 0;
        // SAFETY: `e` is a live int.
        assert_eq!(unsafe { exported_frexp(12.0, &mut e) }, 0.75);
        assert_eq!(e, 4);
    }
}
