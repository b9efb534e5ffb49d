//! The runner of a C++ kernel on the emulated cluster.
//!
//! `customop run --on qemu` writes the invocation (tensors, value
//! arguments, the invocation block, the output tensor) as one file laid
//! out for the loader area of hbm_scratch, and QEMU copies it there before
//! the cores start (`-device loader,file=...,addr=AREA_NX`). The file
//! starts with a header (see `customop/src/qemu_blob.rs`, which writes it):
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `CQ01` |
//! | 8 | SoC address of the invocation block (u64) |
//! | 16 | SoC address of the output storage (u64) |
//! | 24 | output bytes (u64) |
//! | 32 | the op's name, NUL-terminated (64 bytes) |
//!
//! Every core posts the block in its mailbox, registers the kernel's ops
//! through `register_funcs` (the generated `get_func_*` table), calls the
//! op's launcher and prints one `customop-core` line (launcher result,
//! marshalling status, last error) and its printf ring entries
//! (`customop-printf`). Core 0 waits for every core, then prints the
//! output as hex lines (`customop-out OFFSET HEX`) and `customop-done`.
//! The host parses these lines; QEMU's exit status 0 means the protocol
//! ran to the end (a failing kernel is reported in its core line).
#![no_std]

#[cfg(target_arch = "xtensa")]
mod runner;
