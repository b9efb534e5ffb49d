//! The on-target suite: the library's C surface under the real windowed
//! ABI on an emulated core. Each test prints `suite: core C: PASS|FAIL
//! name` and the image exits non-zero if any fails.

use crate::loader::{nx, Bump};
use alloc::vec::Vec;
use core::ffi::c_void;
use core::hint::black_box;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use neuroncustomop::hal::platform::{qemu, LIBC_HEAP_SIZE, PINNED_WINDOW_SIZE, SCRATCH_AREA_SIZE};
use neuroncustomop::hal::{Hal, QEMU};
use neuroncustomop::runtime::marshal::descriptor::{Location, RawTensorDesc};
use neuroncustomop::runtime::marshal::invocation::{ArgKind, InvocationBuilder};
use neuroncustomop::runtime::Error;
use q7_qemu_board as board;

type WrapperFn = unsafe extern "C" fn();

unsafe extern "C" {
    fn neuron_runtime_init();
    fn neuron_last_error() -> i32;
    fn neuron_clear_error();
    fn tcm_malloc(n: usize) -> *mut c_void;
    fn tcm_free(p: *mut c_void);
    fn neuron_dataram_allocate(size: u32, out: *mut *mut c_void, align: u32) -> i32;
    fn neuron_dataram_deallocate(p: *mut c_void) -> i32;
    fn neuron_hbm_allocate(size: u32, out: *mut u64, align: u32) -> i32;
    fn neuron_hbm_deallocate(addr: u64) -> i32;
    fn neuron_translate_ctx() -> *mut c_void;
    fn neuron_translate(ctx: *mut c_void, addr: u64) -> *mut c_void;
    fn neuron_set_memcpy_method(m: u32) -> i32;
    fn malloc(n: usize) -> *mut c_void;
    fn free(p: *mut c_void);
    fn calloc(n: usize, s: usize) -> *mut c_void;
    fn realloc(p: *mut c_void, n: usize) -> *mut c_void;
    fn switch_stack_or_call_wrapper(w: Option<WrapperFn>, stack_size: u32) -> i32;
    fn customop_setup(has_return: bool);
    fn customop_status() -> i32;
    fn customop_next_tensor() -> axpy_op::TensorView;
    fn customop_cleanup() -> i32;
    fn get_cpu_id() -> i32;
    /// Calls `f` with a4..a7 holding known patterns and checks, after it
    /// returns, that a1 (SP) and a4..a7 are unchanged: the bits of the
    /// result say which were not (bit 0 SP, bits 1..4 a4..a7). `f`'s
    /// return value goes to `*ret`.
    fn suite_call_checked(f: unsafe extern "C" fn() -> i32, ret: *mut i32) -> u32;
}

// The register check. a0..a7 of a caller survive `callx8`; the harness
// loads patterns into a4..a7, keeps a copy of a1 in a2, and compares all
// of them after the call.
core::arch::global_asm!(
    r#"
    .section .text.suite_call_checked, "ax"
    .balign 4
.Lpat4: .long 0xA4A4A4A4
.Lpat5: .long 0x5A5A5A5A
.Lpat6: .long 0x66006600
.Lpat7: .long 0x77777777
    .global suite_call_checked
    .type suite_call_checked, @function
    .balign 4
suite_call_checked:
    entry   a1, 32
    mov     a8, a2
    mov     a2, a1
    l32r    a4, .Lpat4
    l32r    a5, .Lpat5
    l32r    a6, .Lpat6
    l32r    a7, .Lpat7
    callx8  a8
    s32i    a10, a3, 0
    movi    a8, 0
    beq     a1, a2, 1f
    addi    a8, a8, 1
1:
    l32r    a9, .Lpat4
    beq     a4, a9, 2f
    addi    a8, a8, 2
2:
    l32r    a9, .Lpat5
    beq     a5, a9, 3f
    addi    a8, a8, 4
3:
    l32r    a9, .Lpat6
    beq     a6, a9, 4f
    addi    a8, a8, 8
4:
    l32r    a9, .Lpat7
    beq     a7, a9, 5f
    addi    a8, a8, 16
5:
    mov     a2, a8
    retw
    .size suite_call_checked, . - suite_call_checked
    "#
);

