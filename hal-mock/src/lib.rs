//! An in-memory model of the Q7 SoC, for running the runtime and kernels
//! on the host.
//!
//! It mirrors the hardware's structure: one [`MockSoc`] owns the shared
//! physical memories (HBM, SBUF); each [`MockCore`] owns its private NX
//! address space, data RAM, window registers and DMA engine, and implements
//! [`neuron_hal::Hal`]. Translation windows are real memory mappings of the
//! physical memory into the core's NX space, so a pointer the runtime hands
//! out is a host pointer the kernel dereferences directly, and reprogramming
//! a window changes what an old pointer into it sees, as on the device.

mod claim;
mod core;
mod counters;
mod dma_engine;
pub mod fake;
mod nx_space;
mod phys;
pub mod sanitizer;
mod soc;

pub use crate::core::MockCore;
pub use counters::CoreCounters;
pub use fake::FakeHal;
pub use nx_space::NxSpace;
pub use phys::PhysMemory;
pub use soc::MockSoc;
