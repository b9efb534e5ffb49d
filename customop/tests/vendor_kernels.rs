//! Vendor-style kernels (compute source + `NEURON_LIBRARY` shape file, in
//! `tests/kernels/<kernel>/`, untouched by the tool) built with `customop
//! build` and run with `customop run` against references computed here:
//! single-core builds on 1 core, `--multicore` builds on 8 (and on 1,
//! where the simulator's verdict must name what was left unwritten).

mod common;
use common::*;

fn relu(v: &[f32]) -> Vec<f32> {
    v.iter().map(|x| x.max(0.0)).collect()
}

#[test]
fn relu_2d_accessor_forward_and_backward_on_one_core() {
    let dir = built("relu2d", &[]);
    let (r, c) = (37u64, 29u64);
    let x = values((r * c) as usize, -2.0, 2.0, 1);
    let g = values((r * c) as usize, -1.0, 1.0, 2);
    let xf = npy_file("relu2d_x.npy", &f32s(&[r, c], &x));
    let gf = npy_file("relu2d_g.npy", &f32s(&[r, c], &g));
    let (xs, gs) = (xf.display().to_string(), gf.display().to_string());
    {
        let cores = 1;
        let (out, text) = run_op(&dir, "relu_forward", &[&xs], cores, "relu2d");
        assert_eq!(out.shape, [r, c], "{text}");
        assert_eq!(out.to_f32(), relu(&x), "relu_forward on {cores} core(s)");
        assert!(text.contains(&format!("ran relu_forward on {cores} core(s)")), "{text}");
        let (out, _) = run_op(&dir, "relu_backward", &[&gs, &xs], cores, "relu2d");
        let want: Vec<f32> = g.iter().zip(&x).map(|(g, x)| if *x > 0.0 { *g } else { 0.0 }).collect();
        assert_eq!(out.to_f32(), want, "relu_backward on {cores} core(s)");
    }
}

#[test]
fn single_core_tcm_kernel_on_one_core() {
    let dir = built("tcm_single", &[]);
    let n = 3001u64; // more than two TCM chunks, the last one short
    let x = values(n as usize, -1.0, 1.0, 3);
    let xf = npy_file("tcm_x.npy", &f32s(&[n], &x));
    let (out, _) = run_op(&dir, "relu_tcm", &[&xf.display().to_string()], 1, "tcm");
    assert_eq!(out.to_f32(), relu(&x), "relu_tcm on 1 core");
}

#[test]
fn multicore_tcm_kernel_writes_the_dst_tensor_with_a_remainder() {
    let dir = built("tcm_multicore", &["--multicore"]);
    let (r, c) = (41u64, 53u64); // numel 2173, 2173 % 8 = 5
    assert_ne!((r * c) % 8, 0);
    let x = values((r * c) as usize, -3.0, 3.0, 4);
    let xf = npy_file("mc_x.npy", &f32s(&[r, c], &x));
    let (out, report) = run_op(&dir, "relu_multicore", &[&xf.display().to_string()], 8, "mc");
    assert_eq!(out.shape, [r, c]);
    assert_eq!(out.to_f32(), relu(&x), "relu_multicore on 8 cores:\n{report}");
    // On one core only core 0's share is written (get_cpu_count() is the
    // NeuronCore's 8 whatever the launch uses): the run fails, naming the
    // elements no core wrote, and writes no output file.
    let out1 = scratch("out").join("mc-one-core.npy");
    let _ = std::fs::remove_file(&out1);
    let r1 = customop(&["run", &dir.display().to_string(), "relu_multicore", &xf.display().to_string(), "-o", &out1.display().to_string(), "--cores", "1"]);
    let n = (r * c) as usize;
    let share = n.div_ceil(8);
    assert_eq!(r1.status.code(), Some(7), "{}", text(&r1));
    assert!(text(&r1).contains("error 107"), "{}", text(&r1));
    assert!(text(&r1).contains(&format!("{} of {n} output elements were never written: [{share}, {n})", n - share)), "{}", text(&r1));
    assert!(!out1.exists(), "a failed run writes no output");
    // A --multicore build runs on 8 cores by default: every core reports.
    let out = scratch("out").join("mc-default.npy");
    let t = customop_ok(&["run", &dir.display().to_string(), "relu_multicore", &xf.display().to_string(), "-o", &out.display().to_string(), "--report"]);
    assert!(t.contains("on 8 core(s)"), "{t}");
    assert_eq!(customop::npy::read(&out).unwrap().to_f32(), relu(&x));
}