fn sp() -> usize {
    let v: usize;
    // SAFETY: copies a1.
    unsafe { core::arch::asm!("mov {0}, a1", out(reg) v, options(nomem, nostack, preserves_flags)) };
    v
}

fn cpu() -> usize {
    // SAFETY: plain C accessor.
    unsafe { get_cpu_id() as usize }
}

fn last() -> i32 {
    // SAFETY: plain C accessor.
    unsafe { neuron_last_error() }
}

struct Report {
    cpu: u32,
    failed: u32,
}

impl Report {
    fn check(&mut self, name: &str, r: Result<(), alloc::string::String>) {
        match r {
            Ok(()) => board::println!("suite: core {}: PASS {name}", self.cpu),
            Err(why) => {
                board::println!("suite: core {}: FAIL {name}: {why}", self.cpu);
                self.failed += 1;
            }
        }
    }
}

macro_rules! ensure {
    ($c:expr, $($f:tt)*) => {
        if !$c {
            return Err(alloc::format!($($f)*));
        }
    };
}

type TestResult = Result<(), alloc::string::String>;

pub fn run(cpu: u32) -> u32 {
    let mut r = Report { cpu, failed: 0 };
    // SAFETY: the init prologue; safe to run more than once.
    unsafe { neuron_runtime_init() };
    r.check("identity: get_cpu_id() == PRID, 8 cores", identity(cpu));
    r.check("heaps: data RAM (tcm_malloc, neuron_dataram_allocate)", dataram(cpu));
    r.check("heaps: HBM (neuron_hbm_allocate, translate through hbm_scratch)", hbm(cpu));
    r.check("heaps: libc (malloc/calloc/realloc/free) and Rust alloc", libc_heap(cpu));
    r.check("translate: pinned hit, dynamic misses, round-robin eviction, window registers", translate());
    r.check("stack switch: wrapper that fits runs on the core stack", switch_fits(cpu));
    r.check("stack switch: deep recursion with big frames runs on an HBM stack", switch_deep(cpu));
    r.check("stack switch: default 4196 bytes with a tight ISL switches", switch_tight(cpu));
    r.check("bad input: error codes (null wrapper, bad memcpy method, unmapped address)", bad_input());
    r.check("bad input: FP32R tensor argument -> DtypeNotMarshallable", bad_dtype(cpu));
    r.check("bits: nsau leading_zeros and log2 against a shift loop", bits());
    board::println!("suite: core {cpu}: {} failed", r.failed);
    r.failed
}

/// The `nsau` path of `bits::leading_zeros` (the host build has only the
/// `core` one): every single-bit value, its neighbours, and a sweep of
/// mixed values, against a loop that shifts a bit down.
fn bits() -> TestResult {
    use neuroncustomop::hal::bits::{leading_zeros, log2};
    let reference = |x: u32| (0..32).find(|&n| x & (0x8000_0000 >> n) != 0).unwrap_or(32);
    let mut x = 0x9E37_79B9u32;
    for s in 0..32u32 {
        x = x.rotate_left(5) ^ s.wrapping_mul(0x85EB_CA6B);
        for v in [0, 1u32 << s, (1u32 << s) | 1, (1u32 << s).wrapping_sub(1), u32::MAX >> s, x, x >> s] {
            let v = black_box(v);
            let (n, want) = (leading_zeros(v), reference(v));
            ensure!(n == want, "leading_zeros({v:#x}) = {n}, want {want}");
            ensure!(log2(v) == (v != 0).then(|| 31 - want), "log2({v:#x}) = {:?}", log2(v));
        }
    }
    Ok(())
}

fn identity(cpu: u32) -> TestResult {
    // SAFETY: plain C accessors.
    let (id, n) = unsafe { (get_cpu_id(), axpy_op::get_cpu_count_rust()) };
    ensure!(id == cpu as i32 && n == 8, "get_cpu_id {id}, get_cpu_count {n}");
    Ok(())
}

