//! The measured regions (see the crate doc). Run on one core (`-M sim`).

use core::ffi::{c_char, c_void};
use core::hint::black_box;
use core::sync::atomic::{AtomicI32, Ordering};
use neuroncustomop::ffi::customop::{customop_cleanup, customop_next_tensor, customop_return_tensor, customop_setup, customop_status};
use neuroncustomop::ffi::launch::switch_stack_or_call_wrapper;
use neuroncustomop::ffi::translate::{neuron_translate, neuron_translate_ctx};
use neuroncustomop::hal::platform::{qemu, CODE_REGION_SIZE};
use neuroncustomop::hal::xtensa::MmioHal;
use neuroncustomop::hal::{Hal, QEMU};
use neuroncustomop::kernel::{Accessor, ConstAccessor, Result, Tensor};
use neuroncustomop::runtime::marshal::descriptor::{Location, RawTensorDesc, TensorDesc};
use neuroncustomop::runtime::marshal::invocation::{ArgKind, InvocationBuilder};
use neuroncustomop::runtime::marshal::tensor::TensorView;
use neuroncustomop::runtime::Q7PtrType;
use q7_qemu_board as board;

/// The marker: the plugin prints the running count when its first
/// instruction executes. Never inlined, and the asm (a compiler barrier for
/// memory) keeps the measured operation between two markers.
#[inline(never)]
#[unsafe(no_mangle)]
pub extern "C" fn perf_mark() {
    // SAFETY: an empty asm statement; it only orders memory accesses.
    unsafe { core::arch::asm!("", options(nostack, preserves_flags)) };
}

/// `v`, held in a register inside the region: a measured result must be
/// computed before the closing marker (as `black_box` makes it), without
/// `black_box`'s store to the stack and reload, which are the measure's
/// instructions (five on Xtensa), not the operation's. A kernel uses a
/// translated pointer from a register too. No instruction is emitted.
#[inline(always)]
fn in_register(v: usize) -> usize {
    let mut v = v;
    // SAFETY: an empty template: no instruction, no memory, no stack. Not
    // `pure`: it stays where it is, before the closing marker.
    unsafe { core::arch::asm!("/* {0} */", inout(reg) v, options(nomem, nostack, preserves_flags)) };
    v
}

/// Runs `f` between two markers under the name `name`.
#[inline(always)]
fn region<R>(name: &str, f: impl FnOnce() -> R) -> R {
    board::println!("perf: region {name}");
    perf_mark();
    let r = f();
    perf_mark();
    r
}

// ------------------------------------------------------------ the loader

/// The loader's area in hbm_scratch (the half of the code region QEMU
/// images do not use).
const AREA_SOC: u64 = QEMU.scratch_soc_base + CODE_REGION_SIZE / 2;

fn nx(soc: u64) -> *mut u8 {
    (qemu::SCRATCH_NX as u64 + (soc - QEMU.scratch_soc_base)) as usize as *mut u8
}

struct Bump(u64);

impl Bump {
    fn alloc(&mut self, bytes: u64) -> u64 {
        let at = (self.0 + 63) & !63;
        self.0 = at + bytes;
        at
    }

    /// A 1-D f32 tensor of `n` elements (element i = i).
    fn f32_tensor(&mut self, n: u64) -> RawTensorDesc {
        let soc = self.alloc(n * 4);
        for i in 0..n {
            // SAFETY: freshly allocated in hbm_scratch (RAM on QEMU), aligned.
            unsafe { nx(soc + 4 * i).cast::<f32>().write_volatile(i as f32) };
        }
        RawTensorDesc::contiguous(Location::Hbm, 12, soc, &[n]).expect("f32 shape")
    }

    fn block(&mut self, b: &mut InvocationBuilder) -> u64 {
        let bytes = b.build();
        let soc = self.alloc(bytes.len() as u64);
        // SAFETY: freshly allocated, RAM on QEMU, `bytes.len()` long.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), nx(soc), bytes.len()) };
        soc
    }
}

fn tensor(d: &RawTensorDesc, ctx: *mut c_void) -> Tensor<'static> {
    let desc = TensorDesc::parse(&d.to_bytes(), &QEMU).expect("valid descriptor");
    // SAFETY: the image's test tensors in emulated HBM, outside every heap.
    unsafe { Tensor::from_view(TensorView::from_desc(&desc, ctx.cast())) }
}

// ------------------------------------------------------------ the op

/// 4 KiB of f32.
const N4K: u64 = 1024;