/// Cores that write their slices through raw pointers: the simulator runs
/// each core again alone to tell who wrote what, then writes the output
/// file as the cores computed it together (the file it had started
/// writing as the kernels ended is written again).
#[test]
fn raw_pointer_slices_on_8_cores_reach_the_output_file() {
    let dir = built("raw_slices", &["--multicore"]);
    let x = values(2173, -3.0, 3.0, 9);
    let xf = npy_file("raw_x.npy", &f32s(&[2173], &x));
    let (out, report) = run_op(&dir, "double_raw", &[&xf.display().to_string()], 8, "raw");
    let want: Vec<f32> = x.iter().map(|v| 2.0 * v).collect();
    assert_eq!(out.to_f32(), want, "double_raw on 8 cores:\n{report}");
}

/// The bug class of public multicore samples: a kernel that does not
/// slice its work, launched on every core, has each core write the whole
/// output. The simulator names the cores and the bytes.
#[test]
fn a_kernel_that_does_not_slice_its_work_on_8_cores_is_reported_as_overlapping() {
    let dir = built("tcm_single", &["--multicore"]);
    let (r, c) = (5u64, 7u64);
    let x = values((r * c) as usize, -2.0, 2.0, 9);
    let xf = npy_file("overlap_x.npy", &f32s(&[r, c], &x));
    let out = scratch("out").join("overlap.npy");
    let o = customop(&["run", &dir.display().to_string(), "relu_tcm", &xf.display().to_string(), "-o", &out.display().to_string(), "--cores", "8"]);
    assert_eq!(o.status.code(), Some(7), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("error 109"), "{t}");
    assert!(t.contains(&format!("cores 0 and 1 both wrote output bytes [0, {})", r * c * 4)), "{t}");
}

#[test]
fn stream_accessor_kernel_on_one_core() {
    let dir = built("stream", &[]);
    let n = 5000u64; // past one 4 KiB stream buffer
    let x = values(n as usize, -10.0, 10.0, 5);
    let xf = npy_file("stream_x.npy", &f32s(&[n], &x));
    let (out, _) = run_op(&dir, "scale_stream", &[&xf.display().to_string()], 1, "stream");
    let want: Vec<f32> = x.iter().map(|v| v * 2.0 + 1.0).collect();
    assert_eq!(out.to_f32(), want, "scale_stream on 1 core");
}

#[test]
fn scalar_and_int64_arguments_reach_the_kernel() {
    let dir = built("scalar_args", &[]);
    let x = values(100, -1.0, 1.0, 6);
    let xf = npy_file("affine_x.npy", &f32s(&[100], &x)).display().to_string();
    // A Scalar given as a float and as an integer; a negative int64_t.
    for (alpha, shift, a) in [("1.5", "-3", 1.5f32), ("2", "7", 2.0)] {
        let (out, _) = run_op(&dir, "affine", &[&xf, alpha, shift], 1, "affine");
        let s: f32 = shift.parse().unwrap();
        let want: Vec<f32> = x.iter().map(|v| v * a + s).collect();
        assert_eq!(out.to_f32(), want, "affine alpha={alpha} shift={shift}");
    }
    let v: Vec<i32> = (0..50).map(|i| i * 3 - 70).collect();
    let vf = npy_file("offset_v.npy", &i32s(&[50], &v)).display().to_string();
    let (out, _) = run_op(&dir, "offset_int", &[&vf, "10", "0.5"], 1, "offset");
    assert_eq!(out.dtype, customop::npy::Dtype::Int32);
    let want: Vec<i32> = v.iter().map(|&x| ((x as i64 + 10) as f64 * 0.5) as i32).collect();
    assert_eq!(to_i32(&out), want);
}

