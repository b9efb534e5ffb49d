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
