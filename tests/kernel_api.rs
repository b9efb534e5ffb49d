//! The Rust kernel API end to end on the simulator: coherency under each
//! policy (with the VERBOSE warning in the printf ring), stream accessors
//! (a 5th falls back to per element), the 2-D accessor and its bounds,
//! the TCM accessor and pool, the per-run report (printf, heaps, stack),
//! and the thrash warning for 4 dynamic regions round-robin but not 3.

use neuroncustomop::ffi::error::neuron_clear_error;
use neuroncustomop::host::Simulator;
use neuroncustomop::kernel::*;
use neuroncustomop::runtime::marshal::descriptor::{Location, RawTensorDesc};
use neuroncustomop::runtime::marshal::invocation::ArgKind;
use neuroncustomop::{custom_ops, kprint};

/// Under `policy`, a write stream then a per-element accessor on `t`.
fn coherency_probe(t: Tensor, policy: i32) -> Result<Tensor> {
    let p = CoherencePolicy::from_u32(policy as u32)?;
    t.set_coherence_policy(p)?;
    kprint!("policy {:?}", t.coherence_policy()?);
    let w = t.write_stream_accessor::<f32>()?;
    match t.accessor::<f32, 1>() {
        Ok(_) => kprint!("accessor admitted"),
        Err(e) => {
            kprint!("accessor refused: {}", e.code());
            // Expected under COHERENT: handled, so it does not fail the run.
            neuron_clear_error();
        }
    }
    drop(w);
    let _after = t.accessor::<f32, 1>()?;
    dst_tensor()
}

/// out = sum of 5 read streams over `a` (the 5th unbuffered), elementwise.
fn five_streams(a: Tensor) -> Result<Tensor> {
    let out = dst_tensor()?;
    let mut rs: Vec<ReadStream<i32>> = (0..5).map(|_| a.read_stream_accessor::<i32>()).collect::<Result<_>>()?;
    kprint!("buffered: {:?}", rs.iter().map(|r| r.is_buffered()).collect::<Vec<_>>());
    let mut w = out.write_stream_accessor::<i32>()?;
    for _ in 0..a.numel() {
        let mut s = 0;
        for r in rs.iter_mut() {
            s += r.read()?;
        }
        w.write(s)?;
    }
    if let Err(e) = rs[0].read() {
        kprint!("read past the end: {}", e.code());
        neuron_clear_error();
    }
    w.close()?;
    Ok(out)
}

/// out[i][j] = t[i][j] + 100·i + j through 2-D accessors.
fn grid(t: Tensor) -> Result<Tensor> {
    let out = dst_tensor()?;
    let (n, m) = (t.sizes()[0], t.sizes()[1]);
    {
        let src = t.const_accessor::<i16, 2>()?;
        let dst = out.accessor::<i16, 2>()?;
        for i in 0..n {
            let row = dst.at(i)?;
            for j in 0..m {
                row.at(j)?.set(src.get([i, j])? + (100 * i + j) as i16)?;
            }
        }
        kprint!("oob: {}", src.get([n, 0]).unwrap_err().code());
        kprint!("rank: {}", t.accessor::<i16, 1>().unwrap_err().code());
        kprint!("type: {}", t.accessor::<i32, 2>().unwrap_err().code());
        // The three refusals were the point: handled.
        neuron_clear_error();
    }
    Ok(out)
}

