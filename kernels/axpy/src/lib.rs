//! The example custom op: `out[i] = a[i] * alpha + b[i]` over f32 tensors.
//!
//! Two ops from one kernel, as the vendor builds one kernel twice: `axpy`
//! (multicore: core `get_cpu_id()` takes its slice of the output) and
//! `axpy_single` (one core does everything). Data moves with
//! `neuron_memcpy` (DMA by default) through a data-RAM chunk buffer taken
//! with `tcm_malloc`, and the result is written in place into the output
//! (`get_dst_tensor`), which is the multicore-safe way (SPEC §10).
//!
//! Everything the kernel uses from the library is declared in the extern
//! block below, as a C++ kernel would get it from the header, so every
//! call goes through the windowed C ABI to the staticlib's exports.
#![no_std]

use core::ffi::{c_char, c_void};
use core::sync::atomic::{AtomicI32, Ordering};
pub use neuroncustomop::runtime::marshal::tensor::TensorView;

/// A launcher, `<fn>_stack_switch`.
pub type OpFn = unsafe extern "C" fn() -> i32;
/// A generated wrapper.
pub type WrapperFn = unsafe extern "C" fn();

unsafe extern "C" {
    pub fn customop_setup(has_return: bool);
    pub fn customop_status() -> i32;
    pub fn customop_next_tensor() -> TensorView;
    pub fn customop_next_float() -> f32;
    pub fn customop_return_tensor(t: *const TensorView) -> i32;
    pub fn customop_cleanup() -> i32;
    pub fn get_dst_tensor() -> TensorView;
    pub fn get_cpu_id() -> i32;
    pub fn get_cpu_count() -> i32;
    pub fn tcm_malloc(n: usize) -> *mut c_void;
    pub fn tcm_free(p: *mut c_void);
    pub fn neuron_memcpy_from_soc(dst: *mut c_void, src: u64, n: u32) -> i32;
    pub fn neuron_memcpy_to_soc(dst: u64, src: *const c_void, n: u32) -> i32;
    pub fn switch_stack_or_call_wrapper(wrapper: Option<WrapperFn>, stack_size: u32) -> i32;
}

/// Elements per staged chunk (two f32 chunks in data RAM).
pub const CHUNK: usize = 512;

/// Status of the last run of the kernel body on this core (0: fine), for
/// the image to report; per-core because each core's image is private
/// (under QEMU the shared image indexes it by PRID).
/// Atomics (plain loads and stores on the core), so no `static mut`.
static KERNEL_STATUS: [AtomicI32; 8] = [const { AtomicI32::new(0) }; 8];

/// The kernel status of core `cpu` (0 ok, else a step that failed).
pub fn kernel_status(cpu: usize) -> i32 {
    KERNEL_STATUS[cpu % 8].load(Ordering::Relaxed)
}

fn set_status(cpu: usize, v: i32) {
    KERNEL_STATUS[cpu % 8].store(v, Ordering::Relaxed)
}

/// The slice `[start, start+len)` of `n` elements core `cpu` of `cores`
/// takes: as even as possible, the first `n % cores` take one more.
/// No cores: an empty slice (no division-by-zero panic in the image).
pub const fn slice_of(n: u64, cpu: u64, cores: u64) -> (u64, u64) {
    let (Some(q), Some(r)) = (n.checked_div(cores), n.checked_rem(cores)) else { return (0, 0) };
    let start = cpu * q + if cpu < r { cpu } else { r };
    (start, q + (cpu < r) as u64)
}

/// `get_cpu_count()` for Rust callers.
pub fn get_cpu_count_rust() -> i32 {
    // SAFETY: a plain C accessor of the library.
    unsafe { get_cpu_count() }
}

/// The kernel body.
fn axpy(a: &TensorView, b: &TensorView, alpha: f32, multicore: bool) -> i32 {
    // SAFETY: (all calls below) the library's C ABI, called as documented;
    // the buffers passed are live data-RAM blocks of the stated size.
    unsafe {
        let out = get_dst_tensor();
        let n = out.numel as u64;
        if a.numel as u64 != n || b.numel as u64 != n {
            return 1;
        }
        let (cpu, cores) = if multicore { (get_cpu_id() as u64, get_cpu_count() as u64) } else { (0, 1) };
        let (start, len) = slice_of(n, cpu, cores);
        let xa = tcm_malloc(CHUNK * 4).cast::<f32>();
        let xb = tcm_malloc(CHUNK * 4).cast::<f32>();
        if xa.is_null() || xb.is_null() {
            return 2;
        }
        let mut rc = 0;
        let mut i = start;
        while i < start + len && rc == 0 {
            let k = (CHUNK as u64).min(start + len - i);
            let bytes = (k * 4) as u32;
            if neuron_memcpy_from_soc(xa.cast(), a.storage.addr + i * 4, bytes) != 0 || neuron_memcpy_from_soc(xb.cast(), b.storage.addr + i * 4, bytes) != 0 {
                rc = 3;
                break;
            }
            for j in 0..k as usize {
                *xa.add(j) = *xa.add(j) * alpha + *xb.add(j);
            }
            if neuron_memcpy_to_soc(out.storage.addr + i * 4, xa.cast(), bytes) != 0 {
                rc = 4;
            }
            i += k;
        }
        tcm_free(xa.cast());
        tcm_free(xb.cast());
        rc
    }
}

/// The generated wrapper's body: setup, the arguments in declared order,
/// the kernel, cleanup.
fn wrapper(multicore: bool) {
    // SAFETY: the library's C ABI; the wrapper runs inside
    // `switch_stack_or_call_wrapper` as the generated one does.
    unsafe {
        customop_setup(true);
        let a = customop_next_tensor();
        let b = customop_next_tensor();
        let alpha = customop_next_float();
        let cpu = get_cpu_id().max(0) as usize;
        let rc = if customop_status() == 0 { axpy(&a, &b, alpha, multicore) } else { 10 };
        set_status(cpu, rc);
        if customop_cleanup() != 0 && rc == 0 {
            set_status(cpu, 11);
        }
    }
}

/// `axpy_wrapper`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn axpy_wrapper() {
    wrapper(true)
}

/// `axpy_single_wrapper`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn axpy_single_wrapper() {
    wrapper(false)
}

/// `axpy_stack_switch`: the launcher the loader registers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn axpy_stack_switch() -> i32 {
    // SAFETY: a generated-style wrapper; 0 asks for the default 4196 bytes.
    unsafe { switch_stack_or_call_wrapper(Some(axpy_wrapper), 0) }
}

/// `axpy_single_stack_switch`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn axpy_single_stack_switch() -> i32 {
    // SAFETY: as above.
    unsafe { switch_stack_or_call_wrapper(Some(axpy_single_wrapper), 0) }
}

const NAMES: [&core::ffi::CStr; 2] = [c"axpy", c"axpy_single"];

/// Generated table: how many ops.
#[unsafe(no_mangle)]
pub extern "C" fn get_func_cnt() -> i32 {
    NAMES.len() as i32
}

/// Generated table: the name of op `i` (null out of range).
#[unsafe(no_mangle)]
pub extern "C" fn get_func_name(i: i32) -> *const c_char {
    NAMES.get(i as usize).map_or(core::ptr::null(), |n| n.as_ptr())
}

/// Generated table: the launcher of op `i`.
#[unsafe(no_mangle)]
pub extern "C" fn get_func_ptr(i: i32) -> Option<OpFn> {
    match i {
        0 => Some(axpy_stack_switch as OpFn),
        1 => Some(axpy_single_stack_switch as OpFn),
        _ => None,
    }
}
