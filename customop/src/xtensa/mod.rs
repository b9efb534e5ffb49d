//! The device side of `customop build`: the same vendor-style sources
//! compiled for the Xtensa cores with an open toolchain ([`toolchain`]),
//! linked against the device runtime into the per-core Q7 FLL images or
//! the emulated cluster's image ([`images`]) with the layouts of
//! `cargo xtask` ([`layout`], [`elf`]).

pub mod check;
pub mod devlib;
pub mod images;
pub mod toolchain;

/// The layouts and linker-script generator of `cargo xtask`: one
/// description of every memory layout, shared rather than copied.
#[path = "../../../xtask/src/layout.rs"]
#[allow(dead_code, clippy::all)]
pub mod layout;

/// `cargo xtask`'s ELF32 reader, shared likewise.
#[path = "../../../xtask/src/elf.rs"]
#[allow(dead_code, clippy::all)]
pub mod elf;