/// out = 3·t through TCM, two halves; then exhausts the 16 KiB pool.
fn tcm_triple(t: Tensor) -> Result<Tensor> {
    let out = dst_tensor()?;
    let n = t.numel() as usize;
    let half = n / 2;
    tcm_scope(|s| {
        let mut buf = s.buf::<f32>(n - half).ok_or(Error::OutOfMemory)?;
        for (off, len) in [(0, half), (half, n - half)] {
            t.tcm_accessor().tensor_to_tcm(&mut buf[..len], off as u64)?;
            for x in buf[..len].iter_mut() {
                *x *= 3.0;
            }
            out.tcm_accessor().tcm_to_tensor(&buf[..len], off as u64)?;
        }
        kprint!("range: {}", t.tcm_accessor().tensor_to_tcm(&mut buf[..], n as u64).unwrap_err().code());
        drop(buf);
        let big = s.buf::<u8>(16 << 10);
        kprint!("16 KiB: {} then 1 more byte: {}", big.is_some(), s.buf::<u8>(1).is_some());
        Ok(())
    })?;
    // The range refusal and the exhausted pool were the point: handled.
    neuron_clear_error();
    // SAFETY: null is harmless.
    unsafe { neuroncustomop::ffi::heap::tcm_free(core::ptr::null_mut()) };
    Ok(out)
}

/// Reads one byte from each of `regions` 16 MiB regions of `t`,
/// round-robin, 50 rounds; out[0] = their sum.
fn touch(t: Tensor, regions: i32) -> Result<Tensor> {
    let out = dst_tensor()?;
    let acc = t.const_accessor::<u8, 1>()?;
    let mut sum = 0u8;
    for _ in 0..50 {
        for r in 0..regions as i64 {
            sum = sum.wrapping_add(acc.get([r << 24])?);
        }
    }
    out.accessor::<u8, 1>()?.set([0], sum)?;
    Ok(out)
}

custom_ops! {
    fn coherency_probe(t: Tensor, policy: i32);
    fn five_streams(a: Tensor);
    fn grid(t: Tensor);
    fn tcm_triple(t: Tensor);
    fn touch(t: Tensor, regions: i32);
}

fn sim() -> Simulator {
    let mut s = Simulator::new().unwrap();
    assert_eq!(s.register_linked().unwrap(), 5);
    s
}

fn bytes<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: plain numeric data viewed as its bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)).to_vec() }
}

#[test]
fn coherency_policies_in_a_kernel() {
    for (policy, line, warned) in [(0i32, "accessor refused: 80", false), (1, "accessor admitted", true), (2, "accessor admitted", false)] {
        let mut s = sim();
        s.arg_tensor(Dtype::Fp32, &[16], &bytes(&[1f32; 16])).unwrap();
        s.arg_value(ArgKind::Int, Dtype::Int32, &policy.to_le_bytes()).unwrap();
        s.set_output(Dtype::Fp32, &[16]).unwrap();
        // The probe claims the output but writes none of it.
        s.allow_unwritten_output();
        let rep = s.run("coherency_probe", 1).unwrap();
        assert!(rep.ok(), "{rep:?}");
        assert_eq!(rep.unwritten.as_deref(), Some("16 of 16 output elements were never written: [0, 16)"));
        assert_eq!(rep.cores[0].errors, if policy == 0 { vec![80] } else { vec![] }, "policy {policy}");
        let out = &rep.cores[0].printf;
        assert!(out.contains(line), "policy {policy}: {out}");
        assert_eq!(out.contains("coherency warning: accessor on tensor"), warned, "policy {policy}: {out}");
    }
}

#[test]
fn a_fifth_stream_runs_per_element_and_all_agree() {
    let mut s = sim();
    let a: Vec<i32> = (0..3000).map(|i| i * 7 - 1000).collect();
    s.arg_tensor(Dtype::Int32, &[3000], &bytes(&a)).unwrap();
    s.set_output(Dtype::Int32, &[3000]).unwrap();
    let rep = s.run("five_streams", 1).unwrap();
    assert!(rep.ok(), "{rep:?}");
    let got: Vec<i32> = s.read_output().unwrap().chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got, a.iter().map(|x| x * 5).collect::<Vec<_>>());
    let c = &rep.cores[0];
    assert!(c.printf.contains("buffered: [true, true, true, true, false]"), "{}", c.printf);
    assert!(c.printf.contains("read past the end: 87"), "{}", c.printf);
    // 4 buffered readers' bytes moved by DMA (the 5th went through a
    // window), plus the invocation block (32 + 2 × 48 bytes); the writer,
    // a 6th stream, found no buffer either and wrote per element.
    assert_eq!(c.dma_in, 4 * 12000 + 128);
    assert_eq!(c.dma_out, 0);
}