fn dataram(cpu: u32) -> TestResult {
    let lo = qemu::private_base(cpu) as usize;
    let (heap_nx, heap_len) = QEMU.dataram_heap();
    let heap_lo = lo + (heap_nx - qemu::PRIVATE_NX) as usize;
    let in_heap = |p: usize, n: usize| p >= heap_lo && p + n <= heap_lo + heap_len as usize;
    // SAFETY: the C ABI as documented; pointers written are live blocks.
    unsafe {
        let p = tcm_malloc(100);
        let q = tcm_malloc(100);
        ensure!(!p.is_null() && !q.is_null() && p != q, "tcm_malloc: {p:?} {q:?}");
        ensure!(
            p as usize % 64 == 0 && in_heap(p as usize, 100) && in_heap(q as usize, 100),
            "tcm block {p:?} outside this core's data-RAM heap at {heap_lo:#x}"
        );
        p.cast::<u8>().write_bytes(0xAB, 100);
        q.cast::<u8>().write_bytes(0xCD, 100);
        ensure!(*p.cast::<u8>().add(99) == 0xAB, "tcm block overlapped");
        tcm_free(p);
        neuron_clear_error();
        tcm_free(p);
        ensure!(last() == Error::DoubleFree.code(), "double tcm_free: last error {}", last());
        tcm_free(q);
        let big = tcm_malloc(1 << 20);
        ensure!(big.is_null() && last() == Error::OutOfMemory.code(), "1 MiB tcm_malloc: {big:?}, last error {}", last());
        let mut d: *mut c_void = core::ptr::null_mut();
        ensure!(neuron_dataram_allocate(256, &mut d, 1024) == 0 && d as usize % 1024 == 0, "dataram_allocate align 1024: {d:?}");
        ensure!(neuron_dataram_deallocate(d) == 0 && neuron_dataram_deallocate(d) == -1, "dataram double free not refused");
    }
    Ok(())
}

fn hbm(cpu: u32) -> TestResult {
    let area = QEMU.scratch_area_soc(cpu);
    let (lo, hi) = (area + LIBC_HEAP_SIZE, area + SCRATCH_AREA_SIZE);
    // SAFETY: the C ABI as documented.
    unsafe {
        let ctx = neuron_translate_ctx();
        let mut a = 0u64;
        ensure!(neuron_hbm_allocate(4096, &mut a, 64) == 0, "hbm_allocate: last error {}", last());
        ensure!(a % 64 == 0 && a >= lo && a + 4096 <= hi, "HBM block {a:#x} outside this core's heap [{lo:#x}, {hi:#x})");
        let p = neuron_translate(ctx, a);
        ensure!(p.cast::<u8>() == nx(a), "translate({a:#x}) = {p:?}, want {:?} (pinned hbm_scratch)", nx(a));
        for i in 0..1024u32 {
            p.cast::<u32>().add(i as usize).write_volatile(i ^ cpu);
        }
        let p2 = neuron_translate(ctx, a + 4092);
        ensure!(p2.cast::<u32>().read_volatile() == 1023 ^ cpu, "read back through a second translate");
        ensure!(neuron_hbm_deallocate(a) == 0, "hbm free");
        ensure!(neuron_hbm_deallocate(a) == -1 && last() == Error::DoubleFree.code(), "double hbm free: last error {}", last());
        let mut big = 0u64;
        ensure!(
            neuron_hbm_allocate(64 << 20, &mut big, 64) == -1 && last() == Error::OutOfMemory.code(),
            "64 MiB HBM allocate did not fail with OutOfMemory ({})",
            last()
        );
        ensure!(neuron_hbm_allocate(64, core::ptr::null_mut(), 64) == -1, "null out-parameter accepted");
    }
    Ok(())
}