#[test]
fn documented_tensor_operations_called_the_vendor_way() {
    let dir = built("tensor_ops", &[]);
    let n = 257usize;
    let a = values(n, -0.95, 0.95, 7);
    let b = values(n, 0.1, 2.0, 8);
    let af = npy_file("ops_a.npy", &f32s(&[n as u64], &a)).display().to_string();
    let bf = npy_file("ops_b.npy", &f32s(&[n as u64], &b)).display().to_string();

    let (out, _) = run_op(&dir, "unary_ops", &[&af], 1, "ops");
    let want: Vec<f32> = a
        .iter()
        .map(|&x| {
            let p = x.abs() + 1.0;
            x.abs() + x.ceil() + x.floor() + x.sin() + x.cos() + x.tan() + p.ln() + p.log2() + p.log10() + x.exp()
        })
        .collect();
    assert_close(&out.to_f32(), &want, 1e-5, "unary_ops");

    let (out, _) = run_op(&dir, "binary_ops", &[&af, &bf], 1, "ops");
    let want: Vec<f32> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| (x + 0.5 * y) + (x - 2.0 * y) + x * y + x / y + y.powf(2.0) + y.powf(x) + 2f32.powf(x) + x.clamp(-0.25, 0.25))
        .collect();
    assert_close(&out.to_f32(), &want, 1e-5, "binary_ops");

    let (out, _) = run_op(&dir, "out_ops", &[&af, &bf], 1, "ops");
    let want: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| (x.exp() * y - 0.5 * x).abs().clamp(0.0, 2.0).sin()).collect();
    assert_close(&out.to_f32(), &want, 1e-5, "out_ops");

    let ia: Vec<i32> = (0..n as i32).map(|i| i * 7919 - 900_000).collect();
    let ib: Vec<i32> = (0..n as i32).map(|i| (i * 104_729) ^ 0x5a5a).collect();
    let iaf = npy_file("ops_ia.npy", &i32s(&[n as u64], &ia)).display().to_string();
    let ibf = npy_file("ops_ib.npy", &i32s(&[n as u64], &ib)).display().to_string();
    let (out, _) = run_op(&dir, "bitwise_ops", &[&iaf, &ibf], 1, "ops");
    let want: Vec<i32> = ia.iter().zip(&ib).map(|(&x, &y)| (x & y) | !x).collect();
    assert_eq!(to_i32(&out), want, "bitwise_ops");

    let k = 9u64;
    let like = values((k * k) as usize, -1.0, 1.0, 9);
    let lf = npy_file("ops_like.npy", &f32s(&[k, k], &like)).display().to_string();
    let (out, _) = run_op(&dir, "factory_ops", &[&lf], 1, "ops");
    let want: Vec<f32> = like.iter().enumerate().map(|(i, &l)| if i as u64 / k == i as u64 % k { 1.0 } else { 0.0 } + 2.5 + 1.0 + 0.25 + l).collect();
    assert_close(&out.to_f32(), &want, 1e-6, "factory_ops");
}

#[test]
fn coherence_policy_set_by_name_decides_whether_accessors_may_mix() {
    let dir = built("coherence", &[]);
    let x = values(300, -5.0, 5.0, 10);
    let xf = npy_file("coh_x.npy", &f32s(&[300], &x)).display().to_string();
    let twice: Vec<f32> = x.iter().map(|v| v + v).collect();
    let (out, quiet) = run_op(&dir, "mixed_quiet", &[&xf], 1, "coh");
    assert_eq!(out.to_f32(), twice, "INCOHERENT_QUIET allows the mix");
    let (out, verbose) = run_op(&dir, "mixed_verbose", &[&xf], 1, "coh");
    assert_eq!(out.to_f32(), twice, "INCOHERENT_VERBOSE allows the mix");
    assert!(verbose.contains("coherency warning"), "VERBOSE warns in the report:\n{verbose}");
    assert!(!quiet.contains("coherency warning"), "QUIET does not:\n{quiet}");
    // COHERENT refuses the element accessor (80), and a run that hit a
    // refusal is not a pass: it fails with that code, writing no output.
    let out = scratch("out").join("coh-coherent.npy");
    let _ = std::fs::remove_file(&out);
    let o = customop(&["run", &dir.display().to_string(), "mixed_coherent", &xf, "-o", &out.display().to_string()]);
    assert_eq!(o.status.code(), Some(7), "{}", text(&o));
    assert!(text(&o).contains("error 80"), "COHERENT refuses the second accessor:\n{}", text(&o));
    assert!(!out.exists());
}