#[test]
fn two_d_accessor_with_bounds_rank_and_type_checks() {
    let mut s = sim();
    let (n, m) = (7usize, 9usize);
    let t: Vec<i16> = (0..(n * m) as i16).map(|x| x * 3 - 50).collect();
    s.arg_tensor(Dtype::Int16, &[n as u64, m as u64], &bytes(&t)).unwrap();
    s.set_output(Dtype::Int16, &[n as u64, m as u64]).unwrap();
    let rep = s.run("grid", 1).unwrap();
    assert!(rep.ok(), "{rep:?}");
    let got: Vec<i16> = s.read_output().unwrap().chunks(2).map(|c| i16::from_le_bytes(c.try_into().unwrap())).collect();
    for i in 0..n {
        for j in 0..m {
            assert_eq!(got[i * m + j], t[i * m + j] + (100 * i + j) as i16);
        }
    }
    let p = &rep.cores[0].printf;
    for line in ["oob: 83", "rank: 84", "type: 85"] {
        assert!(p.contains(line), "{p}");
    }
}

#[test]
fn tcm_accessor_and_pool() {
    let mut s = sim();
    let t: Vec<f32> = (0..1001).map(|i| i as f32 * 0.25).collect();
    s.arg_tensor(Dtype::Fp32, &[1001], &bytes(&t)).unwrap();
    s.set_output(Dtype::Fp32, &[1001]).unwrap();
    let rep = s.run("tcm_triple", 1).unwrap();
    assert!(rep.ok(), "{rep:?}");
    let got: Vec<f32> = s.read_output().unwrap().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got, t.iter().map(|x| x * 3.0).collect::<Vec<_>>());
    let c = &rep.cores[0];
    assert!(c.printf.contains("range: 83"), "{}", c.printf);
    assert!(c.printf.contains("16 KiB: true then 1 more byte: false"), "{}", c.printf);
    assert!(c.stack_high_water > 0 && c.stack_high_water < (1 << 20), "{}", c.stack_high_water);
    assert!(c.dataram.high_water >= 32 << 10 || c.dataram.high_water >= 16 << 10, "{:?}", c.dataram);
}

fn run_touch(regions: i32) -> neuroncustomop::host::CoreReport {
    let mut s = sim();
    let bytes = 4u64 << 24;
    let at = s.alloc(bytes).unwrap();
    let d = RawTensorDesc::contiguous(Location::Hbm, Dtype::Uint8.code(), at, &[bytes / 16, 16]).unwrap();
    // A 1-D view: the same storage as [bytes] (the wide shape allows it).
    let d = RawTensorDesc {
        shape_width: 1,
        num_dim: 1,
        shape: {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&(bytes as u32).to_le_bytes());
            b
        },
        ..d
    };
    // SAFETY: the view covers exactly the block `alloc` gave, which
    // nothing else uses.
    unsafe { s.push_arg(ArgKind::Tensor, d) };
    s.arg_value(ArgKind::Int, Dtype::Int32, &regions.to_le_bytes()).unwrap();
    s.set_output(Dtype::Uint8, &[1]).unwrap();
    let rep = s.run("touch", 1).unwrap();
    assert!(rep.ok(), "{rep:?}");
    rep.cores[0].clone()
}

#[test]
fn thrash_warning_fires_for_four_regions_round_robin_not_three() {
    let c = run_touch(4);
    let w = c.thrash_warning.as_deref().expect("4 regions round-robin thrash");
    assert!(w.contains("thrashes the 3 dynamic translation windows"), "{w}");
    assert!(w.matches("0x").count() >= 4, "names the 4 regions: {w}");
    let c = run_touch(3);
    assert_eq!(c.thrash_warning, None, "3 regions fit the 3 windows");
}