fn libc_heap(cpu: u32) -> TestResult {
    let lo = nx(QEMU.scratch_area_soc(cpu)) as usize;
    let in_arena = |p: usize| p >= lo && p < lo + LIBC_HEAP_SIZE as usize;
    // SAFETY: the C ABI as documented; blocks are used within their size.
    unsafe {
        let m = malloc(1000).cast::<u8>();
        ensure!(!m.is_null() && in_arena(m as usize) && m as usize % 64 == 0, "malloc: {m:?} not in this core's arena at {lo:#x}");
        for i in 0..1000 {
            m.add(i).write(i as u8);
        }
        let c = calloc(100, 10).cast::<u8>();
        ensure!(!c.is_null() && (0..1000).all(|i| c.add(i).read() == 0), "calloc not zeroed");
        let m2 = realloc(m.cast(), 5000).cast::<u8>();
        ensure!(!m2.is_null() && (0..1000).all(|i| m2.add(i).read() == i as u8), "realloc lost the contents");
        free(m2.cast());
        free(c.cast());
        free(core::ptr::null_mut());
        // black_box: LLVM knows calloc and would fold an unused call's
        // null check away.
        let z = black_box(calloc(black_box(usize::MAX), 2));
        ensure!(z.is_null(), "calloc overflow not refused");
    }
    let v: Vec<u32> = (0..2000).collect();
    ensure!(in_arena(v.as_ptr() as usize) && v.iter().sum::<u32>() == 1999 * 1000, "Rust Vec not in the libc arena");
    let b = alloc::boxed::Box::new([7u64; 64]);
    ensure!(in_arena(&*b as *const _ as usize), "Box not in the libc arena");
    Ok(())
}

fn window_reg(i: usize) -> u64 {
    neuroncustomop::device::with_state(|s| s.hal().read_window_register(QEMU.dynamic_windows[i].register)).unwrap_or(u64::MAX)
}

fn translate() -> TestResult {
    const R: u64 = 16 << 20;
    let base = QEMU.hbm_soc_base + (1 << 30);
    // SAFETY: the C ABI; the returned pointers are compared, never
    // dereferenced (QEMU leaves the dynamic windows unmapped).
    unsafe {
        let ctx = neuron_translate_ctx();
        let tr = |a: u64| neuron_translate(ctx, a) as usize;
        let w = |i: usize| QEMU.dynamic_windows[i].nx_base as usize;
        let x = QEMU.scratch_soc_base + 12345;
        ensure!(tr(x) == nx(x) as usize, "pinned hbm_scratch hit");
        for (k, win) in [(0u64, 0usize), (1, 1), (2, 2)] {
            let a = base + k * R + 0x123;
            ensure!(tr(a) == w(win) + 0x123, "region {k} -> {:#x}, want window {win} at {:#x}", tr(a), w(win));
            ensure!(window_reg(win) == base + k * R, "window register {win} = {:#x}", window_reg(win));
        }
        ensure!(tr(base + 8) == w(0) + 8 && window_reg(0) == base, "hit on window 0 reprogrammed it");
        ensure!(tr(base + 3 * R) == w(0) && window_reg(0) == base + 3 * R, "4th region did not evict window 0 (round robin)");
        ensure!(tr(base + 4) == w(1) + 4 && window_reg(1) == base, "evicted region did not come back in window 1");
        ensure!(window_reg(2) == base + 2 * R, "window 2 changed");
        neuron_clear_error();
        ensure!(tr(0x1000) == 0 && last() == Error::AddressUnmapped.code(), "unmapped address: last error {}", last());
        let ctx_bytes = core::slice::from_raw_parts(ctx.cast::<u8>(), 168);
        ensure!(ctx_bytes[160] == 2, "next_alloc = {}, want 2", ctx_bytes[160]);
    }
    Ok(())
}

// Per-core observations of the wrappers (under QEMU all cores share the
// image).
static SEEN_SP: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];
static SEEN_ISL: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];
static SEEN_RESULT: [AtomicU32; 8] = [const { AtomicU32::new(0) }; 8];

const DEPTH: u32 = 400;

/// Recursion with a 512-byte live frame: DEPTH levels need about 220 KiB,
/// far more than the 64 KiB core stack.
#[inline(never)]
fn deep(n: u32) -> u32 {
    let mut local = [0u32; 128];
    for (i, l) in local.iter_mut().enumerate() {
        *l = black_box(n.wrapping_mul(i as u32 + 1));
    }
    let below = if n == 0 { 0 } else { deep(black_box(n - 1)) };
    local.iter().fold(below, |s, v| s.rotate_left(1) ^ v)
}

