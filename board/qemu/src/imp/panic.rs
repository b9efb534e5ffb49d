//! `#[panic_handler]` (feature `panic-handler`): print and exit 101.

use core::fmt::Write;
use core::panic::PanicInfo;

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    let mut c = super::Console::stderr();
    let _ = writeln!(c, "q7-qemu-board: panic on cpu {}: {}", super::cpu_id(), info);
    c.flush();
    super::semihosting::exit(super::EXIT_PANIC)
}
