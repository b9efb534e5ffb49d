//! A Rust kernel written the way a user writes one against the C ABI: the
//! wrapper, the `<fn>_stack_switch` launcher and the `get_func_*` table,
//! run through the simulator on 1 and on 8 cores with numel % 8 != 0.

use neuroncustomop::ffi::cpu::{get_cpu_count, get_cpu_id};
use neuroncustomop::ffi::customop::*;
use neuroncustomop::ffi::launch::{switch_stack_or_call_wrapper, OpFn, OpTable};
use neuroncustomop::ffi::memcpy::{neuron_memcpy_from_soc, neuron_memcpy_to_soc};
use neuroncustomop::host::Simulator;
use neuroncustomop::runtime::marshal::dtype::Dtype;
use neuroncustomop::runtime::marshal::invocation::ArgKind;
use neuroncustomop::runtime::marshal::tensor::TensorView;
use std::ffi::c_char;

/// out[i] = a[i] * alpha + b[i], staged through data RAM in chunks. In the
/// multicore build each core takes its slice; the single-core build does
/// it all (as the vendor's two builds of one kernel).
fn axpy(a: &TensorView, b: &TensorView, alpha: f32, multicore: bool) {
    let out = get_dst_tensor();
    let n = out.numel as u64;
    let (cpu, cores) = if multicore { (get_cpu_id() as u64, get_cpu_count() as u64) } else { (0, 1) };
    // Slices as even as possible: the first n % cores cores take one more.
    let (q, r) = (n / cores, n % cores);
    let start = cpu * q + cpu.min(r);
    let len = q + (cpu < r) as u64;
    const CHUNK: u64 = 256;
    let (mut xa, mut xb) = ([0f32; CHUNK as usize], [0f32; CHUNK as usize]);
    let mut i = start;
    while i < start + len {
        let k = CHUNK.min(start + len - i);
        let bytes = (k * 4) as u32;
        // SAFETY: the buffers hold CHUNK f32s; k <= CHUNK.
        unsafe {
            assert_eq!(neuron_memcpy_from_soc(xa.as_mut_ptr().cast(), a.storage.addr + i * 4, bytes), 0);
            assert_eq!(neuron_memcpy_from_soc(xb.as_mut_ptr().cast(), b.storage.addr + i * 4, bytes), 0);
        }
        for j in 0..k as usize {
            xa[j] = xa[j] * alpha + xb[j];
        }
        // SAFETY: as above.
        unsafe { assert_eq!(neuron_memcpy_to_soc(out.storage.addr + i * 4, xa.as_ptr().cast(), bytes), 0) };
        i += k;
    }
}

fn wrapper(multicore: bool) {
    customop_setup(true);
    let a = customop_next_tensor();
    let b = customop_next_tensor();
    let alpha = customop_next_float();
    if customop_status() == 0 {
        axpy(&a, &b, alpha, multicore);
    }
    customop_cleanup();
}

unsafe extern "C" fn axpy_wrapper() {
    wrapper(true)
}

unsafe extern "C" fn axpy_single_wrapper() {
    wrapper(false)
}

unsafe extern "C" fn axpy_stack_switch() -> i32 {
    // SAFETY: axpy_wrapper is a generated-style wrapper.
    unsafe { switch_stack_or_call_wrapper(Some(axpy_wrapper), 0) }
}

unsafe extern "C" fn axpy_single_stack_switch() -> i32 {
    // SAFETY: as above.
    unsafe { switch_stack_or_call_wrapper(Some(axpy_single_wrapper), 0) }
}

unsafe extern "C" fn count() -> i32 {
    2
}
unsafe extern "C" fn name(i: i32) -> *const c_char {
    [c"axpy".as_ptr(), c"axpy_single".as_ptr()][i as usize]
}
unsafe extern "C" fn ptr(i: i32) -> Option<OpFn> {
    Some([axpy_stack_switch as OpFn, axpy_single_stack_switch as OpFn][i as usize])
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn run(op: &str, cores: u32, n: usize) {
    let mut sim = Simulator::new().unwrap();
    // SAFETY: the test's own table: sound functions, and every op it lists a generated launcher.
    assert_eq!(unsafe { sim.register(OpTable { count, name, ptr }) }.unwrap(), 2);
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    sim.arg_tensor(Dtype::Fp32, &[n as u64], &f32s(&a)).unwrap();
    sim.arg_tensor(Dtype::Fp32, &[n as u64], &f32s(&b)).unwrap();
    sim.arg_value(ArgKind::Float, Dtype::Fp32, &2.5f32.to_le_bytes()).unwrap();
    sim.set_output(Dtype::Fp32, &[n as u64]).unwrap();
    let rep = sim.run(op, cores).unwrap();
    assert!(rep.ok(), "{rep:?}");
    let out = sim.read_output().unwrap();
    let got: Vec<f32> = out.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    for i in 0..n {
        assert_eq!(got[i], a[i] * 2.5 + b[i], "element {i}");
    }
    let moved: u64 = rep.cores.iter().map(|c| c.dma_out).sum();
    assert_eq!(moved, n as u64 * 4, "every output byte written exactly once by DMA");
}

#[test]
fn axpy_on_one_core() {
    run("axpy_single", 1, 1001);
}

#[test]
fn axpy_on_eight_cores_with_a_ragged_tail() {
    run("axpy", 8, 8 * 300 + 5);
}