fn deep_reference(n: u32) -> u32 {
    let mut r = 0u32;
    for k in 0..=n {
        r = (0..128u32).fold(r, |s, i| s.rotate_left(1) ^ k.wrapping_mul(i + 1));
    }
    r
}

unsafe extern "C" fn small_wrapper() {
    let c = cpu();
    SEEN_SP[c].store(sp(), Ordering::Relaxed);
    SEEN_ISL[c].store(neuroncustomop::device::stack_limit(), Ordering::Relaxed);
    SEEN_RESULT[c].store(black_box(41) + 1, Ordering::Relaxed);
}

unsafe extern "C" fn deep_wrapper() {
    let c = cpu();
    SEEN_SP[c].store(sp(), Ordering::Relaxed);
    SEEN_ISL[c].store(neuroncustomop::device::stack_limit(), Ordering::Relaxed);
    SEEN_RESULT[c].store(deep(black_box(DEPTH)), Ordering::Relaxed);
}

unsafe extern "C" fn launch_small_4196() -> i32 {
    // SAFETY: a wrapper of this module.
    unsafe { switch_stack_or_call_wrapper(Some(small_wrapper), 4196) }
}

unsafe extern "C" fn launch_small_default() -> i32 {
    // SAFETY: as above.
    unsafe { switch_stack_or_call_wrapper(Some(small_wrapper), 0) }
}

unsafe extern "C" fn launch_deep() -> i32 {
    // SAFETY: as above; asks for 256 KiB (as -DSTACK_SIZE=262144 would).
    unsafe { switch_stack_or_call_wrapper(Some(deep_wrapper), 256 << 10) }
}

fn hbm_in_use() -> u64 {
    neuroncustomop::device::with_state(|s| s.hbm().stats().in_use).unwrap_or(u64::MAX)
}

/// Runs a launcher through the register check with a canary on this
/// frame; returns what the wrapper saw.
fn launch(f: unsafe extern "C" fn() -> i32) -> Result<(usize, usize, u32), alloc::string::String> {
    let c = cpu();
    SEEN_SP[c].store(0, Ordering::Relaxed);
    let canary: [u32; 16] = core::array::from_fn(|i| 0xC0DE_0000 ^ i as u32);
    let canary = black_box(canary);
    let mut ret = -1;
    // SAFETY: `f` is a launcher; `ret` is writable.
    let bad = unsafe { suite_call_checked(f, &mut ret) };
    let canary = black_box(canary);
    ensure!(bad == 0, "caller's registers changed across the call (mask {bad:#x}: bit 0 SP, bits 1..4 a4..a7)");
    ensure!(canary.iter().enumerate().all(|(i, v)| *v == 0xC0DE_0000 ^ i as u32), "caller's stack canary changed");
    ensure!(ret == 0, "switch_stack_or_call_wrapper returned {ret} (last error {})", last());
    Ok((SEEN_SP[c].load(Ordering::Relaxed), SEEN_ISL[c].load(Ordering::Relaxed), SEEN_RESULT[c].load(Ordering::Relaxed)))
}

fn on_hbm(p: usize) -> bool {
    p >= qemu::SCRATCH_NX as usize && p < qemu::SCRATCH_NX as usize + PINNED_WINDOW_SIZE as usize
}

fn switch_fits(cpu: u32) -> TestResult {
    let (lo, hi) = board::stack_bounds(cpu);
    let isl0 = neuroncustomop::device::stack_limit();
    ensure!(isl0 == lo, "ISL {isl0:#x} is not the core stack's bottom {lo:#x}");
    let (s, isl, v) = launch(launch_small_4196)?;
    ensure!(s > lo && s < hi, "wrapper ran at SP {s:#x}, outside the core stack [{lo:#x}, {hi:#x})");
    ensure!(isl == lo && v == 42, "ISL in wrapper {isl:#x}, result {v}");
    Ok(())
}

