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
        // No `core::fmt` here: this symbol is linked into every image
        // (the Q7 ones too), and formatting would pull the whole
        // machinery in. The same text, decimal by hand.
        use core::fmt::Write;
        let mut c = super::Console::stderr();
        let mut digits = [0u8; 10];
        let mut n = super::cpu_id();
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 || at == 0 {
                break;
            }
        }
        let _ = c.write_str("q7-qemu-board: abort() on cpu ");
        // SAFETY: `digits[at..]` holds ASCII digits only, valid UTF-8.
        let _ = c.write_str(unsafe { core::str::from_utf8_unchecked(&digits[at..]) });
        let _ = c.write_str("\n");
        super::semihosting::exit(super::EXIT_ABORT)
    }
}
