//! QEMU only (feature `qemu`): writes to the host's stderr through
//! semihosting, so that a panic or an abort says why before the core
//! stops. Never built for the Q7.

use core::fmt::Write;

/// `write(fd, buf, len)` through `simcall` (call number 4).
fn write(fd: u32, buf: &[u8]) {
    // SAFETY: `simcall` (encoded by hand: LLVM does not know the
    // mnemonic) traps to QEMU, which reads a2..a5 and writes a2/a3; `buf`
    // is valid for reads of `buf.len()` bytes.
    unsafe {
        core::arch::asm!(
            ".byte 0x00, 0x51, 0x00",
            inout("a2") 4u32 => _,
            inout("a3") fd => _,
            in("a4") buf.as_ptr(),
            in("a5") buf.len(),
            options(nostack),
        );
    }
}

/// A line buffer written out in one call.
struct Line {
    len: usize,
    buf: [u8; 320],
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            if self.len < self.buf.len() {
                self.buf[self.len] = b;
                self.len += 1;
            }
        }
        Ok(())
    }
}

fn emit(args: core::fmt::Arguments<'_>) {
    let mut l = Line { len: 0, buf: [0; 320] };
    let _ = l.write_fmt(args);
    let _ = l.write_str("\n");
    write(2, &l.buf[..l.len]);
}

/// Prints the panic message.
pub fn report_panic(info: &core::panic::PanicInfo<'_>) {
    emit(format_args!("neuroncustomop: panic: {}", info));
}

/// Prints an abort report.
pub fn report_abort(cpu: i32, code: i32, msg: &str, what: &str, file: &str, line: u32) {
    emit(format_args!("neuroncustomop: abort on core {cpu}: error {code} ({msg}): {what} at {file}:{line}"));
}