fn switch_deep(cpu: u32) -> TestResult {
    let (lo, _) = board::stack_bounds(cpu);
    let before = hbm_in_use();
    let (s, isl, v) = launch(launch_deep)?;
    ensure!(on_hbm(s) && on_hbm(isl) && s > isl, "wrapper SP {s:#x}, ISL {isl:#x}: not on an HBM stack");
    ensure!(s - isl >= 256 << 10, "HBM stack of {} bytes, asked for 256 KiB", s - isl);
    ensure!(v == deep_reference(DEPTH), "deep({DEPTH}) = {v:#x}, want {:#x}", deep_reference(DEPTH));
    ensure!(neuroncustomop::device::stack_limit() == lo, "ISL not restored");
    ensure!(hbm_in_use() == before, "HBM stack not freed ({} -> {} bytes in use)", before, hbm_in_use());
    Ok(())
}

fn switch_tight(cpu: u32) -> TestResult {
    let (lo, _) = board::stack_bounds(cpu);
    let tight = sp() - 3000;
    // SAFETY: a higher limit than the stack's real end: only less stack
    // is allowed (what the test checks the switch gets past).
    unsafe { neuroncustomop::device::set_stack_limit(tight) };
    let r = launch(launch_small_default);
    let after = neuroncustomop::device::stack_limit();
    // SAFETY: the board's own limit back, the on-core stack's bottom.
    unsafe { neuroncustomop::device::set_stack_limit(lo) };
    let (s, isl, v) = r?;
    ensure!(on_hbm(s) && on_hbm(isl) && v == 42, "wrapper SP {s:#x}, ISL {isl:#x}, result {v}: did not switch");
    ensure!(after == tight, "ISL after the switch {after:#x}, want {tight:#x}");
    Ok(())
}

fn bad_input() -> TestResult {
    // SAFETY: the C ABI, with deliberately bad arguments.
    unsafe {
        neuron_clear_error();
        ensure!(switch_stack_or_call_wrapper(None, 0) == -1 && last() == Error::WrongArgKind.code(), "null wrapper: last error {}", last());
        ensure!(neuron_set_memcpy_method(3) == -1 && last() == Error::BadMemcpyMethod.code(), "memcpy method 3: last error {}", last());
        ensure!(neuron_translate(core::ptr::null_mut(), QEMU.scratch_soc_base).is_null(), "translate with a foreign ctx");
    }
    Ok(())
}

static BAD_STATUS: [AtomicU32; 8] = [const { AtomicU32::new(0) }; 8];

unsafe extern "C" fn bad_wrapper() {
    // SAFETY: the C ABI, as a generated wrapper.
    unsafe {
        customop_setup(true);
        let _ = customop_next_tensor();
        BAD_STATUS[cpu()].store(customop_status() as u32, Ordering::Relaxed);
        let _ = customop_cleanup();
    }
}

fn bad_dtype(cpu: u32) -> TestResult {
    // Each core builds its own invocation in its own part of the area.
    let mut bump = Bump::new((4 << 20) + cpu as u64 * (64 << 10), 64 << 10);
    let storage = bump.alloc(64);
    let mut d = RawTensorDesc::contiguous(Location::Hbm, 12, storage, &[16]).ok_or("descriptor")?;
    d.dtype = 11; // FP32R: not marshallable
    let out = RawTensorDesc::contiguous(Location::Hbm, 12, bump.alloc(64), &[16]).ok_or("descriptor")?;
    let mut ib = InvocationBuilder::new();
    ib.arg(ArgKind::Tensor, d).map_err(|e| alloc::format!("{e:?}"))?;
    ib.output(out);
    let block = bump.block(&mut ib);
    neuroncustomop::device::post_invocation(block);
    // SAFETY: a wrapper of this module.
    let rc = unsafe { switch_stack_or_call_wrapper(Some(bad_wrapper), 0) };
    let st = BAD_STATUS[cpu as usize].load(Ordering::Relaxed) as i32;
    ensure!(rc == 0 && st == Error::DtypeNotMarshallable.code(), "status {st}, want {}", Error::DtypeNotMarshallable.code());
    Ok(())
}
