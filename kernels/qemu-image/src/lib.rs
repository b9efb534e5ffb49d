//! The QEMU image: plays the loader (places tensors and the invocation
//! block in HBM, posts the mailbox, registers the ops, launches one) and
//! runs either the example op or the on-target suite on every core.
//!
//! Semihosting arguments: `run=example|suite` (default `example`),
//! `n=<elements>` for the example (default 4099), `cpus=N` (from
//! `cargo xtask qemu-run`).
#![no_std]
#![cfg_attr(target_arch = "xtensa", feature(asm_experimental_arch))]

#[cfg(target_arch = "xtensa")]
mod example;
#[cfg(target_arch = "xtensa")]
mod loader;
#[cfg(target_arch = "xtensa")]
mod suite;

#[cfg(target_arch = "xtensa")]
extern crate alloc;

#[cfg(target_arch = "xtensa")]
mod image {
    use q7_qemu_board as board;

    /// The board's entry, on every core.
    #[unsafe(no_mangle)]
    pub extern "C" fn q7_board_main(cpu: u32) -> u32 {
        // What the firmware does at boot: ISL = the bottom of this core's
        // on-core stack (QEMU has no ISL register; the HAL keeps it in RAM).
        // SAFETY: the board's on-core stack of `cpu` starts there; this
        // entry runs on it.
        unsafe { neuroncustomop::device::set_stack_limit(board::stack_bounds(cpu).0) };
        match board::arg("run").unwrap_or("example") {
            "example" => super::example::run(cpu),
            "suite" => super::suite::run(cpu),
            other => {
                board::println!("qemu-image: unknown run={other}");
                99
            }
        }
    }
}
