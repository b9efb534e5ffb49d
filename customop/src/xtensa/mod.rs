//! The device side of `customop build`: the same vendor-style sources
//! compiled for the Xtensa cores with an open toolchain ([`toolchain`]),
//! linked against the device runtime into the per-core Q7 FLL images or
//! the emulated cluster's image ([`images`]) with the layouts `cargo xtask`
//! uses too (the `neuron-image` crate).

pub mod check;
pub mod devlib;
pub mod images;
pub mod python_module;
pub mod toolchain;
