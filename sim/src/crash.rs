//! The report of a kernel or shape function that crashes the host
//! simulator. A kernel is native code in the simulator's process: a wild
//! or null pointer, an illegal instruction, an integer division by zero,
//! `abort()` or unbounded recursion kills the process, as it would any
//! host program. What this adds is the message the device's exception
//! report gives under QEMU: while a thread runs an op (a core thread) or
//! a shape function (`neuron_sim_call`), the fatal signal's handler writes
//! the core, the op, the signal and the faulting address to stderr (for a
//! stack overflow, the op's stack high water), then hands the signal on to
//! the handler that was there before (Rust's stack-overflow report,
//! Python's faulthandler) or to the default action, so the process still
//! dies of it. `customop` runs each op in a child process and turns that
//! death into an error (`isolate` in the customop crate).

use super::alt_stack::AltStack;
use core::cell::Cell;
use core::ffi::{c_int, c_void};
use core::fmt::Write as _;
use core::marker::PhantomData;
use core::sync::atomic::Ordering;
use std::sync::OnceLock;

/// The fatal signals a kernel's own code raises.
const SIGNALS: [c_int; 5] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGABRT];

/// What a thread runs, read by the handler.
#[derive(Clone, Copy)]
struct Running {
    /// The core.
    cpu: u32,
    /// The op's name, borrowed for the run (pointer and length).
    op: (*const u8, usize),
    /// A shape function (`neuron_sim_call`) rather than a kernel.
    shape: bool,
    /// An address in the frame that started the run: the stack used
    /// below it is the op's.
    top: usize,
    /// The lowest address of the thread's stack (0: unknown).
    stack_low: usize,
}

std::thread_local! {
    static RUNNING: Cell<Option<Running>> = const { Cell::new(None) };
}

/// The handlers found at installation, by `SIGNALS` index.
static PREVIOUS: OnceLock<[libc::sigaction; SIGNALS.len()]> = OnceLock::new();
// Set by the first report (this handler's or the library's abort): a second
// fatal signal (Rust's stack-overflow handler aborts after its own message)
// is not reported again.
use crate::abort::REPORTED;

/// While the returned guard lives, this thread runs op `op` on core
/// `cpu`: a fatal signal on it is reported (the handlers are installed
/// at the first run). The thread gets an alternate signal stack if it
/// has none, so that a stack overflow is reported too.
pub(crate) fn running(cpu: u32, op: &str) -> impl Drop + '_ {
    enter(cpu, op, false)
}

/// As [`running`], for a shape function run by `neuron_sim_call` (the
/// caller knows the op; the report says it was a shape function).
pub(crate) fn running_shape() -> impl Drop {
    enter(0, "", true)
}

#[inline(never)]
fn enter(cpu: u32, op: &str, shape: bool) -> Guard<'_> {
    PREVIOUS.get_or_init(install);
    let marker = 0u8;
    let top = core::ptr::addr_of!(marker) as usize;
    let alt = AltStack::ensure();
    let prev = RUNNING.with(|r| r.replace(Some(Running { cpu, op: (op.as_ptr(), op.len()), shape, top, stack_low: stack_low() })));
    Guard { prev, _alt: alt, _op: PhantomData }
}

/// Restores what the thread ran before (runs nest: a kernel's op may call
/// `neuron_sim_call`), then drops the alternate stack if it was made here.
struct Guard<'a> {
    prev: Option<Running>,
    _alt: Option<AltStack>,
    _op: PhantomData<&'a str>,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        RUNNING.with(|r| r.set(self.prev));
    }
}

/// The lowest address of the calling thread's stack, or 0; asked once
/// per thread (for the main thread glibc reads /proc/self/maps, which
/// cost a Python op call's worker hundreds of microseconds per call).
fn stack_low() -> usize {
    std::thread_local! {
        static LOW: core::cell::Cell<Option<usize>> = const { core::cell::Cell::new(None) };
    }
    LOW.with(|l| {
        *l.get().get_or_insert_with(|| {
            let low = ask_stack_low();
            l.set(Some(low));
            low
        })
    })
}

