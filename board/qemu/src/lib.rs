//! QEMU board support for Q7 images (test support only; not shipped).
//!
//! Runs an image built for the Q7's Xtensa windowed ABI on
//! `qemu-system-xtensa -cpu de212` (machines `sim` and `virt`). The crate
//! provides the reset stub, the vector table, the start code, semihosting
//! I/O, a console, an `abort` symbol and (feature `panic-handler`) a panic
//! handler. See `README.md` for the image contract.
//!
//! Everything here is `cfg(target_arch = "xtensa")`: on the host the crate
//! is empty, so it can be a workspace member without affecting host builds.
#![no_std]
#![cfg_attr(target_arch = "xtensa", feature(asm_experimental_arch))]

#[cfg(target_arch = "xtensa")]
mod imp;
#[cfg(target_arch = "xtensa")]
pub use imp::*;