/// The 2-tensor op's wrapper as the generated one runs it: setup, two
/// tensor arguments, the (empty) kernel returns its first input, which
/// the runtime copies into the output (4 KiB), cleanup.
fn invocation() -> i32 {
    customop_setup(true);
    let a = customop_next_tensor();
    let _b = customop_next_tensor();
    // SAFETY: `a` is a live local.
    let r = unsafe { customop_return_tensor(&a) };
    r | customop_cleanup() | customop_status()
}

/// What the wrapper's invocation returned (one core runs this image's
/// measurements; an atomic, so no `static mut`).
static WRAPPER_RC: AtomicI32 = AtomicI32::new(-1);

unsafe extern "C" fn perf_op_wrapper() {
    WRAPPER_RC.store(invocation(), Ordering::Relaxed);
}

/// The launcher the loader would call: default stack size (4196 bytes).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn perf_op_stack_switch() -> i32 {
    // SAFETY: a generated-style wrapper.
    unsafe { switch_stack_or_call_wrapper(Some(perf_op_wrapper), 0) }
}

/// The generated op table (one op).
#[unsafe(no_mangle)]
pub extern "C" fn get_func_cnt() -> i32 {
    1
}

/// The name of op `i`.
#[unsafe(no_mangle)]
pub extern "C" fn get_func_name(i: i32) -> *const c_char {
    if i == 0 {
        c"perf_op".as_ptr()
    } else {
        core::ptr::null()
    }
}

/// The launcher of op `i`.
#[unsafe(no_mangle)]
pub extern "C" fn get_func_ptr(i: i32) -> Option<unsafe extern "C" fn() -> i32> {
    if i == 0 {
        Some(perf_op_stack_switch)
    } else {
        None
    }
}

// ------------------------------------------------------------ stack paint

const PAINT: u32 = 0x5A5A_A5A5;
/// Bytes painted below the caller's SP (more than the 4196-byte default).
const PAINT_BYTES: usize = 16 << 10;
/// Bytes right below the caller's SP left alone (the painter's own frame).
const PAINT_GAP: usize = 256;

