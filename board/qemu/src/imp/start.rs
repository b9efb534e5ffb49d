//! Reset stub, start code, and the Rust side of start-up: argument
//! loading, calling the image's `q7_board_main`, and the multi-core
//! completion protocol.

use core::cell::UnsafeCell;
use core::fmt::Write;
use core::sync::atomic::{AtomicU32, Ordering};

use super::{semihosting, Console, EXC_STACK_SHIFT, EXIT_BAD_CPU, EXIT_FAIL, EXIT_OK, MAX_CPUS, STACK_SHIFT};

// The reset stub, the start code and (in `vectors.rs`'s constants) the
// vector table. All in one `global_asm!` per file so that the object that
// holds the reset stub also holds what it needs.
//
// Start code, run by every core at once (QEMU starts all CPUs at the reset
// vector 0x5000_0000 with PRID = 0..N-1):
//   1. WINDOWBASE = 0 (then rsync, registers are now window 0), WINDOWSTART = 1;
//   2. INTENABLE = 0, VECBASE = _vector_table, ATOMCTL = 0x15 (s32c1i on RAM);
//   3. a2 = PRID; PRID >= MAX_CPUS exits with EXIT_BAD_CPU;
//   4. a1 = top of this core's stack (q7_board_stacks + (cpu+1) << STACK_SHIFT) - 16;
//   5. core 0 zeroes [_bss_start, _bss_end) and sets q7_board_bss_ready
//      (in .data, so it is 0 before anyone runs); the others wait for it;
//   6. PS = 0x0004_0020 (WOE | UM, INTLEVEL 0, EXCM 0);
//   7. call4 q7_board_rust_start(cpu), which never returns.
core::arch::global_asm!(
    r#"
    .section .reset.text, "ax"
    .global _ResetVector
    .type _ResetVector, @function
    .balign 4
_ResetVector:
    j       .Lreset_go
    .balign 4
.Lreset_lit:
    .long   _q7_board_start
.Lreset_go:
    l32r    a2, .Lreset_lit
    jx      a2
    .size _ResetVector, . - _ResetVector

    .section .data.q7_board_bss_ready, "aw"
    .global q7_board_bss_ready
    .balign 4
q7_board_bss_ready:
    .long   0

    .section .noinit.q7_board_stacks, "aw", @nobits
    .global q7_board_stacks
    .global q7_board_exc_stacks
    .balign 16
q7_board_stacks:
    .space  {max_cpus} << {stack_shift}
q7_board_exc_stacks:
    .space  {max_cpus} << {exc_stack_shift}

    .section .text.q7_board_start, "ax"
    .balign 4
.Lstart_vecbase:
    .long   _vector_table
.Lstart_stacks:
    .long   q7_board_stacks
.Lstart_bss_start:
    .long   _bss_start
.Lstart_bss_end:
    .long   _bss_end
.Lstart_ready:
    .long   q7_board_bss_ready
.Lstart_ps:
    .long   0x00040020
.Lstart_rust:
    .long   q7_board_rust_start
    .global _q7_board_start
    .type _q7_board_start, @function
    .balign 4
_q7_board_start:
    movi    a2, 0
    wsr     a2, windowbase
    rsync
    movi    a2, 1
    wsr     a2, windowstart
    rsync
    movi    a2, 0
    wsr     a2, intenable
    l32r    a2, .Lstart_vecbase
    wsr     a2, vecbase
    movi    a2, 0x15
    wsr     a2, atomctl
    rsync

    rsr     a2, prid
    movi    a3, {max_cpus}
    bltu    a2, a3, .Lstart_cpu_ok
    movi    a2, 1
    movi    a3, {exit_bad_cpu}
    .byte   0x00, 0x51, 0x00
.Lstart_hang:
    j       .Lstart_hang
.Lstart_cpu_ok:
    addi    a4, a2, 1
    slli    a4, a4, {stack_shift}
    l32r    a5, .Lstart_stacks
    add     a1, a5, a4
    addi    a1, a1, -16

    l32r    a5, .Lstart_ready
    bnez    a2, .Lstart_wait_bss
    l32r    a6, .Lstart_bss_start
    l32r    a7, .Lstart_bss_end
    movi    a8, 0
.Lstart_zero:
    bgeu    a6, a7, .Lstart_zero_done
    s32i    a8, a6, 0
    addi    a6, a6, 4
    j       .Lstart_zero
.Lstart_zero_done:
    memw
    movi    a8, 1
    s32i    a8, a5, 0
    memw
    j       .Lstart_go
.Lstart_wait_bss:
    memw
    l32i    a8, a5, 0
    beqz    a8, .Lstart_wait_bss
    memw
.Lstart_go:
    l32r    a5, .Lstart_ps
    wsr     a5, ps
    rsync
    movi    a0, 0
    mov     a6, a2
    l32r    a8, .Lstart_rust
    callx4  a8
.Lstart_ret:
    j       .Lstart_ret
    .size _q7_board_start, . - _q7_board_start
    "#,
    max_cpus = const MAX_CPUS,
    stack_shift = const STACK_SHIFT,
    exc_stack_shift = const EXC_STACK_SHIFT,
    exit_bad_cpu = const EXIT_BAD_CPU,
);

unsafe extern "C" {
    /// The image's entry, run on every core with its PRID. Return 0 for
    /// success. Defined by the image (`#[unsafe(no_mangle)] pub extern "C"
    /// fn q7_board_main(cpu: u32) -> u32`).
    fn q7_board_main(cpu: u32) -> u32;
    static q7_board_stacks: u8;
}

