//! A reset simulator is a fresh one (issue 28: a process that serves many
//! runs makes its SoC once and resets it between them): nothing a run
//! left — HBM bytes, TCM, the kernel's heap, a failed verdict, a finding —
//! shows in the next run, and a run after a reset gives what it gives on
//! a new simulator, byte for byte and word for word.

use neuroncustomop::custom_ops;
use neuroncustomop::host::sim_ffi::*;
use neuroncustomop::host::{Dtype as HostDtype, Simulator};
use neuroncustomop::kernel::*;
use neuroncustomop::runtime::Error;
use std::ffi::CStr;

const FP32: u8 = 12;

/// Leaves marks wherever a kernel can: its output, an `empty` tensor on
/// its heap, a TCM buffer it does not free.
fn marks(t: Tensor) -> Result<Tensor> {
    let out = dst_tensor()?;
    let e = ops::empty(t.sizes(), Dtype::Fp32)?;
    let (w, we) = (out.accessor::<f32, 1>()?, e.tensor().accessor::<f32, 1>()?);
    for i in 0..out.numel() as i64 {
        w.set([i], 99.0)?;
        we.set([i], 77.0)?;
    }
    tcm_scope(|s| {
        let mut buf = s.buf::<f32>(64).ok_or(Error::OutOfMemory)?;
        buf.iter_mut().for_each(|v| *v = 55.0);
        // Left allocated, as a kernel that never frees it leaves it.
        core::mem::forget(buf);
        Ok(())
    })?;
    Ok(out)
}

/// Copies an `empty` tensor and a TCM buffer it never wrote into its
/// output: what a run before left there would show.
fn peek(t: Tensor) -> Result<Tensor> {
    let out = dst_tensor()?;
    let e = ops::empty(t.sizes(), Dtype::Fp32)?;
    let (w, r) = (out.accessor::<f32, 1>()?, e.tensor().const_accessor::<f32, 1>()?);
    tcm_scope(|s| {
        let buf = s.buf::<f32>(64).ok_or(Error::OutOfMemory)?;
        for i in 0..out.numel() as i64 {
            w.set([i], r.get([i])? + buf[i as usize % 64])?;
        }
        Ok(())
    })?;
    Ok(out)
}

/// out = t + 1, each of the 8 cores its slice, through TCM.
fn plus_one(t: Tensor) -> Result<Tensor> {
    let out = dst_tensor()?;
    let (cpu, cores, n) = (neuroncustomop::ffi::cpu::get_cpu_id() as i64, neuroncustomop::ffi::cpu::get_cpu_count() as i64, out.numel() as i64);
    let per = (n + cores - 1) / cores;
    let (lo, hi) = (cpu * per, ((cpu + 1) * per).min(n));
    if hi > lo {
        tcm_scope(|s| {
            let mut buf = s.buf::<f32>((hi - lo) as usize).ok_or(Error::OutOfMemory)?;
            t.tcm_accessor().tensor_to_tcm(&mut buf, lo as u64)?;
            buf.iter_mut().for_each(|v| *v += 1.0);
            out.tcm_accessor().tcm_to_tensor(&buf, lo as u64)
        })?;
    }
    Ok(out)
}

custom_ops! {
    fn marks(t: Tensor);
    fn peek(t: Tensor);
    fn plus_one(t: Tensor);
}

struct Sim(*mut NeuronSim);

impl Drop for Sim {
    fn drop(&mut self) {
        // SAFETY: the handle is live and not used again.
        unsafe { neuron_sim_free(self.0) };
    }
}

fn sim() -> Sim {
    let s = neuron_sim_new();
    assert!(!s.is_null());
    // SAFETY: s is live.
    assert_eq!(unsafe { neuron_sim_register(s) }, 3);
    Sim(s)
}

fn reset(s: &Sim) {
    // SAFETY: s is live.
    assert_eq!(unsafe { neuron_sim_reset(s.0) }, 0);
}

fn floats(n: usize) -> Vec<u8> {
    (0..n).flat_map(|i| (i as f32 * 0.5 - 7.0).to_le_bytes()).collect()
}

/// Places `n` floats and an output of `n`, runs `op`: its status, report
/// and output bytes as they are (whether or not it passed).
fn run(s: &Sim, op: &CStr, n: u64, cores: u32) -> (i32, String, Vec<u8>) {
    let data = floats(n as usize);
    let mut out = vec![0u8; n as usize * 4];
    // SAFETY: s is live; shapes, data and out are valid for what is passed;
    // the report is a C string owned by s, copied at once.
    unsafe {
        neuron_sim_clear_args(s.0);
        assert_eq!(neuron_sim_arg_tensor(s.0, FP32, [n].as_ptr(), 1, data.as_ptr().cast(), data.len()), 0);
        assert_eq!(neuron_sim_set_output(s.0, FP32, [n].as_ptr(), 1), 0);
        let rc = neuron_sim_run(s.0, op.as_ptr(), cores);
        let report = CStr::from_ptr(neuron_sim_report(s.0)).to_string_lossy().into_owned();
        assert_eq!(neuron_sim_inspect_output(s.0, out.as_mut_ptr().cast(), out.len()), 0);
        (rc, report, out)
    }
}

