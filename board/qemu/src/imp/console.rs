//! A tiny line-buffered console over semihosting `write`.
//!
//! Each line goes out in one `write` call, and one core writes at a time:
//! QEMU runs the cores' `simcall`s in parallel host threads, whose writes
//! to the same stdout interleave within a line otherwise (seen with 8
//! cores on a loaded host: a status line cut by another core's).

use core::fmt;
use core::sync::atomic::{AtomicBool, Ordering};

/// Held while a core writes a line out.
static WRITING: AtomicBool = AtomicBool::new(false);

/// Line buffer size; longer lines are written in pieces.
const LINE: usize = 160;

/// A console writing to a host file descriptor. Buffers until a newline,
/// a full buffer, an explicit [`Console::flush`] or drop.
pub struct Console {
    fd: u32,
    len: usize,
    buf: [u8; LINE],
}

impl Console {
    /// Console on host stdout.
    pub const fn stdout() -> Self {
        Self { fd: 1, len: 0, buf: [0; LINE] }
    }

    /// Console on host stderr.
    pub const fn stderr() -> Self {
        Self { fd: 2, len: 0, buf: [0; LINE] }
    }

    /// Write out what is buffered.
    pub fn flush(&mut self) {
        if self.len > 0 {
            while WRITING.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
                core::hint::spin_loop();
            }
            // `len <= LINE` (`write_str` flushes at LINE).
            super::semihosting::write(self.fd, self.buf.get(..self.len).unwrap_or(&self.buf));
            WRITING.store(false, Ordering::Release);
            self.len = 0;
        }
    }
}

impl fmt::Write for Console {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            if self.len == LINE {
                self.flush();
            }
            if let Some(slot) = self.buf.get_mut(self.len) {
                *slot = b;
                self.len += 1;
            }
            if b == b'\n' {
                self.flush();
            }
        }
        Ok(())
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Print to host stdout (no newline).
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => {{
        let _ = core::fmt::Write::write_fmt(&mut $crate::Console::stdout(), format_args!($($arg)*));
    }};
}

/// Print a line to host stdout; the line is written in one piece.
#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => {{
        let mut c = $crate::Console::stdout();
        let _ = core::fmt::Write::write_fmt(&mut c, format_args!($($arg)*));
        let _ = core::fmt::Write::write_str(&mut c, "\n");
    }};
}
