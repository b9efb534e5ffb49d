//! The per-core FLL image of the example op (Q7 platform). Linked with
//! `--entry register_funcs`, which reaches the op table and through it
//! the launchers, wrappers and the library they call; `--gc-sections`
//! drops the rest.
#![no_std]

pub use axpy_op;
pub use neuroncustomop;
#[cfg(target_arch = "xtensa")]
pub use q7_qemu_board;