/// Largest argv block we accept (pointer array + strings), in words.
const ARGV_WORDS: usize = 256;

struct ArgBuf(UnsafeCell<[u32; ARGV_WORDS]>);
// SAFETY: written only by core 0 before ARGS_READY is released; read-only
// afterwards (readers acquire ARGS_READY first).
unsafe impl Sync for ArgBuf {}

static ARGV: ArgBuf = ArgBuf(UnsafeCell::new([0; ARGV_WORDS]));
static ARGC: AtomicU32 = AtomicU32::new(0);
static ARGS_READY: AtomicU32 = AtomicU32::new(0);
static NCPUS: AtomicU32 = AtomicU32::new(1);

static DONE: [AtomicU32; MAX_CPUS as usize] = [const { AtomicU32::new(0) }; MAX_CPUS as usize];
static RESULT: [AtomicU32; MAX_CPUS as usize] = [const { AtomicU32::new(0) }; MAX_CPUS as usize];

/// Called by the start code on each core, on its own stack, with PS set.
#[unsafe(no_mangle)]
extern "C" fn q7_board_rust_start(cpu: u32) -> ! {
    if cpu == 0 {
        load_args();
        ARGS_READY.store(1, Ordering::Release);
    } else {
        while ARGS_READY.load(Ordering::Acquire) == 0 {
            core::hint::spin_loop();
        }
    }

    // SAFETY: the image defines `q7_board_main` with this signature (the
    // documented contract of this crate); it is called once per core.
    let r = unsafe { q7_board_main(cpu) };
    RESULT[cpu as usize].store(r, Ordering::Relaxed);
    DONE[cpu as usize].store(1, Ordering::Release);

    if cpu != 0 {
        super::park();
    }

    let n = cpu_count();
    let mut failed = 0;
    for c in 0..n as usize {
        while DONE[c].load(Ordering::Acquire) == 0 {
            core::hint::spin_loop();
        }
        let r = RESULT[c].load(Ordering::Relaxed);
        if r != 0 {
            let _ = writeln!(Console::stderr(), "q7-qemu-board: cpu {c} returned {r}");
            failed += 1;
        }
    }
    let status = if failed == 0 { EXIT_OK } else { EXIT_FAIL };
    let _ = writeln!(Console::stdout(), "q7-qemu-board: {n} core(s) done, {failed} failed, exit {status}");
    semihosting::exit(status)
}

fn load_args() {
    let argc = semihosting::argc();
    // SAFETY: only core 0 runs this, before ARGS_READY is released; no
    // other reference to the buffer exists yet.
    let buf = unsafe { &mut *ARGV.0.get() };
    if argc == 0 || !semihosting::argv(buf) {
        if argc != 0 {
            let _ = writeln!(Console::stderr(), "q7-qemu-board: argv too long, ignored");
        }
        return;
    }
    ARGC.store(argc, Ordering::Relaxed);
    if let Some(n) = args_unchecked().find_map(|a| a.strip_prefix("cpus=")).and_then(|v| v.parse::<u32>().ok()) {
        NCPUS.store(n.clamp(1, MAX_CPUS), Ordering::Relaxed);
    }
}

/// The semihosting arguments (`arg=` items of `-semihosting-config`; the
/// first is conventionally the program name). Empty until core 0 has loaded
/// them, which happens before any core's `q7_board_main` runs.
pub fn args() -> impl Iterator<Item = &'static str> {
    let ready = ARGS_READY.load(Ordering::Acquire) != 0;
    args_unchecked().take(if ready { usize::MAX } else { 0 })
}

/// The arguments, without checking ARGS_READY: only for core 0 (which
/// loads them) or after ARGS_READY was acquired.
fn args_unchecked() -> impl Iterator<Item = &'static str> {
    let argc = ARGC.load(Ordering::Relaxed);
    // SAFETY: the buffer is written only by `load_args` on core 0 before
    // ARGC is set and ARGS_READY released; callers are core 0 after that
    // write or any core after acquiring ARGS_READY, so no write overlaps.
    let buf: &'static [u32; ARGV_WORDS] = unsafe { &*ARGV.0.get() };
    let base = buf.as_ptr() as usize;
    let bytes_len = ARGV_WORDS * 4;
    (0..argc as usize).filter_map(move |i| {
        let p = buf[i] as usize;
        if p < base || p >= base + bytes_len {
            return None;
        }
        // SAFETY: the range [base, base + bytes_len) is the buffer, which
        // lives for 'static and is no longer written.
        let bytes = unsafe { core::slice::from_raw_parts(p as *const u8, base + bytes_len - p) };
        let len = bytes.iter().position(|&b| b == 0)?;
        core::str::from_utf8(&bytes[..len]).ok()
    })
}

/// Value of the first argument of the form `name=value`.
pub fn arg(name: &str) -> Option<&'static str> {
    args().find_map(|a| a.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
}

/// Number of cores core 0 waits for: the `cpus=N` argument (xtask passes
/// the `-smp` value), default 1, at most [`MAX_CPUS`].
pub fn cpu_count() -> u32 {
    NCPUS.load(Ordering::Relaxed)
}

/// `(bottom, top)` of core `cpu`'s start-up stack (the start code sets
/// `a1 = top - 16`).
pub fn stack_bounds(cpu: u32) -> (usize, usize) {
    // Taking the address of an extern static is safe (no read happens).
    let base = core::ptr::addr_of!(q7_board_stacks) as usize;
    let size = 1usize << STACK_SHIFT;
    (base + cpu as usize * size, base + (cpu as usize + 1) * size)
}
