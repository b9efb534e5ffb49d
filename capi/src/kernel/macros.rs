//! `custom_ops!`: the generated side of a Rust custom-op library.
//!
//! ```ignore
//! use neuroncustomop::kernel::*;
//! fn relu(t: Tensor) -> Result<Tensor> { ... }
//! fn axpy(a: Tensor, b: Tensor, alpha: f32) -> OwnedTensor { ... }
//! neuroncustomop::custom_ops! {
//!     fn relu(t: Tensor);
//!     fn axpy(a: Tensor, b: Tensor, alpha: f32);
//! }
//! ```
//!
//! For each op it emits, in a module named after the op, the wrapper
//! (`customop_setup(true)`, the `customop_next_*` readers in declared
//! order, the op only if `customop_status() == 0`, then
//! `customop_return_tensor` and `customop_cleanup`) and the
//! `<fn>_stack_switch` launcher; and once the exported `get_func_cnt`,
//! `get_func_name`, `get_func_ptr` table (at most 10 ops per library).
//! Argument types: [`Tensor`](super::Tensor), [`Value`](super::Value)
//! (scalar), `i32`, `f32`, `i64`, `f64`.

// What the generated wrapper calls: the runtime's invocation steps, the
// same functions `customop_setup` / `customop_status` / `customop_cleanup`
// are the C shell over.
pub use crate::invocation::{cleanup, setup, status};

/// Tells the simulator whether the kernel crate is an optimised build (its
/// stack rule holds only then: a debug build's frames are several times
/// the device's). Nothing on the device.
#[inline(always)]
pub fn optimised_build(on: bool) {
    #[cfg(not(target_arch = "xtensa"))]
    let _ = crate::binding::with_core(|b| {
        b.unoptimised_kernel = !on;
        Ok(())
    });
    #[cfg(target_arch = "xtensa")]
    let _ = on;
}

/// Emits the wrappers, launchers and `get_func_*` table for a list of ops.
#[macro_export]
macro_rules! custom_ops {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) ; )+) => {
        $(
            // The module is named after the op (any case); the launcher is
            // reached only through the op table on some targets.
            #[allow(non_snake_case, dead_code)]
            #[doc(hidden)]
            pub mod $name {
                // The op's argument types come from the caller's scope.
                #[allow(unused_imports)]
                use super::*;
                /// `<fn>_wrapper`.
                pub unsafe extern "C" fn wrapper() {
                    // A panic in the kernel is the abort report, never an
                    // unwind across the C ABI.
                    $crate::no_unwind(|| {
                        // The kernel crate's own profile: an unoptimised
                        // build's frames say nothing of the device's stack.
                        $crate::kernel::macros::optimised_build(!cfg!(debug_assertions));
                        let _ = $crate::kernel::macros::setup(true);
                        $( let $arg: $ty = <$ty as $crate::kernel::KernelArg>::next(); )*
                        if $crate::kernel::macros::status() == 0 {
                            $crate::kernel::KernelOutput::hand_back(super::$name($($arg),*));
                        }
                        let _ = $crate::kernel::macros::cleanup();
                    })
                }
                /// `<fn>_stack_switch`.
                pub unsafe extern "C" fn stack_switch() -> i32 {
                    // SAFETY: `wrapper` is the generated wrapper above.
                    unsafe { $crate::ffi::launch::switch_stack_or_call_wrapper(Some(wrapper), 0) }
                }
                pub const NAME: &::core::ffi::CStr = match ::core::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                    Ok(c) => c,
                    Err(_) => panic!("op name"),
                };
            }
        )+

        const __NEURON_OPS: &[(&::core::ffi::CStr, $crate::ffi::launch::OpFn)] = &[$(($name::NAME, $name::stack_switch as $crate::ffi::launch::OpFn)),+];
        const _: () = assert!(__NEURON_OPS.len() <= 10, "at most 10 ops per custom-op library");

        /// The generated table: how many ops.
        #[unsafe(no_mangle)]
        pub extern "C" fn get_func_cnt() -> i32 {
            __NEURON_OPS.len() as i32
        }

        /// The generated table: op `i`'s name (null out of range).
        #[unsafe(no_mangle)]
        pub extern "C" fn get_func_name(i: i32) -> *const ::core::ffi::c_char {
            usize::try_from(i).ok().and_then(|i| __NEURON_OPS.get(i)).map_or(::core::ptr::null(), |o| o.0.as_ptr())
        }

        /// The generated table: op `i`'s launcher (none out of range).
        #[unsafe(no_mangle)]
        pub extern "C" fn get_func_ptr(i: i32) -> Option<$crate::ffi::launch::OpFn> {
            usize::try_from(i).ok().and_then(|i| __NEURON_OPS.get(i)).map(|o| o.1)
        }
    };
}