#[test]
fn a_reset_simulator_runs_as_a_fresh_one() {
    let fresh = run(&sim(), c"peek", 40, 1);
    assert_ne!(fresh.0, 0, "{}", fresh.1);
    let s = sim();
    let (rc, rep, out) = run(&s, c"marks", 40, 1);
    assert_eq!(rc, 0, "{rep}");
    assert!(out.chunks(4).all(|c| f32::from_le_bytes(c.try_into().unwrap()) == 99.0));
    let (rc, rep, _) = run(&s, c"plus_one", 1000, 8);
    assert_eq!(rc, 0, "{rep}");
    reset(&s);
    // The same status, the same report (addresses, counters, findings)
    // and the same bytes as on the new simulator.
    assert_eq!(run(&s, c"peek", 40, 1), fresh);
}

#[test]
fn a_failed_run_leaves_nothing_to_the_next_and_fails_again_the_same_way() {
    let s = sim();
    let first = run(&s, c"peek", 40, 1);
    assert_ne!(first.0, 0, "{}", first.1);
    reset(&s);
    let (rc, rep, out) = run(&s, c"plus_one", 1000, 8);
    assert_eq!(rc, 0, "{rep}");
    let want: Vec<u8> = floats(1000).chunks(4).flat_map(|c| (f32::from_le_bytes(c.try_into().unwrap()) + 1.0).to_le_bytes()).collect();
    assert_eq!(out, want);
    reset(&s);
    assert_eq!(run(&s, c"peek", 40, 1), first);
}

#[test]
fn a_reset_leaves_no_argument_output_or_result() {
    let s = sim();
    assert_eq!(run(&s, c"marks", 40, 1).0, 0);
    reset(&s);
    let mut v = [0u8; 16];
    // SAFETY: s is live; v is writable for its length; the op name is a C string.
    unsafe {
        assert_eq!(neuron_sim_read_output(s.0, v.as_mut_ptr().cast(), v.len()), Error::NoOutput.code());
        assert_eq!(neuron_sim_run(s.0, c"marks".as_ptr(), 1), Error::NoOutput.code());
        assert_eq!(neuron_sim_reset(std::ptr::null_mut()), Error::NullArgument.code());
    }
}

#[test]
fn hbm_reads_zeros_again_after_a_reset() {
    let mut s = Simulator::new().unwrap();
    s.register_linked().unwrap();
    let d = s.arg_tensor(HostDtype::Fp32, &[40], &floats(40)).unwrap();
    let o = s.set_output(HostDtype::Fp32, &[40]).unwrap();
    assert!(s.run("marks", 1).unwrap().ok());
    let mut b = vec![0u8; 160];
    s.read(o.storage, &mut b).unwrap();
    assert!(b.iter().any(|&x| x != 0));
    // HBM outside the tensor area (where a kernel's scratch lies), and
    // far past the placed tensors.
    let base = s.soc().platform().hbm_soc_base;
    let (scratch, far) = (base + 8192, o.storage + (256 << 20));
    for at in [scratch, far] {
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { s.soc().write(at, &[0x77; 128 << 10]) }.unwrap();
    }
    s.reset().unwrap();
    // The tensor area's pages are kept (zeroed) for the next run; the
    // rest (large extents) are given back (asked first: a read faults a
    // page in).
    assert!(s.soc().is_hole(scratch, 160) && s.soc().is_hole(far, 160));
    assert!(!s.soc().is_hole(o.storage, 160));
    for at in [d.storage, o.storage, o.storage + 160, scratch, far] {
        s.read(at, &mut b).unwrap();
        assert!(b.iter().all(|&x| x == 0), "{at:#x}: {b:?}");
    }
    // Placed again where the first run placed them.
    assert_eq!(s.arg_tensor(HostDtype::Fp32, &[40], &floats(40)).unwrap().storage, d.storage);
}

#[test]
fn a_reset_simulator_keeps_its_run_threads_and_their_verdicts() {
    let s = sim();
    let want: Vec<u8> = floats(1000).chunks(4).flat_map(|c| (f32::from_le_bytes(c.try_into().unwrap()) + 1.0).to_le_bytes()).collect();
    // From the first reset on, runs go to parked threads: the same
    // results, run after run, on 8 cores and on 1.
    for _ in 0..4 {
        reset(&s);
        let (rc, rep, out) = run(&s, c"plus_one", 1000, 8);
        assert_eq!((rc, &out), (0, &want), "{rep}");
        reset(&s);
        let (rc, rep, _) = run(&s, c"marks", 40, 1);
        assert_eq!(rc, 0, "{rep}");
    }
    // A core whose thread cannot start still fails the run, and the next
    // run passes.
    reset(&s);
    neuroncustomop::host::fault::fail_next_spawn(5);
    let (rc, rep, _) = run(&s, c"plus_one", 1000, 8);
    assert_eq!(rc, Error::CoreThreadFailed.code(), "{rep}");
    assert!(rep.contains("core 5: its host thread could not start or did not finish"), "{rep}");
    reset(&s);
    assert_eq!(run(&s, c"plus_one", 1000, 8).0, 0);
}

#[test]
fn a_failed_reset_is_error_117_and_a_new_simulator_serves_the_next_run() {
    let s = sim();
    assert_eq!(run(&s, c"marks", 40, 1).0, 0);
    neuroncustomop::host::fault::fail_next_reset();
    // SAFETY: s is live.
    assert_eq!(unsafe { neuron_sim_reset(s.0) }, Error::SimResetFailed.code());
    drop(s);
    let s = sim();
    let (rc, rep, out) = run(&s, c"plus_one", 1000, 8);
    assert_eq!(rc, 0, "{rep}");
    let want: Vec<u8> = floats(1000).chunks(4).flat_map(|c| (f32::from_le_bytes(c.try_into().unwrap()) + 1.0).to_le_bytes()).collect();
    assert_eq!(out, want);
}
