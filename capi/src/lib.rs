//! The C-ABI logic of `libneuroncustomop`: the entry points custom-op
//! kernels call (`ffi`), the Rust kernel API (`kernel`), how an entry point
//! finds the calling core's state (`binding`), and the device-only pieces
//! (`device`). The logic is in `neuron-runtime`; the hardware is
//! `neuron-hal` on the device and the mock SoC of `neuron-hal-mock` on the
//! host, where each simulated core is bound to the host thread that runs it
//! (the simulator, `neuron-sim`, sits on this crate). Users link the
//! `neuroncustomop` crate, which re-exports this one.
#![no_std]
#![cfg_attr(target_arch = "xtensa", feature(asm_experimental_arch))]

#[cfg(not(target_arch = "xtensa"))]
extern crate std;

// `abort` and `binding` are public for the simulator crate only (it binds
// cores and reports aborts); `neuroncustomop` does not re-export them.
#[doc(hidden)]
pub mod abort;
#[doc(hidden)]
pub mod binding;
#[cfg(target_arch = "xtensa")]
pub mod device;
mod factory;
pub mod ffi;
mod invocation;
pub mod kernel;
mod switch;
mod trace;
mod translate;

/// Used by the generated kernel wrappers (`custom_ops!`): no panic leaves them.
#[doc(hidden)]
pub use abort::no_unwind;
pub use neuron_hal as hal;
pub use neuron_runtime as runtime;