#[test]
fn every_marshallable_dtype_goes_through_npy_the_shape_function_and_the_kernel() {
    use customop::npy::{Array, Dtype};
    let dir = built("dtypes", &[]);
    let n = 37usize;
    for dt in [Dtype::Uint8, Dtype::Int8, Dtype::Int16, Dtype::Int32, Dtype::Int64, Dtype::Fp16, Dtype::Bfloat16, Dtype::Fp32] {
        let size = usize::from(dt.elem_size());
        // Floating point: normal values (exponent bits neither 0 nor all ones).
        let data: Vec<u8> = (0..n)
            .flat_map(|i| {
                let v: u64 = match dt {
                    Dtype::Fp16 => 0x3c00 + i as u64 * 37,
                    Dtype::Bfloat16 => 0x3f80 + i as u64 * 37,
                    Dtype::Fp32 => 0x3f80_0000 + i as u64 * 123_457,
                    _ => (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                };
                v.to_le_bytes()[..size].to_vec()
            })
            .collect();
        let f = npy_file(&format!("dtype_{dt:?}.npy"), &Array { dtype: dt, shape: vec![n as u64], data: data.clone() });
        let (out, _) = run_op(&dir, "flip_any", &[&f.display().to_string()], 1, &format!("{dt:?}"));
        assert_eq!(out.dtype, dt, "the shape function's dtype");
        assert_eq!(out.shape, [n as u64]);
        let want: Vec<u8> = data
            .chunks_exact(size)
            .flat_map(|e| {
                let mut e = e.to_vec();
                match dt {
                    // Negation flips the sign bit (the top bit, little endian).
                    Dtype::Fp16 | Dtype::Bfloat16 | Dtype::Fp32 => e[size - 1] ^= 0x80,
                    _ => e.iter_mut().for_each(|b| *b = !*b),
                }
                e
            })
            .collect();
        assert_eq!(out.data, want, "{dt:?}");
    }
}

/// `accessor<c10::Half, 2>` and `accessor<at::BFloat16, 2>`: read as
/// float, written from a c10 value, updated with `*=` (the element is a
/// class, so its volatile access goes through its bits).
#[test]
fn half_and_bfloat16_elements_through_the_2d_accessor() {
    use customop::npy::Dtype;
    let dir = built("dtypes", &[]);
    let x: Vec<f32> = (0..35).map(|k| (k as f32 - 17.0) * 0.25).collect();
    for dt in [Dtype::Fp16, Dtype::Bfloat16] {
        let f = npy_file(&format!("acc16_{dt:?}.npy"), &floats16(dt, &[5, 7], &x));
        let (out, _) = run_op(&dir, "plus_two_16bit", &[&f.display().to_string()], 1, &format!("acc16 {dt:?}"));
        let want: Vec<f32> = x.iter().map(|v| v + 2.0).collect();
        assert_eq!(out, floats16(dt, &[5, 7], &want), "{dt:?}");
    }
}

/// A TensorAccessor sliced from `accessor()`, a sub-accessor of a
/// temporary accessor, planes and rows kept in variables: valid while the
/// tensor lives, as in libtorch (they pointed into the dead temporary).
#[test]
fn accessors_sliced_or_taken_from_a_temporary_stay_valid() {
    let dir = built("accessor_forms", &[]);
    for (op, shape, x, want) in accessor_forms_cases() {
        let f = npy_file(&format!("forms_{op}.npy"), &f32s(&shape, &x));
        let (out, t) = run_op(&dir, op, &[&f.display().to_string()], 1, "forms");
        assert_eq!(out.to_f32(), want, "{op}:\n{t}");
    }
}

/// A null from `tcm_malloc`, tested and handled as the vendor documents:
/// the run passes with the fallback's output, and the report lists the
/// out-of-memory error as handled.
#[test]
fn a_handled_null_from_tcm_malloc_does_not_fail_the_run() {
    let dir = built("tcm_fallback", &[]);
    let x = values(100, -3.0, 3.0, 41);
    let f = npy_file("fallback_x.npy", &f32s(&[100], &x));
    let (out, t) = run_op(&dir, "negate_or_fall_back", &[&f.display().to_string()], 1, "fallback");
    assert_eq!(out.to_f32(), x.iter().map(|v| -v).collect::<Vec<_>>());
    assert!(t.contains("tcm_malloc: null, falling back"), "{t}");
    // Handled, and where: the pool, the size asked for and what it had.
    let line = t.lines().find(|l| l.contains("10 (out of memory)")).unwrap_or_else(|| panic!("no error 10 in:\n{t}"));
    assert!(line.ends_with(" (handled)") && line.contains(", where: the tcm_malloc pool: ") && line.contains(" bytes asked for, "), "{line}");
}

#[test]
fn every_accepted_argument_spelling_links_and_marshals() {
    let dir = built("spellings", &[]);
    let n = 33u64;
    let (a, b, c) = (values(n as usize, -1.0, 1.0, 16), values(n as usize, -1.0, 1.0, 17), values(n as usize, -1.0, 1.0, 18));
    let files: Vec<String> =
        [("sp_a.npy", &a), ("sp_b.npy", &b), ("sp_c.npy", &c)].iter().map(|(f, v)| npy_file(f, &f32s(&[n], v)).display().to_string()).collect();
    let (out, _) = run_op(&dir, "sum_all", &[&files[0], &files[1], &files[2], "0.5", "-2", "0.25", "1000", "0.125"], 1, "spell");
    let rest = 0.5f32 + -2.0 + 0.25 + 1000.0 + 0.125;
    let want: Vec<f32> = (0..n as usize).map(|k| a[k] + b[k] + c[k] + rest).collect();
    assert_eq!(out.to_f32(), want);
    let schema = customop::Schema::load(&dir).unwrap();
    let types: Vec<&str> = schema.ops[0].params.iter().map(|p| p.cpp_type.as_str()).collect();
    assert_eq!(types, ["torch::Tensor", "torch::Tensor&", "torch::Tensor", "torch::Scalar", "int", "float", "long", "const double&"]);
}

/// `--timings` (issue 28): one line naming every part of a run on the
/// simulator, a time per core; the output goes from the simulated HBM
/// straight to a temporary in the output's directory, renamed into place:
/// none is left behind, and the file is whole.
#[test]
fn timings_name_every_part_and_the_output_file_appears_whole() {
    let dir = built("tcm_multicore", &["--multicore"]);
    let n = 5000u64;
    let x = values(n as usize, -2.0, 2.0, 9);
    let xf = npy_file("timings_x.npy", &f32s(&[n], &x));
    let outdir = scratch("timings-out");
    let _ = std::fs::remove_dir_all(&outdir);
    std::fs::create_dir_all(&outdir).unwrap();
    let out = outdir.join("y.npy");
    let text = customop_ok(&["run", &dir.display().to_string(), "relu_multicore", &xf.display().to_string(), "-o", &out.display().to_string(), "--timings"]);
    let line = text.lines().find(|l| l.starts_with("timings:")).unwrap_or_else(|| panic!("no timings line:\n{text}"));
    for part in ["inputs ", "setup ", "copy-in ", "kernel per core [", "verdict ", "copy-out ", "total "] {
        assert!(line.contains(part), "{part} missing: {line}");
    }
    let per_core = line.split("kernel per core [").nth(1).and_then(|r| r.split(']').next()).unwrap();
    assert_eq!(per_core.split(',').count(), 8, "{line}");
    let got = customop::npy::read(&out).unwrap();
    assert_eq!(got.to_f32(), relu(&x));
    let left: Vec<_> = std::fs::read_dir(&outdir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, [std::ffi::OsString::from("y.npy")], "only the output is left");
    // Without --timings there is no such line.
    let plain = customop_ok(&["run", &dir.display().to_string(), "relu_multicore", &xf.display().to_string(), "-o", &out.display().to_string()]);
    assert!(!plain.contains("timings:"), "{plain}");
}
