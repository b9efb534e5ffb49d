//! The main job: the example op on every emulated core. Core 0 plays the
//! loader (inputs and the invocation block in HBM); every core posts the
//! block in its mailbox, registers the ops, launches the op through its
//! `<fn>_stack_switch` and prints its part of the result; core 0 then
//! checks the whole output against the reference.

use crate::loader::{axpy_block, read_f32, Bump, Registry, AREA_SOC};
use core::sync::atomic::{AtomicU32, Ordering};
use q7_qemu_board as board;

/// SoC addresses of the block and the output, as offsets from the
/// loader's area (32-bit atomics: the core has no 64-bit ones).
static BLOCK: AtomicU32 = AtomicU32::new(0);
static OUT: AtomicU32 = AtomicU32::new(0);
static READY: AtomicU32 = AtomicU32::new(0);
static FINISHED: AtomicU32 = AtomicU32::new(0);

/// Elements when no `n=` is given: not a multiple of 8, so the slices are
/// ragged.
const DEFAULT_N: u64 = 4099;
const ALPHA: f32 = 2.5;

fn a(i: u64) -> f32 {
    i as f32 * 0.5 - 7.0
}

fn b(i: u64) -> f32 {
    (i % 13) as f32
}

pub fn run(cpu: u32) -> u32 {
    let cores = board::cpu_count();
    let n: u64 = board::arg("n").and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_N);
    let op = if cores == 1 { "axpy_single" } else { "axpy" };
    if cpu == 0 {
        let mut bump = Bump::new(0, 4 << 20);
        let ta = bump.f32_tensor(n, a);
        let tb = bump.f32_tensor(n, b);
        let out = bump.f32_output(n);
        // Poison the output so an element nobody writes cannot match.
        for i in 0..n {
            // SAFETY: the output was just placed in hbm_scratch (RAM).
            unsafe { crate::loader::nx(out.storage + 4 * i).cast::<u32>().write_volatile(0x7fc0_dead) };
        }
        BLOCK.store((axpy_block(&mut bump, ta, tb, ALPHA, out) - AREA_SOC) as u32, Ordering::Relaxed);
        OUT.store((out.storage - AREA_SOC) as u32, Ordering::Relaxed);
        READY.store(1, Ordering::Release);
    } else {
        while READY.load(Ordering::Acquire) == 0 {
            core::hint::spin_loop();
        }
    }
    let out = AREA_SOC + OUT.load(Ordering::Relaxed) as u64;

    neuroncustomop::device::post_invocation(AREA_SOC + BLOCK.load(Ordering::Relaxed) as u64);
    let (reg, count) = Registry::register();
    let Some(f) = reg.find(op) else {
        board::println!("example: core {cpu}: op {op} not registered (register_funcs = {count})");
        return 1;
    };
    // SAFETY: a registered launcher, called as the loader calls it.
    let rc = unsafe { f() };
    let status = axpy_op::kernel_status(cpu as usize);
    // SAFETY: plain C accessors of the library.
    let last = unsafe { neuron_last_error() };
    let (start, len) = if cores == 1 { (0, n) } else { axpy_op::slice_of(n, cpu as u64, axpy_op::get_cpu_count_rust() as u64) };
    let shown = len.min(3);
    let mut line = heapless_line();
    for i in start..start + shown {
        let _ = core::fmt::Write::write_fmt(&mut line, format_args!(" {}", read_f32(out, i)));
    }
    board::println!(
        "example: core {cpu}: {op}_stack_switch() = {rc}, kernel status {status}, out[{start}..{}] ({len} elements):{}{}",
        start + len,
        line.as_str(),
        if len > shown { " ..." } else { "" }
    );
    FINISHED.fetch_add(1, Ordering::AcqRel);
    let mut fail = (rc != 0 || status != 0) as u32;
    if fail != 0 {
        board::println!("example: core {cpu}: failed (last error {last})");
    }
    if cpu == 0 {
        while FINISHED.load(Ordering::Acquire) < cores {
            core::hint::spin_loop();
        }
        let mut bad = 0u64;
        let mut first = None;
        for i in 0..n {
            let want = a(i) * ALPHA + b(i);
            let got = read_f32(out, i);
            if got.to_bits() != want.to_bits() {
                bad += 1;
                first.get_or_insert((i, got, want));
            }
        }
        if bad == 0 {
            board::println!("example: output matches the reference: {n} elements of a*{ALPHA}+b on {cores} core(s)");
        } else {
            let (i, g, w) = first.unwrap_or_default();
            board::println!("example: output MISMATCH: {bad} of {n} elements differ (first at {i}: got {g}, want {w})");
            fail = 1;
        }
    }
    fail
}

unsafe extern "C" {
    fn neuron_last_error() -> i32;
}

/// A small fixed line buffer.
pub struct Line {
    len: usize,
    buf: [u8; 96],
}

impl Line {
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("?")
    }
}

impl core::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let b = s.as_bytes();
        let k = b.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + k].copy_from_slice(&b[..k]);
        self.len += k;
        Ok(())
    }
}

pub fn heapless_line() -> Line {
    Line { len: 0, buf: [0; 96] }
}
