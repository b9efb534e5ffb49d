//! The vector table and the fatal-exception reporter.
//!
//! Each vector lives in its own input section; the generated linker script
//! places them at their offsets from VECBASE (`_vector_table`):
//!
//! | section                         | offset | |
//! |---|---|---|
//! | `.vectors.window_overflow4`     | 0x000 | s32e a0..a3, rfwo |
//! | `.vectors.window_underflow4`    | 0x040 | l32e a0..a3, rfwu |
//! | `.vectors.window_overflow8`     | 0x080 | |
//! | `.vectors.window_underflow8`    | 0x0C0 | |
//! | `.vectors.window_overflow12`    | 0x100 | |
//! | `.vectors.window_underflow12`   | 0x140 | |
//! | `.vectors.kernel_exception`     | 0x300 | fatal: report, exit 102 |
//! | `.vectors.user_exception`       | 0x340 | Alloca (EXCCAUSE 5): reload the caller's window, retry `movsp`; else fatal: report, exit 102 |
//! | `.vectors.double_exception`     | 0x3C0 | fatal: report DEPC, exit 102 |
//! | `.vectors.tail.*`               | 0x400.. | the common fatal handler (QEMU layout) |
//! | `.vectors.fll_tail`             | 0x400.. | halt (FLL layouts) |
//!
//! The vectors jump to `_q7_board_fatal`, which the linker script defines:
//! `_q7_board_fatal_report` in the QEMU layout, `_q7_board_fatal_halt` in
//! the FLL layouts. The reporter's literal pool holds per-image addresses
//! (its stacks, the Rust reporter), so the FLL layouts, whose vector page
//! must be byte-identical on all cores, use the position-independent halt
//! instead.
//!
//! The fatal path never returns, so it may clobber everything: it makes the
//! current window the only live one (WINDOWSTART = 1 << WINDOWBASE),
//! switches to the core's emergency stack, clears PS.EXCM (so the Rust
//! reporter can take window overflows) and calls `q7_board_exception`.

use core::fmt::Write;
use core::sync::atomic::{AtomicU32, Ordering};

use super::{semihosting, Console, EXC_STACK_SHIFT, EXIT_EXCEPTION, MAX_CPUS};

core::arch::global_asm!(
    r#"
    .section .vectors.window_overflow4, "ax"
    .global _WindowOverflow4
    .balign 4
_WindowOverflow4:
    s32e    a0, a5, -16
    s32e    a1, a5, -12
    s32e    a2, a5, -8
    s32e    a3, a5, -4
    rfwo

    .section .vectors.window_underflow4, "ax"
    .global _WindowUnderflow4
    .balign 4
_WindowUnderflow4:
    l32e    a0, a5, -16
    l32e    a1, a5, -12
    l32e    a2, a5, -8
    l32e    a3, a5, -4
    rfwu

    .section .vectors.window_overflow8, "ax"
    .global _WindowOverflow8
    .balign 4
_WindowOverflow8:
    s32e    a0, a9, -16
    l32e    a0, a1, -12
    s32e    a2, a9, -8
    s32e    a1, a9, -12
    s32e    a3, a9, -4
    s32e    a4, a0, -32
    s32e    a5, a0, -28
    s32e    a6, a0, -24
    s32e    a7, a0, -20
    rfwo

    .section .vectors.window_underflow8, "ax"
    .global _WindowUnderflow8
    .balign 4
_WindowUnderflow8:
    l32e    a1, a9, -12
    l32e    a0, a9, -16
    l32e    a7, a1, -12
    l32e    a2, a9, -8
    l32e    a4, a7, -32
    l32e    a3, a9, -4
    l32e    a5, a7, -28
    l32e    a6, a7, -24
    l32e    a7, a7, -20
    rfwu

    .section .vectors.window_overflow12, "ax"
    .global _WindowOverflow12
    .balign 4
_WindowOverflow12:
    s32e    a0, a13, -16
    l32e    a0, a1, -12
    s32e    a1, a13, -12
    s32e    a2, a13, -8
    s32e    a3, a13, -4
    s32e    a4, a0, -48
    s32e    a5, a0, -44
    s32e    a6, a0, -40
    s32e    a7, a0, -36
    s32e    a8, a0, -32
    s32e    a9, a0, -28
    s32e    a10, a0, -24
    s32e    a11, a0, -20
    rfwo

    .section .vectors.window_underflow12, "ax"
    .global _WindowUnderflow12
    .balign 4
_WindowUnderflow12:
    l32e    a1, a13, -12
    l32e    a0, a13, -16
    l32e    a11, a1, -12
    l32e    a2, a13, -8
    l32e    a4, a11, -48
    l32e    a8, a11, -32
    l32e    a3, a13, -4
    l32e    a5, a11, -44
    l32e    a6, a11, -40
    l32e    a7, a11, -36
    l32e    a9, a11, -28
    l32e    a10, a11, -24
    l32e    a11, a11, -20
    rfwu

    .section .vectors.kernel_exception, "ax"
    .global _KernelExceptionVector
    .balign 4
_KernelExceptionVector:
    movi    a0, 0
    j       _q7_board_fatal

    .section .vectors.user_exception, "ax"
    .global _UserExceptionVector
    .balign 4
_UserExceptionVector:
    xsr     a0, excsave1
    rsr     a0, exccause
    beqi    a0, 5, .Lalloca
    movi    a0, 1
    j       _q7_board_fatal

    // Alloca (EXCCAUSE 5): `movsp` in a function F found its caller G's
    // window already spilled (WindowStart[WB-3..WB-1] all clear), so G's
    // a0..a3 sit in the base save area below F's *old* SP, where a later
    // underflow would no longer look once SP moved. The handler reloads G
    // into the register file, exactly as a window underflow would, and
    // the `movsp` is retried: with G live, it proceeds, and G's next spill
    // goes below F's new SP. How: PS.OWB = WB (F's window), restore F's
    // a0..a3, rotate back by the call size G used (F's a0[31:30]) and
    // jump to the matching underflow handler, whose `rfwu` marks G's
    // window live, rotates to OWB and returns to EPC1, the `movsp`.
    // Scratch: 8 bytes at [a1-32, a1-24), below F's SP and below G's
    // base save area [a1-16, a1); F has no live callee, so they are free.
    // Position-independent (no literals), so the FLL images' vector pages
    // stay identical.
.Lalloca:
    addi    a0, a1, -32
    s32i    a2, a0, 0
    s32i    a3, a0, 4
    rsr     a2, ps
    rsr     a3, windowbase
    extui   a0, a2, 0, 8
    srli    a2, a2, 12
    slli    a2, a2, 12
    or      a2, a2, a0
    slli    a3, a3, 8
    or      a2, a2, a3
    wsr     a2, ps
    rsync
    addi    a0, a1, -32
    l32i    a2, a0, 0
    l32i    a3, a0, 4
    rsr     a0, excsave1
    bbsi    a0, 31, 1f
    rotw    -1
    j       _WindowUnderflow4
1:
    bbsi    a0, 30, 2f
    rotw    -2
    j       _WindowUnderflow8
2:
    rotw    -3
    j       _WindowUnderflow12

    .section .vectors.double_exception, "ax"
    .global _DoubleExceptionVector
    .balign 4
_DoubleExceptionVector:
    movi    a0, 2
    j       _q7_board_fatal

    .section .vectors.tail.q7_board_fatal, "ax"
    .balign 4
.Lfatal_stacks:
    .long   q7_board_exc_stacks
.Lfatal_ps:
    .long   0x00040020
.Lfatal_rust:
    .long   q7_board_exception
    .global _q7_board_fatal_report
    .type _q7_board_fatal_report, @function
    .balign 4
_q7_board_fatal_report:
    rsr     a2, windowbase
    ssl     a2
    movi    a3, 1
    sll     a3, a3
    wsr     a3, windowstart
    rsync
    mov     a6, a0
    rsr     a7, exccause
    rsr     a8, epc1
    bnei    a0, 2, 1f
    rsr     a8, depc
1:
    rsr     a9, excvaddr
    rsr     a10, prid
    movi    a3, {max_cpus}
    bltu    a10, a3, 2f
    movi    a10, 0
2:
    addi    a4, a10, 1
    slli    a4, a4, {exc_stack_shift}
    l32r    a5, .Lfatal_stacks
    add     a1, a5, a4
    addi    a1, a1, -16
    l32r    a5, .Lfatal_ps
    wsr     a5, ps
    rsync
    l32r    a12, .Lfatal_rust
    callx4  a12
3:
    j       3b
    .size _q7_board_fatal_report, . - _q7_board_fatal_report

    .section .vectors.fll_tail, "ax"
    .global _q7_board_fatal_halt
    .type _q7_board_fatal_halt, @function
    .balign 4
_q7_board_fatal_halt:
    waiti   15
    j       _q7_board_fatal_halt
    .size _q7_board_fatal_halt, . - _q7_board_fatal_halt
    "#,
    max_cpus = const MAX_CPUS,
    exc_stack_shift = const EXC_STACK_SHIFT,
);

