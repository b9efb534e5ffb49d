//! Misuse and isolation (issue 6): a kernel writing past its tensor is
//! caught by the simulator's guard regions; eight cores in parallel
//! threads run 1,000 invocations each of a kernel that uses the HBM and
//! data-RAM heaps, the TCM pool, the translation windows and DMA, with
//! every output checked and every heap back to empty.

use core::ffi::c_void;
use neuroncustomop::custom_ops;
use neuroncustomop::ffi::cpu::{get_cpu_count, get_cpu_id};
use neuroncustomop::ffi::customop::get_dst_tensor;
use neuroncustomop::ffi::heap::*;
use neuroncustomop::ffi::memcpy::{neuron_memcpy_from_soc, neuron_memcpy_to_soc};
use neuroncustomop::ffi::translate::{neuron_translate, neuron_translate_ctx};
use neuroncustomop::host::Simulator;
use neuroncustomop::kernel::*;
use neuroncustomop::runtime::marshal::dtype::Dtype;

/// Claims the output and writes 16 bytes more than it holds.
fn overrun(t: Tensor) -> Result<Tensor> {
    let out = get_dst_tensor();
    let buf = [0x11u8; 4096 + 16];
    let n = (out.nbytes as u32 + 16).min(buf.len() as u32);
    // SAFETY: buf holds n bytes.
    unsafe { neuron_memcpy_to_soc(out.storage.addr, buf.as_ptr().cast(), n) };
    Ok(t)
}

/// out[i] = a[i] * k + cpu for this core's slice, through every path:
/// per-element translate (windows) to read, data-RAM and TCM staging,
/// a round trip through an HBM heap block by DMA, DMA to the output.
fn mix(a: Tensor, k: i32) -> Result<Tensor> {
    let out = get_dst_tensor();
    let n = out.numel as u64;
    let (cpu, cores) = (get_cpu_id() as u64, get_cpu_count() as u64);
    let (q, r) = (n / cores, n % cores);
    let start = cpu * q + cpu.min(r);
    let len = (q + (cpu < r) as u64) as usize;
    if len == 0 {
        return Ok(a);
    }
    let bytes = (len * 4) as u32;
    let mut stage: *mut c_void = core::ptr::null_mut();
    let mut hbm = 0u64;
    // SAFETY: valid out pointers.
    unsafe {
        assert_eq!(neuron_dataram_allocate(bytes, &mut stage, 0), 0);
        assert_eq!(neuron_hbm_allocate(bytes, &mut hbm, 0), 0);
    }
    let tcm = tcm_malloc(bytes as usize).cast::<i32>();
    assert!(!tcm.is_null());
    let ctx = neuron_translate_ctx();
    let stage = stage.cast::<i32>();
    for i in 0..len {
        let p = neuron_translate(ctx, a.storage_addr() + (start + i as u64) * 4).cast::<i32>();
        // SAFETY: p is the translated element (read before any other
        // translate); stage and tcm hold len i32s.
        unsafe {
            let v = p.read_volatile();
            tcm.add(i).write(v.wrapping_mul(k).wrapping_add(cpu as i32));
        }
    }
    // SAFETY: every buffer holds `bytes`; hbm is this core's heap block.
    unsafe {
        core::ptr::copy_nonoverlapping(tcm, stage, len);
        assert_eq!(neuron_memcpy_to_soc(hbm, stage.cast(), bytes), 0);
        stage.write_bytes(0, len);
        assert_eq!(neuron_memcpy_from_soc(stage.cast(), hbm, bytes), 0);
        assert_eq!(neuron_memcpy_to_soc(out.storage.addr + start * 4, stage.cast(), bytes), 0);
    }
    // SAFETY: the three blocks allocated above, used no further.
    unsafe {
        tcm_free(tcm.cast());
        assert_eq!(neuron_dataram_deallocate(stage.cast()), 0);
        assert_eq!(neuron_hbm_deallocate(hbm), 0);
    }
    Ok(a)
}

custom_ops! {
    fn overrun(t: Tensor);
    fn mix(a: Tensor, k: i32);
}

fn sim() -> Simulator {
    let mut s = Simulator::new().unwrap();
    s.register_linked().unwrap();
    s
}

