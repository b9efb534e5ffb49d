//! The report of a kernel that crashes the host simulator. A kernel is
//! native code in the simulator's process: a wild or null pointer, an
//! illegal instruction or an integer division by zero kills the process,
//! as it would any host program. What this adds is the message the
//! device's exception report gives under QEMU: while a core thread runs
//! an op, the fatal signal's handler writes the core, the op, the signal
//! and the faulting address to stderr, then hands the signal on to the
//! handler that was there before (Rust's stack-overflow report) or to
//! the default action, so the process still dies of it.

use core::cell::Cell;
use core::ffi::{c_int, c_void};
use core::fmt::Write as _;
use core::marker::PhantomData;
use std::sync::OnceLock;

/// The fatal signals a kernel's own code raises.
const SIGNALS: [c_int; 4] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE];

std::thread_local! {
    /// The core and op this thread runs (the op's name as pointer and
    /// length, borrowed for the run), read by the handler.
    static RUNNING: Cell<Option<(u32, *const u8, usize)>> = const { Cell::new(None) };
}

/// The handlers found at installation, by `SIGNALS` index.
static PREVIOUS: OnceLock<[libc::sigaction; SIGNALS.len()]> = OnceLock::new();

/// While the returned guard lives, this thread runs op `op` on core
/// `cpu`: a fatal signal on it is reported (the handlers are installed
/// at the first run).
pub(crate) fn running(cpu: u32, op: &str) -> impl Drop + '_ {
    PREVIOUS.get_or_init(install);
    RUNNING.with(|r| r.set(Some((cpu, op.as_ptr(), op.len()))));
    struct Running<'a>(PhantomData<&'a str>);
    impl Drop for Running<'_> {
        fn drop(&mut self) {
            RUNNING.with(|r| r.set(None));
        }
    }
    Running(PhantomData)
}

/// Installs `on_fatal` for every signal of `SIGNALS` (on the thread's
/// alternate stack where it has one: a Rust program gives one to every
/// thread it starts, so there a kernel that overflowed its stack is
/// reported too; a Python process's threads have none); returns the
/// handlers it replaced.
fn install() -> [libc::sigaction; SIGNALS.len()] {
    SIGNALS.map(|sig| {
        // SAFETY: zeroed `sigaction` is a valid value (no handler, empty
        // mask); `sigemptyset` and `sigaction` get valid pointers to
        // locals; the handler has the SA_SIGINFO signature.
        unsafe {
            let mut new: libc::sigaction = core::mem::zeroed();
            let mut old: libc::sigaction = core::mem::zeroed();
            new.sa_sigaction = on_fatal as extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) as usize;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut new.sa_mask);
            if libc::sigaction(sig, &new, &mut old) != 0 {
                old.sa_sigaction = libc::SIG_DFL;
            }
            old
        }
    })
}

/// A fixed buffer the handler formats into (no allocation in a signal
/// handler); what does not fit is cut.
struct Line {
    buf: [u8; 384],
    len: usize,
}

impl core::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = self.buf.len() - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// What the signal means for a kernel author.
fn meaning(sig: c_int) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV (a load or store at an address nothing is mapped at: a null or wild pointer, or a stack overflow)",
        libc::SIGBUS => "SIGBUS (a misaligned or unbacked memory access)",
        libc::SIGILL => "SIGILL (an illegal instruction)",
        libc::SIGFPE => "SIGFPE (an integer division by zero or overflow)",
        _ => "a fatal signal",
    }
}

/// The report line for `sig` at `addr` on core `cpu` running `op`.
fn report(cpu: u32, op: &str, sig: c_int, addr: usize) -> Line {
    let mut l = Line { buf: [0; 384], len: 0 };
    let _ = writeln!(l, "neuroncustomop: abort on core {cpu}: the kernel crashed in op {op}: {} at address {addr:#x}", meaning(sig));
    if l.len == l.buf.len() {
        l.buf[l.len - 1] = b'\n';
    }
    l
}

extern "C" fn on_fatal(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // `try_with`: a thread being torn down has no locals left.
    if let Ok(Some((cpu, p, n))) = RUNNING.try_with(Cell::get) {
        // SAFETY: `p`/`n` are the op name `running` borrowed, alive until
        // its guard drops, which has not happened on this thread (the
        // signal interrupted it inside the run).
        let op = core::str::from_utf8(unsafe { core::slice::from_raw_parts(p, n) }).unwrap_or("?");
        // SAFETY: the kernel hands a SA_SIGINFO handler a valid siginfo;
        // `si_addr` is the faulting address for these four signals.
        let addr = unsafe { (*info).si_addr() } as usize;
        let l = report(cpu, op, sig, addr);
        // SAFETY: `write` on stderr with a live buffer of `len` bytes
        // (async-signal-safe).
        unsafe { libc::write(2, l.buf.as_ptr().cast(), l.len) };
    }
    hand_on(sig, info, ctx);
}

/// The signal to the handler installed before ours, or (none, or the
/// default) the default action: reset, then return so the faulting
/// instruction runs again and the process dies of the signal.
fn hand_on(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    let prev = PREVIOUS.get().and_then(|p| SIGNALS.iter().position(|s| *s == sig).map(|i| p[i]));
    match prev {
        Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
            if p.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: a SA_SIGINFO handler installed for `sig` has this
                // signature; it gets the arguments we were given.
                let h: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) = unsafe { core::mem::transmute(p.sa_sigaction) };
                h(sig, info, ctx);
            } else {
                // SAFETY: a plain handler installed for `sig`.
                let h: extern "C" fn(c_int) = unsafe { core::mem::transmute(p.sa_sigaction) };
                h(sig);
            }
        }
        _ => {
            // SAFETY: resetting `sig` to its default action with a zeroed
            // (empty-mask) `sigaction`.
            unsafe {
                let mut d: libc::sigaction = core::mem::zeroed();
                d.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &d, core::ptr::null_mut());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_core_op_signal_and_address_and_is_cut_to_fit() {
        let l = report(3, "relu_forward", libc::SIGSEGV, 0x10);
        let s = std::str::from_utf8(&l.buf[..l.len]).unwrap();
        assert_eq!(
            s,
            "neuroncustomop: abort on core 3: the kernel crashed in op relu_forward: SIGSEGV (a load or store at an address nothing is mapped at: a null or wild pointer, or a stack overflow) at address 0x10\n"
        );
        let long = "x".repeat(1000);
        let l = report(0, &long, libc::SIGFPE, 0);
        assert_eq!(l.len, 384);
        assert_eq!(l.buf[383], b'\n');
    }
}
