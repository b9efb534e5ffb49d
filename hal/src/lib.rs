//! Hardware abstraction for one Q7 core.
//!
//! The runtime is written once against [`Hal`]; the device implements it
//! with volatile MMIO (the `xtensa` module, `MmioHal`),
//! the host with the in-memory mock SoC (`neuron-hal-mock`). Every address
//! the runtime uses comes from a [`Platform`] table, so the Q7 and the
//! emulator differ only in data.
#![no_std]
#![cfg_attr(target_arch = "xtensa", feature(asm_experimental_arch))]

pub mod bits;
pub mod dma;
pub mod platform;
mod traits;
pub mod window;
#[cfg(target_arch = "xtensa")]
pub mod xtensa;

pub use dma::{DescriptorFlags, DmaDescriptor, DmaDirection};
pub use platform::{Platform, WindowSpec, Q7, QEMU};
pub use traits::Hal;
pub use window::WindowId;

/// Evaluates `$e`, the library's own bookkeeping (an allocator reading
/// and writing its free blocks and headers), unchecked by the emulated
/// board's check. A macro, not a function taking a closure: without the
/// trace port it is `$e` itself, so the Q7's image is the same code,
/// symbol for symbol. The port is there in a build for Xtensa with the
/// `qemu` feature of the crate that expands it (the runtime and the C
/// shell each forward theirs to this crate's).
#[doc(hidden)]
#[macro_export]
macro_rules! quietly {
    ($e:expr) => {{
        #[cfg(all(target_arch = "xtensa", feature = "qemu"))]
        $crate::xtensa::trace::quiet(true);
        let r = $e;
        #[cfg(all(target_arch = "xtensa", feature = "qemu"))]
        $crate::xtensa::trace::quiet(false);
        r
    }};
}