/// Bytes of stack the calling thread has below the caller's frame (0:
/// unknown).
pub(crate) fn stack_room() -> usize {
    let marker = 0u8;
    let sp = core::ptr::addr_of!(marker) as usize;
    let low = stack_low();
    if low == 0 {
        0
    } else {
        sp.saturating_sub(low)
    }
}

/// [`stack_low`], asked of pthreads.
fn ask_stack_low() -> usize {
    // SAFETY: `attr` is initialised by pthread_getattr_np before it is
    // read and destroyed after; `addr`/`size` are written by
    // pthread_attr_getstack.
    unsafe {
        let mut attr: libc::pthread_attr_t = core::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return 0;
        }
        let (mut addr, mut size) = (core::ptr::null_mut(), 0usize);
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if ok {
            addr as usize
        } else {
            0
        }
    }
}

/// Installs `on_fatal` for every signal of `SIGNALS`, on the alternate
/// stack; returns the handlers it replaced.
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
    buf: [u8; 512],
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
        libc::SIGSEGV => "SIGSEGV (a load or store at an address nothing is mapped at: a null or wild pointer)",
        libc::SIGBUS => "SIGBUS (a misaligned or unbacked memory access)",
        libc::SIGILL => "SIGILL (an illegal instruction)",
        libc::SIGFPE => "SIGFPE (an integer division by zero or overflow)",
        libc::SIGABRT => "SIGABRT (abort() was called, or a C++ exception or assert() ended the program)",
        _ => "a fatal signal",
    }
}

/// Bytes below a thread's lowest stack address (its guard pages and a
/// frame that jumped past them) where a fault counts as a stack overflow.
const OVERFLOW_MARGIN: usize = 1 << 20;

/// The report line of `r` for `sig` at `addr` (`op` is its name).
fn report(r: &Running, op: &str, sig: c_int, addr: usize) -> Line {
    let mut l = Line { buf: [0; 512], len: 0 };
    let what = Name(if r.shape { "" } else { op });
    let _ = write!(l, "neuroncustomop: abort on core {}: {what}: ", r.cpu);
    let overflow = sig == libc::SIGSEGV || sig == libc::SIGBUS;
    if overflow && r.stack_low != 0 && addr < r.stack_low.saturating_add(4096) && addr >= r.stack_low.saturating_sub(OVERFLOW_MARGIN) {
        let _ = write!(
            l,
            "stack overflow ({} at address {addr:#x}, at the end of the thread's stack): the op's stack high water is {} bytes; unbounded or too deep recursion, or too large a local array",
            if sig == libc::SIGSEGV { "SIGSEGV" } else { "SIGBUS" },
            r.top.saturating_sub(addr)
        );
    } else if sig == libc::SIGABRT {
        let _ = write!(l, "{}", meaning(sig));
    } else {
        let _ = write!(l, "{} at address {addr:#x}", meaning(sig));
    }
    let _ = writeln!(l);
    if l.len == l.buf.len() {
        l.buf[l.len - 1] = b'\n';
    }
    l
}

/// "the kernel crashed in op NAME" (empty: a shape function), without
/// allocating.
struct Name<'a>(&'a str);

impl core::fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.0.is_empty() {
            f.write_str("the shape function crashed (neuron_sim_call)")
        } else {
            write!(f, "the kernel crashed in op {}", self.0)
        }
    }
}

extern "C" fn on_fatal(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // `try_with`: a thread being torn down has no locals left.
    if let Ok(Some(r)) = RUNNING.try_with(Cell::get) {
        if !REPORTED.swap(true, Ordering::SeqCst) {
            // SAFETY: the op name `enter` borrowed, alive until its guard
            // drops, which has not happened on this thread (the signal
            // interrupted it inside the run).
            let op = core::str::from_utf8(unsafe { core::slice::from_raw_parts(r.op.0, r.op.1) }).unwrap_or("?");
            // SAFETY: the kernel hands a SA_SIGINFO handler a valid
            // siginfo; `si_addr` is the faulting address for the fault
            // signals (unused for SIGABRT).
            let addr = unsafe { (*info).si_addr() } as usize;
            let l = report(&r, op, sig, addr);
            // SAFETY: `write` on stderr with a live buffer of `len` bytes
            // (async-signal-safe).
            unsafe { libc::write(2, l.buf.as_ptr().cast(), l.len) };
            // SAFETY: the kernel hands a SA_SIGINFO handler its ucontext.
            if let Some(pc) = unsafe { fault_pc(ctx) } {
                let l = pc_line(pc);
                // SAFETY: as above.
                unsafe { libc::write(2, l.buf.as_ptr().cast(), l.len) };
            }
        }
    }
    hand_on(sig, info, ctx);
}

