//! What a device image is linked for and how it is checked, shared by
//! `cargo xtask` (the Rust images) and `customop build --target q7|qemu`
//! (the C++ kernels' images):
//!
//! - [`layout`]: every memory layout and its GNU ld script;
//! - [`elf`]: the linked image's sections and symbols, and the objects of
//!   a staticlib (`ar`), read with the `object` crate;
//! - [`fll_check`]: the check of a set of per-core FLL images.

pub mod elf;
pub mod fll_check;
pub mod layout;
