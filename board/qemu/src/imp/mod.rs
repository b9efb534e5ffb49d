//! The Xtensa implementation (the whole crate on target).

pub mod console;
pub mod semihosting;
mod start;
mod vectors;

#[cfg(feature = "panic-handler")]
mod panic;

pub use console::Console;
pub use start::{arg, args, cpu_count, stack_bounds};

/// Number of per-core stacks and result slots; PRID must be below this.
pub const MAX_CPUS: u32 = 8;
/// log2 of the per-core stack size (64 KiB).
pub const STACK_SHIFT: u32 = 16;
/// Per-core stack size in bytes.
pub const STACK_SIZE: u32 = 1 << STACK_SHIFT;
/// log2 of the per-core emergency stack used by the exception reporter.
pub const EXC_STACK_SHIFT: u32 = 12;

/// QEMU exit status when every core's `q7_board_main` returned 0.
pub const EXIT_OK: u32 = 0;
/// QEMU exit status when some core's `q7_board_main` returned non-zero.
pub const EXIT_FAIL: u32 = 1;
/// QEMU exit status after a panic.
pub const EXIT_PANIC: u32 = 101;
/// QEMU exit status after an unhandled exception (cause printed first).
pub const EXIT_EXCEPTION: u32 = 102;
/// QEMU exit status after `abort()`.
pub const EXIT_ABORT: u32 = 103;
/// QEMU exit status when a core's PRID is not below [`MAX_CPUS`].
pub const EXIT_BAD_CPU: u32 = 104;

/// The raw PRID special register (SR 235): the core id, 0..N-1 on QEMU.
#[inline(always)]
pub fn cpu_id() -> u32 {
    let prid: u32;
    // SAFETY: reading PRID has no side effects; the target has `+prid`.
    unsafe {
        core::arch::asm!("rsr {0}, prid", out(reg) prid, options(nomem, nostack, preserves_flags));
    }
    prid
}

/// Halt this core for good: wait for an interrupt that never comes
/// (INTENABLE is 0), so QEMU stops scheduling it.
pub fn park() -> ! {
    loop {
        // SAFETY: `waiti` only changes PS.INTLEVEL and waits; with no
        // interrupt enabled it does not return, and looping is harmless.
        unsafe { core::arch::asm!("waiti 0", options(nomem, nostack)) };
    }
}

#[cfg(feature = "abort-symbol")]
mod abort_symbol {
    /// `abort`: core lowers traps here. Prints and exits with
    /// [`EXIT_ABORT`](super::EXIT_ABORT).
    #[unsafe(no_mangle)]
    pub extern "C" fn abort() -> ! {
        let _ = core::fmt::Write::write_fmt(
            &mut super::Console::stderr(),
            format_args!("q7-qemu-board: abort() on cpu {}\n", super::cpu_id()),
        );
        super::semihosting::exit(super::EXIT_ABORT)
    }
}