#[test]
fn a_kernel_writing_past_its_tensor_is_reported_naming_it() {
    let mut s = sim();
    s.arg_tensor(Dtype::Fp32, &[8], &[0u8; 32]).unwrap();
    s.set_output(Dtype::Fp32, &[10]).unwrap();
    let rep = s.run("overrun", 1).unwrap();
    assert!(!rep.ok(), "an overrun is an error of the run");
    assert_eq!(rep.guard_errors.len(), 1, "{:?}", rep.guard_errors);
    assert!(rep.guard_errors[0].starts_with("kernel wrote past the end of the output: guard bytes 0..=15"), "{:?}", rep.guard_errors);
    // The argument's guard is intact, and a run that stays inside is clean.
    let mut s = sim();
    let v: Vec<u8> = (0..64i32).flat_map(|x| x.to_le_bytes()).collect();
    s.arg_tensor(Dtype::Int32, &[64], &v).unwrap();
    s.arg_value(neuroncustomop::runtime::marshal::invocation::ArgKind::Int, Dtype::Int32, &3i32.to_le_bytes()).unwrap();
    s.set_output(Dtype::Int32, &[64]).unwrap();
    let rep = s.run("mix", 8).unwrap();
    assert!(rep.ok() && rep.guard_errors.is_empty(), "{rep:?}");
}

/// Eight cores, each in its own thread for the whole test, each serving
/// 1,000 invocations of `mix` on its own tensors (fresh input and k every
/// time) with no synchronisation between them. Every output is checked;
/// the slices of the other cores in each core's output stay untouched;
/// every core's heaps return to the same use after every invocation.
#[test]
fn eight_cores_1000_invocations_each_stay_isolated() {
    use neuroncustomop::host::SimCore;
    use neuroncustomop::runtime::marshal::descriptor::{Location, RawTensorDesc};
    use neuroncustomop::runtime::marshal::invocation::{ArgKind, InvocationBuilder};
    const N: usize = 1000; // 125 elements per core slice
    const RUNS: i32 = 1000;
    let soc = neuron_hal_mock::MockSoc::new().unwrap();
    let hbm = soc.platform().hbm_soc_base + (2 << 30);
    std::thread::scope(|sc| {
        for cpu in 0..8u32 {
            let soc = &soc;
            sc.spawn(move || {
                let base = hbm + cpu as u64 * (1 << 20);
                let (a, k, out, blk) = (base, base + (64 << 10), base + (128 << 10), base + (192 << 10));
                let desc = |at: u64, n: u64| RawTensorDesc::contiguous(Location::Hbm, Dtype::Int32.code(), at, &[n]).unwrap();
                let mut b = InvocationBuilder::new();
                b.arg(ArgKind::Tensor, desc(a, N as u64)).unwrap().arg(ArgKind::Int, desc(k, 1)).unwrap();
                b.output(desc(out, N as u64));
                // SAFETY: no core runs while the test writes its own memory.
                unsafe { soc.write(blk, b.build()) }.unwrap();
                let mut core = SimCore::new(soc.core(cpu).unwrap());
                let per = N / 8;
                let mine = cpu as usize * per..(cpu as usize + 1) * per;
                let mut base_use = None;
                for run in 0..RUNS {
                    let kv = (run + cpu as i32) % 13 - 6;
                    let input: Vec<i32> = (0..N as i32).map(|i| i.wrapping_mul(7919).wrapping_add(run * 31 + cpu as i32)).collect();
                    // SAFETY: no core runs while the test writes its own memory.
                    unsafe { soc.write(a, &input.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()) }.unwrap();
                    // SAFETY: no core runs while the test writes its own memory.
                    unsafe { soc.write(k, &kv.to_le_bytes()) }.unwrap();
                    // SAFETY: no core runs while the test writes its own memory.
                    unsafe { soc.write(out, &vec![0xEEu8; N * 4]) }.unwrap();
                    core.hal().set_invocation_block(blk);
                    // SAFETY: the generated launcher of `mix`.
                    let r = core.enter(|| unsafe { mix::stack_switch() });
                    assert_eq!((r, core.invocation_status()), (0, 0), "core {cpu}, run {run}");
                    let st = core.state();
                    let used = (st.hbm().stats().in_use, st.dataram().stats().in_use);
                    assert_eq!(used.0, 0, "core {cpu}, run {run}: HBM blocks leaked");
                    assert_eq!(&used, base_use.get_or_insert(used), "core {cpu}, run {run}: data RAM leaked");
                    let mut got = vec![0u8; N * 4];
                    soc.read(out, &mut got).unwrap();
                    for i in 0..N {
                        let g = i32::from_le_bytes(got[i * 4..i * 4 + 4].try_into().unwrap());
                        let want = if mine.contains(&i) { input[i].wrapping_mul(kv).wrapping_add(cpu as i32) } else { i32::from_le_bytes([0xEE; 4]) };
                        assert_eq!(g, want, "core {cpu}, run {run}, element {i}");
                    }
                }
                let st = core.state();
                assert_eq!(st.hbm().stats().allocs, RUNS as u64, "core {cpu}: its own 1,000 HBM allocations");
            });
        }
    });
}
