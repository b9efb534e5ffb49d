//! The runtime side of a C++ kernel's per-core FLL image: the library
//! (Q7 platform) and the board's vectors. `customop build --target q7`
//! links it with the kernel's objects, entry `register_funcs`.
#![no_std]

pub use neuroncustomop;
#[cfg(target_arch = "xtensa")]
pub use q7_qemu_board;
