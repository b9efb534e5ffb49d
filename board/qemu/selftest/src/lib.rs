//! QEMU self-test image for the Q7 bring-up (run by `cargo xtask qemu-test`).
//!
//! Every core prints its PRID, runs recursions deeper than the 64-register
//! window file (so window overflow/underflow 4, 8 and 12 are exercised) and
//! returns 0 on success. The semihosting argument `fault=...` makes core 0
//! (or the core given by `fault_cpu=N`) misbehave instead, for the negative
//! tests: `load` (load from unmapped memory), `ill` (illegal instruction),
//! `panic`, `abort`, `hang`, `fail` (return 1), `stack` (window
//! overflow onto an unmapped stack: double exception).
#![no_std]
#![cfg_attr(target_arch = "xtensa", feature(asm_experimental_arch))]

#[cfg(target_arch = "xtensa")]
mod image {
    use core::hint::black_box;
    use q7_qemu_board as board;

    /// No RAM or ROM is mapped here on `sim` or `virt`.
    const UNMAPPED: usize = 0x1000_0000;

    #[inline(never)]
    fn fib(n: u32) -> u32 {
        if n < 2 {
            n
        } else {
            fib(black_box(n - 1)) + fib(black_box(n - 2))
        }
    }

    /// Recursion with a big, live frame (many registers and stack).
    #[inline(never)]
    fn deep(n: u32, acc: &mut [u32; 8]) -> u32 {
        let mut local = [0u32; 8];
        for (i, l) in local.iter_mut().enumerate() {
            *l = black_box(n.wrapping_mul(i as u32 + 1) ^ acc[i]);
        }
        let below = if n == 0 {
            0
        } else {
            deep(black_box(n - 1), &mut local)
        };
        let mut s = below;
        for (i, l) in local.iter().enumerate() {
            s = s.wrapping_add(*l ^ acc[i]);
        }
        acc[0] = acc[0].wrapping_add(s);
        s
    }

    fn deep_reference(n: u32, acc: &mut [u32; 8]) -> u32 {
        // Same computation, iteratively: compute the chain of `local`
        // arrays top-down, then fold bottom-up.
        const MAX: usize = 512;
        let mut chain = [[0u32; 8]; MAX + 2];
        chain[0] = *acc;
        for d in 0..=n as usize {
            let k = n - d as u32;
            for i in 0..8 {
                chain[d + 1][i] = k.wrapping_mul(i as u32 + 1) ^ chain[d][i];
            }
        }
        let mut below = 0u32;
        for d in (0..=n as usize).rev() {
            let mut s = below;
            for i in 0..8 {
                s = s.wrapping_add(chain[d + 1][i] ^ chain[d][i]);
            }
            chain[d][0] = chain[d][0].wrapping_add(s);
            below = s;
        }
        *acc = chain[0];
        below
    }

    unsafe extern "C" {
        /// Recursion through `call4`/`call12` (asm below), returns n.
        fn q7_selftest_rec4(n: u32) -> u32;
        fn q7_selftest_rec12(n: u32) -> u32;
        /// Recurses with the stack pointer moved to unmapped memory: the
        /// first window overflow faults inside the handler (PS.EXCM set),
        /// which is a double exception.
        fn q7_selftest_bad_stack() -> u32;
    }

    // Hand-written recursions using call4 and call12, which LLVM does not
    // emit, so that the 4- and 12-register window handlers run too.
    // rec(n) = n == 0 ? 0 : rec(n - 1) + 1.
    core::arch::global_asm!(
        r#"
        .section .literal.q7_selftest_rec, "a"
        .balign 4
.Lrec4_lit:
        .long   q7_selftest_rec4
.Lrec12_lit:
        .long   q7_selftest_rec12
.Lbad_sp_lit:
        .long   0x10000000

        .section .text.q7_selftest_rec, "ax"
        .global q7_selftest_rec4
        .type q7_selftest_rec4, @function
        .balign 4
q7_selftest_rec4:
        entry   a1, 32
        beqz    a2, 1f
        addi    a6, a2, -1
        l32r    a8, .Lrec4_lit
        callx4  a8
        addi    a2, a6, 1
1:
        retw
        .size q7_selftest_rec4, . - q7_selftest_rec4

        .global q7_selftest_rec12
        .type q7_selftest_rec12, @function
        .balign 4
q7_selftest_rec12:
        entry   a1, 48
        beqz    a2, 1f
        addi    a14, a2, -1
        l32r    a8, .Lrec12_lit
        callx12 a8
        addi    a2, a14, 1
1:
        retw
        .size q7_selftest_rec12, . - q7_selftest_rec12

        .global q7_selftest_bad_stack
        .type q7_selftest_bad_stack, @function
        .balign 4
q7_selftest_bad_stack:
        entry   a1, 32
        l32r    a1, .Lbad_sp_lit
        movi    a6, 100
        l32r    a8, .Lrec4_lit
        callx4  a8
        mov     a2, a6
        retw
        .size q7_selftest_bad_stack, . - q7_selftest_bad_stack
        "#
    );

    fn fault_here(cpu: u32) -> bool {
        let target = board::arg("fault_cpu")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0u32);
        cpu == target
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn q7_board_main(cpu: u32) -> u32 {
        let prid = board::cpu_id();
        board::println!("selftest: cpu {cpu} PRID={prid} of {}", board::cpu_count());
        if prid != cpu {
            return 10;
        }

        if let Some(fault) = board::arg("fault") {
            if fault_here(cpu) {
                board::println!("selftest: cpu {cpu} injecting fault '{fault}'");
                match fault {
                    // SAFETY: deliberately faulting; the board reports it.
                    "load" => unsafe {
                        black_box(core::ptr::read_volatile(black_box(UNMAPPED) as *const u32));
                    },
                    // SAFETY: `ill` raises IllegalInstruction on purpose.
                    "ill" => unsafe { core::arch::asm!("ill") },
                    "panic" => panic!("injected panic on cpu {cpu}"),
                    "abort" => {
                        unsafe extern "C" {
                            fn abort() -> !;
                        }
                        // SAFETY: the board defines `abort`; it does not return.
                        unsafe { abort() }
                    }
                    "hang" => loop {
                        core::hint::spin_loop();
                    },
                    "fail" => return 1,
                    // SAFETY: deliberately faulting (double exception).
                    "stack" => unsafe {
                        black_box(q7_selftest_bad_stack());
                    },
                    _ => {}
                }
                board::println!("selftest: cpu {cpu} fault '{fault}' did not trap");
                return 11;
            }
        }

        let f = fib(black_box(20));
        if f != 6765 {
            board::println!("selftest: cpu {cpu} fib(20) = {f}, expected 6765");
            return 1;
        }
        let n = 200 + cpu;
        let mut a = [cpu; 8];
        let mut b = [cpu; 8];
        let d = deep(black_box(n), &mut a);
        let r = deep_reference(n, &mut b);
        if d != r || a != b {
            board::println!("selftest: cpu {cpu} deep({n}) = {d:#x}, expected {r:#x}");
            return 2;
        }
        // SAFETY: plain windowed-ABI functions taking and returning a u32.
        let (r4, r12) = unsafe {
            (
                q7_selftest_rec4(black_box(100)),
                q7_selftest_rec12(black_box(100)),
            )
        };
        if r4 != 100 || r12 != 100 {
            board::println!("selftest: cpu {cpu} rec4/rec12(100) = {r4}/{r12}");
            return 3;
        }
        board::println!("selftest: cpu {cpu} ok fib(20)={f} deep({n})={d:#x} rec4/12=100");
        0
    }
}
