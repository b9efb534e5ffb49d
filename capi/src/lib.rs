//! `libneuroncustomop`: the C ABI custom-op kernels link against.
//!
//! This crate holds only the exported surface. The logic is in
//! `neuron-runtime`; the hardware is `neuron-hal` on the device and the
//! mock SoC of `neuron-hal-mock` on the host, where each simulated core is
//! bound to the host thread that runs it ([`host::SimCore`]).
#![no_std]
#![cfg_attr(target_arch = "xtensa", feature(asm_experimental_arch))]

#[cfg(not(target_arch = "xtensa"))]
extern crate std;

mod abort;
mod binding;
#[cfg(target_arch = "xtensa")]
pub mod device;
mod factory;
pub mod ffi;
#[cfg(not(target_arch = "xtensa"))]
pub mod host;
mod invocation;
pub mod kernel;
mod switch;
mod translate;

/// Used by the generated kernel wrappers (`custom_ops!`): no panic leaves them.
#[doc(hidden)]
pub use abort::no_unwind;
pub use neuron_hal as hal;
pub use neuron_runtime as runtime;