/// Set once the reporter runs, so that a fault inside it exits at once.
static REPORTING: AtomicU32 = AtomicU32::new(0);

/// Name of an EXCCAUSE value (Xtensa ISA, exception causes).
pub fn exccause_name(cause: u32) -> &'static str {
    match cause {
        0 => "IllegalInstruction",
        1 => "Syscall",
        2 => "InstructionFetchError",
        3 => "LoadStoreError",
        4 => "Level1Interrupt",
        5 => "Alloca",
        6 => "IntegerDivideByZero",
        8 => "Privileged",
        9 => "LoadStoreAlignment",
        12 => "InstrPIFDataError",
        13 => "LoadStorePIFDataError",
        14 => "InstrPIFAddrError",
        15 => "LoadStorePIFAddrError",
        16 => "InstTLBMiss",
        17 => "InstTLBMultiHit",
        18 => "InstFetchPrivilege",
        20 => "InstFetchProhibited",
        24 => "LoadStoreTLBMiss",
        25 => "LoadStoreTLBMultiHit",
        26 => "LoadStorePrivilege",
        28 => "LoadProhibited",
        29 => "StoreProhibited",
        32..=39 => "CoprocessorDisabled",
        _ => "?",
    }
}

/// The fatal-exception reporter, called from `_q7_board_fatal` on the
/// core's emergency stack. `kind`: 0 kernel, 1 user, 2 double exception
/// (then `epc` is DEPC).
#[unsafe(no_mangle)]
extern "C" fn q7_board_exception(kind: u32, cause: u32, epc: u32, vaddr: u32, cpu: u32) -> ! {
    if REPORTING.swap(1, Ordering::AcqRel) != 0 {
        semihosting::exit(EXIT_EXCEPTION);
    }
    let kind = match kind {
        0 => "kernel",
        1 => "user",
        _ => "double",
    };
    let pc = if kind == "double" { "DEPC" } else { "EPC1" };
    let mut c = Console::stderr();
    let _ = writeln!(c, "q7-qemu-board: {kind} exception on cpu {cpu}: EXCCAUSE={cause} ({}) {pc}=0x{epc:08x} EXCVADDR=0x{vaddr:08x}", exccause_name(cause));
    c.flush();
    semihosting::exit(EXIT_EXCEPTION)
}