fn sp() -> usize {
    let sp: usize;
    // SAFETY: reads a1.
    unsafe { core::arch::asm!("mov {0}, a1", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    sp
}

#[inline(never)]
fn paint(top: usize) {
    let mut p = top - PAINT_BYTES;
    while p < top - PAINT_GAP {
        // SAFETY: below the caller's frame, inside this core's 64 KiB
        // board stack (checked against stack_bounds by the caller); no
        // live frame is there.
        unsafe { (p as *mut u32).write_volatile(PAINT) };
        p += 4;
    }
}

/// The lowest painted word that changed, as a depth below `top`.
#[inline(never)]
fn depth(top: usize) -> usize {
    let mut p = top - PAINT_BYTES;
    while p < top - PAINT_GAP {
        // SAFETY: as in `paint`.
        if unsafe { (p as *const u32).read_volatile() } != PAINT {
            return top - p;
        }
        p += 4;
    }
    PAINT_GAP
}

// ------------------------------------------------------------ regions

// The accessor regions each in a function of their own: the operation as
// a kernel's loop runs it (accessor and result in registers), not at the
// bottom of `q7_board_main`'s large frame.

#[inline(never)]
fn read_1d(name: &str, acc: &ConstAccessor<f32, 1>, i: i64) -> Result<f32> {
    region(name, || acc.get([i]))
}

#[inline(never)]
fn translate_inline(name: &str, p: Q7PtrType) -> Result<*mut u8> {
    // The pointer is consumed inside the region (`in_register`): without
    // it the caller's check let the compiler drop or sink the arithmetic
    // past the closing marker, and the region counted part of the hit.
    region(name, || neuroncustomop::kernel::translate(p).map(|q| in_register(q as usize) as *mut u8))
}

#[inline(never)]
fn read_2d(acc: &Accessor<f32, 2>, i: i64, j: i64) -> Result<f32> {
    region("accessor_read_2d", || acc.get([i, j]))
}

#[inline(never)]
fn write_2d(acc: &Accessor<f32, 2>, i: i64, j: i64, v: f32) -> Result<()> {
    region("accessor_write_2d", || acc.set([i, j], v))
}

#[unsafe(no_mangle)]
pub extern "C" fn q7_board_main(cpu: u32) -> u32 {
    // SAFETY: the board's on-core stack of `cpu` starts there; this
    // entry runs on it.
    unsafe { neuroncustomop::device::set_stack_limit(board::stack_bounds(cpu).0) };
    if cpu != 0 {
        return 0;
    }
    // What the launcher's prologue does (heaps, translate context, DMA).
    neuroncustomop::ffi::init::neuron_runtime_init();
    let mut bump = Bump(AREA_SOC);
    let ctx = neuron_translate_ctx();
    const R: u64 = 16 << 20;
    let base = QEMU.hbm_soc_base + (1 << 30);

    region("empty", || ());

    // Translate. Regions base, base+R, base+2R go to windows 0, 1, 2 (the
    // last installed is record 2).
    let mut fail = 0u32;
    let miss = |a: u64| neuron_translate(black_box(ctx), black_box(a));
    for k in 0..3 {
        fail |= (miss(base + k * R).is_null() as u32) << 1;
    }
    // Every measured hit's pointer is checked against the window
    // arithmetic (the window's NX base + the offset in its region), so
    // the counts are of a translate whose result is used.
    // SAFETY: a second handle on core 0, beside its state's: used for
    // address arithmetic (`nx_ptr`) and, below, one window-register write,
    // which under QEMU is a word of the RAM register block that changes
    // nothing the translator relies on (QEMU has no windows to remap).
    let hal0 = unsafe { MmioHal::qemu(0) };
    let through = |nx: u32, size: u64, a: u64| hal0.nx_ptr(nx).wrapping_add((a & (size - 1)) as usize);
    let dynamic = |k: usize, a: u64| through(QEMU.dynamic_windows[k].nx_base, 16 << 20, a);
    let pinned = 64 << 20;
    let hits = [
        ("translate_hit_recent", "rust_translate_hit_recent", base + 2 * R + 0x40, dynamic(2, base + 2 * R + 0x40)),
        ("translate_hit_dyn0", "rust_translate_hit_dyn0", base + 0x40, dynamic(0, base + 0x40)),
        ("translate_hit_dyn1", "rust_translate_hit_dyn1", base + R + 0x40, dynamic(1, base + R + 0x40)),
        ("translate_hit_sbuf", "rust_translate_hit_sbuf", QEMU.sbuf_soc_base + 0x40, through(QEMU.sbuf_window_nx, pinned, QEMU.sbuf_soc_base + 0x40)),
        (
            "translate_hit_scratch",
            "rust_translate_hit_scratch",
            QEMU.scratch_soc_base + 0x40,
            through(QEMU.scratch_window_nx, pinned, QEMU.scratch_soc_base + 0x40),
        ),
    ];
    let hit = |name: &str, a: u64, want: *mut u8| {
        let (c, a) = (black_box(ctx), black_box(a));
        let p = region(name, || in_register(neuron_translate(c, a) as usize) as *mut c_void);
        (p.is_null() || p.cast::<u8>() != want) as u32
    };
    for (k, &(name, _, a, want)) in hits.iter().enumerate() {
        fail |= hit(name, a, want) << (2 + k);
    }
    // The same hits through the Rust API's inline path (no call).
    let inline = |name: &str, a: u64, want: *mut u8| {
        let p = translate_inline(name, Q7PtrType { addr: black_box(a), ctx: black_box(ctx).cast() });
        (p != Ok(want)) as u32
    };
    for (k, &(_, name, a, want)) in hits.iter().enumerate() {
        fail |= inline(name, a, want) << (2 + k);
    }
    fail |= (hit("translate_miss", base + 3 * R + 0x40, dynamic(0, base + 3 * R + 0x40))) << 7;
    // The window-register write alone (what the miss target excludes).
    let hal = black_box(hal0);
    let reg = black_box(neuroncustomop::hal::WindowId::new(1).unwrap());
    // SAFETY: the measurement stands in for the translator: window 1 is
    // reprogrammed between its own misses, and nothing here holds a
    // pointer into it.
    region("window_register_write", || unsafe { hal.write_window_register(reg, base + 4 * R) });

    // The invocation of a 2-tensor op: setup, next x2, return (copy of
    // 4 KiB), cleanup.
    let a = bump.f32_tensor(N4K);
    let b = bump.f32_tensor(N4K);
    let out = RawTensorDesc::contiguous(Location::Hbm, 12, bump.alloc(N4K * 4), &[N4K]).expect("shape");
    let mut ib = InvocationBuilder::new();
    ib.arg(ArgKind::Tensor, a).expect("arg");
    ib.arg(ArgKind::Tensor, b).expect("arg");
    ib.output(out);
    let block = bump.block(&mut ib);
    neuroncustomop::device::post_invocation(block);
    // Once unmeasured (arms the DMA rings, as in a kernel; first use of
    // the pools); measured below.
    fail |= ((invocation() != 0) as u32) << 13;

    // Accessor element read (Rust kernel API), tensor in hbm_scratch.
    let ta = bump.f32_tensor(2 * N4K);
    let t = tensor(&ta, ctx);
    let held = t.const_accessor::<f32, 1>().expect("accessor");
    // Held by reference, as a kernel's loop holds it in a register (not
    // at the bottom of this function's large frame).
    let acc = black_box(&held);
    let i = black_box(5i64);
    // The first read fills the leaf (measured apart); the steady state of
    // a tensor walk is every read after it.
    let i0 = black_box(0i64);
    let v = read_1d("accessor_read_first", acc, i0);
    fail |= ((v != Ok(0.0)) as u32) << 8;
    let v = read_1d("accessor_read", acc, i);
    fail |= ((v != Ok(5.0)) as u32) << 8;
    drop(held);

    // 2-D element read and write (Rust API), 32 x 64 f32 in hbm_scratch;
    // the first access fills the leaf, unmeasured.
    let t2 = bump.f32_tensor(2 * N4K);
    let d2 = RawTensorDesc::contiguous(Location::Hbm, 12, t2.storage, &[32, 64]).expect("shape");
    let t2 = tensor(&d2, ctx);
    let held = t2.accessor::<f32, 2>().expect("accessor");
    let a2 = black_box(&held);
    let (i, j) = (black_box(3i64), black_box(5i64));
    fail |= ((a2.get([0, 0]) != Ok(0.0)) as u32) << 20;
    let v = read_2d(a2, i, j);
    fail |= ((v != Ok((3 * 64 + 5) as f32)) as u32) << 18;
    let w = black_box(7.5f32);
    let r = write_2d(a2, i, j, w);
    fail |= ((r.is_err() || a2.get([i, j]) != Ok(7.5)) as u32) << 19;
    drop(held);

    // Stream: element 0 refills (4 KiB), 1..1023 read the buffer, 1024
    // refills again.
    let mut st = t.read_stream_accessor::<f32>().expect("stream");
    fail |= ((!st.is_buffered()) as u32) << 9;
    let _ = st.read();
    let v = region("stream_read", || st.read());
    fail |= ((v != Ok(1.0)) as u32) << 10;
    for _ in 2..N4K {
        let _ = st.read();
    }
    let v = region("stream_read_refill", || st.read());
    fail |= ((v != Ok(N4K as f32)) as u32) << 11;
    fail |= (st.close().is_err() as u32) << 12;
    drop(st);

    // Stream bulk read: 64 f32 into a local array, from a fresh stream
    // (the first fills the stream's cached window pointer) and then in
    // the steady state; neither enters the core while one record maps
    // the tensor. Both include the 256-byte copy.
    let mut st = t.read_stream_accessor::<f32>().expect("stream");
    let mut dst = [0f32; 64];
    let n = region("stream_read_into_first", || st.read_into(black_box(&mut dst[..])));
    fail |= ((n != Ok(64) || dst[63] != 63.0) as u32) << 21;
    let n = region("stream_read_into", || st.read_into(black_box(&mut dst[..])));
    fail |= ((n != Ok(64) || dst[0] != 64.0 || dst[63] != 127.0) as u32) << 22;
    fail |= (st.close().is_err() as u32) << 23;
    drop(st);

    let rc = region("invocation", invocation);
    fail |= ((rc != 0) as u32) << 14;
    // SAFETY: the output was written by the return copy.
    fail |= ((unsafe { nx(out.storage + 4 * 1000).cast::<f32>().read_volatile() } != 1000.0) as u32) << 15;

    // The whole launch, and its stack use by painting.
    // SAFETY: the launcher, called as the loader calls it.
    let rc = region("launch", || unsafe { perf_op_stack_switch() });
    fail |= ((rc != 0 || WRAPPER_RC.load(Ordering::Relaxed) != 0) as u32) << 16;
    let top = sp();
    if top - PAINT_BYTES < board::stack_bounds(cpu).0 {
        board::println!("perf: FAIL stack too small to paint");
        return 1;
    }
    paint(top);
    // SAFETY: as above.
    let rc = unsafe { perf_op_stack_switch() };
    let used = depth(top);
    fail |= ((rc != 0) as u32) << 17;
    board::println!("perf: stack {used}");
    if option_env!("PERF_STACK_DUMP").is_some() {
        let mut a = top - used;
        while a < top - used + 1024 {
            // SAFETY: painted area below this frame, inside the board stack.
            let w = unsafe { (a as *const u32).read_volatile() };
            board::println!("perf: word -{} {:#010x}", top - a, w);
            a += 4;
        }
    }
    if fail != 0 {
        board::println!("perf: FAIL (a measured operation gave a wrong result: {fail})");
        return 1;
    }
    board::println!("perf: done");
    0
}