/// The line that gives the faulting instruction's address: the tool that
/// ran the kernel, which has the kernel's library mapped at the same
/// address (a forked child's parent, or this process under `--no-fork`),
/// turns it into the kernel's function and file:line. Here, in the signal
/// handler, nothing is looked up.
pub const PC_LINE_PREFIX: &str = "neuroncustomop: crash pc ";

fn pc_line(pc: usize) -> Line {
    let mut l = Line { buf: [0; 512], len: 0 };
    let _ = writeln!(l, "{PC_LINE_PREFIX}{pc:#x}");
    l
}

/// The interrupted instruction's address, from the handler's context.
///
/// # Safety
/// `ctx` is null or the `ucontext_t` the kernel passed a SA_SIGINFO handler.
#[allow(unused_variables)]
unsafe fn fault_pc(ctx: *mut c_void) -> Option<usize> {
    if ctx.is_null() {
        return None;
    }
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    // SAFETY: a live ucontext_t, as the caller promises.
    return Some(unsafe { (*ctx.cast::<libc::ucontext_t>()).uc_mcontext.gregs[libc::REG_RIP as usize] } as usize);
    #[cfg(all(target_os = "linux", target_arch = "aarch64"))]
    // SAFETY: a live ucontext_t, as the caller promises.
    return Some(unsafe { (*ctx.cast::<libc::ucontext_t>()).uc_mcontext.pc } as usize);
    #[allow(unreachable_code)]
    None
}

/// The signal to the handler installed before ours, or (none, or the
/// default) the default action: reset, then return so the faulting
/// instruction runs again (or `abort` raises again) and the process dies
/// of the signal.
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

    fn line(r: &Running, op: &str, sig: c_int, addr: usize) -> std::string::String {
        let l = report(r, op, sig, addr);
        std::string::String::from_utf8(l.buf[..l.len].to_vec()).unwrap()
    }

    const KERNEL: Running = Running { cpu: 3, op: (core::ptr::null(), 0), shape: false, top: 0x7000_9000, stack_low: 0x7000_0000 };

    #[test]
    fn the_line_names_core_op_signal_and_address_and_is_cut_to_fit() {
        assert_eq!(
            line(&KERNEL, "relu_forward", libc::SIGSEGV, 0x10),
            "neuroncustomop: abort on core 3: the kernel crashed in op relu_forward: SIGSEGV (a load or store at an address nothing is mapped at: a null or wild pointer) at address 0x10\n"
        );
        let long = "x".repeat(1000);
        let l = report(&KERNEL, &long, libc::SIGFPE, 0);
        assert_eq!(l.len, 512);
        assert_eq!(l.buf[511], b'\n');
    }

    #[test]
    fn a_fault_below_the_stack_is_a_stack_overflow_with_the_high_water() {
        let s = line(&KERNEL, "dive", libc::SIGSEGV, 0x7000_0000 - 8);
        assert!(s.contains("in op dive: stack overflow (SIGSEGV at address 0x6ffffff8"), "{s}");
        assert!(s.contains("the op's stack high water is 36872 bytes"), "{s}");
        let shape = Running { shape: true, ..KERNEL };
        let s = line(&shape, "", libc::SIGABRT, 0);
        assert_eq!(s, "neuroncustomop: abort on core 3: the shape function crashed (neuron_sim_call): SIGABRT (abort() was called, or a C++ exception or assert() ended the program)\n");
    }
}
