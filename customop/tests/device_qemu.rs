//! The differential check: every vendor-style kernel of `tests/kernels/`
//! built with `--target qemu` (the Xtensa image and the simulator build of
//! the same sources) and run with `customop run --on both` (single-core
//! builds on 1 emulated core, `--multicore` builds on 8): the tool fails (exit 11) unless the simulator's and the
//! emulated device's outputs are bit-identical and their run status the
//! same. The outputs are also checked against references here, so that
//! two runs that agree on something wrong do not pass.
//!
//! Needs the Xtensa toolchain (ziglang 0.17.1 from PyPI, the pinned
//! nightly with llvm-tools, binutils-xtensa-lx106) and qemu-system-xtensa:
//! without one of them the build or run fails with exit 10 naming it.

mod common;
use common::*;
use customop::npy::{self, Array};
use std::path::Path;

const QEMU: &[&str] = &["--target", "qemu"];

/// `customop run ... --on both`; the output and the tool's text.
fn both(dir: &Path, op: &str, args: &[&str], cores: u32, tag: &str) -> (Array, String) {
    let out = scratch("out").join(format!("both-{tag}-{op}-{cores}.npy"));
    let _ = std::fs::remove_file(&out);
    let (d, o, c) = (dir.display().to_string(), out.display().to_string(), cores.to_string());
    let mut a = vec!["run", d.as_str(), op];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-o", o.as_str(), "--cores", c.as_str(), "--on", "both"]);
    let t = customop_ok(&a);
    assert!(t.contains("outputs bit-identical"), "{t}");
    for core in 0..cores {
        assert!(t.contains(&format!("qemu core {core}: returned 0, status 0")), "core {core}:\n{t}");
    }
    (npy::read(&out).unwrap(), t)
}

/// The cores a build without `--multicore` runs on (the vendor's model;
/// `customop run` refuses 8 for it).
const SINGLE_CORE: [u32; 1] = [1];

fn relu(v: &[f32]) -> Vec<f32> {
    v.iter().map(|x| x.max(0.0)).collect()
}

#[test]
fn relu_2d_accessor_kernels_agree() {
    let dir = built("relu2d", QEMU);
    let (r, c) = (37u64, 29u64);
    let x = values((r * c) as usize, -2.0, 2.0, 1);
    let g = values((r * c) as usize, -1.0, 1.0, 2);
    let xs = npy_file("q_relu2d_x.npy", &f32s(&[r, c], &x)).display().to_string();
    let gs = npy_file("q_relu2d_g.npy", &f32s(&[r, c], &g)).display().to_string();
    for cores in SINGLE_CORE {
        let (out, _) = both(&dir, "relu_forward", &[&xs], cores, "relu2d");
        assert_eq!(out.to_f32(), relu(&x));
        let (out, _) = both(&dir, "relu_backward", &[&gs, &xs], cores, "relu2d");
        let want: Vec<f32> = g.iter().zip(&x).map(|(g, x)| if *x > 0.0 { *g } else { 0.0 }).collect();
        assert_eq!(out.to_f32(), want);
    }
}

/// Out-of-range accessor indices: the device's inline index arithmetic
/// refuses each with the code the simulator's library peel records, reads
/// give 0, the write is dropped, the in-range corners work.
#[test]
fn out_of_range_accessor_indices_agree() {
    let dir = built("accessor_bounds", QEMU);
    let (r, c) = (5u64, 7u64);
    let x: Vec<f32> = (0..r * c).map(|i| i as f32 + 1.0).collect();
    let xs = npy_file("q_bounds_x.npy", &f32s(&[r, c], &x)).display().to_string();
    let (out, t) = both(&dir, "bounds", &[&xs], 1, "bounds");
    assert_eq!(out.to_f32(), [x[(r * c - 1) as usize], 0.0, 0.0, 0.0, 0.0, 0.0, x[0], 83.0]);
    // The same line in the simulator's report and in the device's.
    assert_eq!(t.matches("bounds errors 0 33 83 33 83 33 0 83").count(), 2, "{t}");
}

#[test]
fn tcm_kernels_agree_single_on_1_multicore_on_8() {
    let dir = built("tcm_single", QEMU);
    let n = 3001u64;
    let x = values(n as usize, -1.0, 1.0, 3);
    let xs = npy_file("q_tcm_x.npy", &f32s(&[n], &x)).display().to_string();
    let mc = built("tcm_multicore", &["--target", "qemu", "--multicore"]);
    let (r, c) = (41u64, 53u64);
    let y = values((r * c) as usize, -3.0, 3.0, 4);
    let ys = npy_file("q_mc_x.npy", &f32s(&[r, c], &y)).display().to_string();
    assert_eq!(both(&dir, "relu_tcm", &[&xs], 1, "tcm").0.to_f32(), relu(&x));
    assert_eq!(both(&mc, "relu_multicore", &[&ys], 8, "mc").0.to_f32(), relu(&y), "8 cores");
    // On one core only core 0's share is written (get_cpu_count() is 8
    // whatever the launch): the simulator's coverage check fails the run,
    // which the device cannot see, so it is reported as the simulator's
    // finding (exit 7), not as a disagreement.
    let out = scratch("out").join("both-mc-1.npy");
    let o = customop(&["run", &mc.display().to_string(), "relu_multicore", &ys, "-o", &out.display().to_string(), "--cores", "1", "--on", "both"]);
    assert_eq!(o.status.code(), Some(7), "{}", text(&o));
    assert!(text(&o).contains("error 107") && text(&o).contains("the emulated cluster cannot check this"), "{}", text(&o));
}

#[test]
fn stream_scalar_and_spelling_kernels_agree() {
    let stream = built("stream", QEMU);
    let x = values(5000, -10.0, 10.0, 5);
    let xs = npy_file("q_stream_x.npy", &f32s(&[5000], &x)).display().to_string();
    let scalar = built("scalar_args", QEMU);
    let a = values(100, -1.0, 1.0, 6);
    let as_ = npy_file("q_affine_x.npy", &f32s(&[100], &a)).display().to_string();
    let v: Vec<i32> = (0..50).map(|i| i * 3 - 70).collect();
    let vs = npy_file("q_offset_v.npy", &i32s(&[50], &v)).display().to_string();
    let spell = built("spellings", QEMU);
    let n = 33u64;
    let files: Vec<String> =
        (16..19).map(|s| npy_file(&format!("q_sp_{s}.npy"), &f32s(&[n], &values(n as usize, -1.0, 1.0, s))).display().to_string()).collect();
    for cores in SINGLE_CORE {
        let want: Vec<f32> = x.iter().map(|v| v * 2.0 + 1.0).collect();
        assert_eq!(both(&stream, "scale_stream", &[&xs], cores, "stream").0.to_f32(), want);
        let want: Vec<f32> = a.iter().map(|v| v * 1.5 - 3.0).collect();
        assert_eq!(both(&scalar, "affine", &[&as_, "1.5", "-3"], cores, "affine").0.to_f32(), want);
        let want: Vec<i32> = v.iter().map(|&x| ((x as i64 + 10) as f64 * 0.5) as i32).collect();
        assert_eq!(to_i32(&both(&scalar, "offset_int", &[&vs, "10", "0.5"], cores, "offset").0), want);
        both(&spell, "sum_all", &[&files[0], &files[1], &files[2], "0.5", "-2", "0.25", "1000", "0.125"], cores, "spell");
    }
}

#[test]
fn tensor_operations_agree_bit_for_bit() {
    // The transcendental functions run in the library on both sides (the
    // same Rust code, host float vs soft-float): bit-identical, not close.
    let dir = built("tensor_ops", QEMU);
    let n = 257usize;
    let a = npy_file("q_ops_a.npy", &f32s(&[n as u64], &values(n, -0.95, 0.95, 7))).display().to_string();
    let b = npy_file("q_ops_b.npy", &f32s(&[n as u64], &values(n, 0.1, 2.0, 8))).display().to_string();
    let ia: Vec<i32> = (0..n as i32).map(|i| i * 7919 - 900_000).collect();
    let ib: Vec<i32> = (0..n as i32).map(|i| (i * 104_729) ^ 0x5a5a).collect();
    let iaf = npy_file("q_ops_ia.npy", &i32s(&[n as u64], &ia)).display().to_string();
    let ibf = npy_file("q_ops_ib.npy", &i32s(&[n as u64], &ib)).display().to_string();
    let like = npy_file("q_ops_like.npy", &f32s(&[9, 9], &values(81, -1.0, 1.0, 9))).display().to_string();
    for cores in SINGLE_CORE {
        both(&dir, "unary_ops", &[&a], cores, "ops");
        both(&dir, "binary_ops", &[&a, &b], cores, "ops");
        both(&dir, "out_ops", &[&a, &b], cores, "ops");
        let want: Vec<i32> = ia.iter().zip(&ib).map(|(&x, &y)| (x & y) | !x).collect();
        assert_eq!(to_i32(&both(&dir, "bitwise_ops", &[&iaf, &ibf], cores, "ops").0), want);
        both(&dir, "factory_ops", &[&like], cores, "ops");
    }
}

#[test]
fn coherence_and_dtype_kernels_agree() {
    let coh = built("coherence", QEMU);
    let x = values(300, -5.0, 5.0, 10);
    let xs = npy_file("q_coh_x.npy", &f32s(&[300], &x)).display().to_string();
    let dt = built("dtypes", QEMU);
    use customop::npy::Dtype;
    for cores in SINGLE_CORE {
        for op in ["mixed_quiet", "mixed_verbose"] {
            both(&coh, op, &[&xs], cores, "coh");
        }
        // COHERENT refuses the mix (80): the run fails alike on both sides
        // (the device runner reports the first unhandled error too).
        let out = scratch("out").join("both-coh-coherent.npy");
        let o = customop(&["run", &coh.display().to_string(), "mixed_coherent", &xs, "-o", &out.display().to_string(), "--on", "both"]);
        assert_eq!(o.status.code(), Some(7), "{}", text(&o));
        assert!(text(&o).contains("error 80") && text(&o).contains("on both the simulator and the emulated cluster"), "{}", text(&o));
        for d in [Dtype::U8, Dtype::I16, Dtype::I64, Dtype::F16, Dtype::Bf16, Dtype::F32] {
            let data: Vec<u8> = (0..37u64 * d.size() as u64).map(|i| (i * 37 + 11) as u8 & 0x7e).collect();
            let f = npy_file(&format!("q_dtype_{d:?}.npy"), &Array { dtype: d, shape: vec![37], data }).display().to_string();
            let (out, _) = both(&dt, "flip_any", &[&f], cores, &format!("{d:?}"));
            assert_eq!(out.dtype, d);
        }
        // The 16-bit float classes through the 2-D per-element accessor.
        let x: Vec<f32> = (0..35).map(|k| (k as f32 - 17.0) * 0.25).collect();
        let want: Vec<f32> = x.iter().map(|v| v + 2.0).collect();
        for d in [Dtype::F16, Dtype::Bf16] {
            let f = npy_file(&format!("q_acc16_{d:?}.npy"), &floats16(d, &[5, 7], &x)).display().to_string();
            let (out, _) = both(&dt, "plus_two_16bit", &[&f], cores, &format!("acc16 {d:?}"));
            assert_eq!(out, floats16(d, &[5, 7], &want), "{d:?}");
        }
    }
}

/// The accessor forms that pointed into a dead temporary (a sliced
/// TensorAccessor, a sub-accessor of a temporary accessor) on the device:
/// right and bit-identical to the simulator.
#[test]
fn accessors_sliced_or_taken_from_a_temporary_agree() {
    let dir = built("accessor_forms", QEMU);
    for (op, shape, x, want) in accessor_forms_cases() {
        let f = npy_file(&format!("q_forms_{op}.npy"), &f32s(&shape, &x)).display().to_string();
        let (out, _) = both(&dir, op, &[&f], 1, "forms");
        assert_eq!(out.to_f32(), want, "{op}");
    }
}

/// A kernel that makes NaNs (inf - inf): the host's NaN has its sign bit
/// set, the device's soft float's not; `--on both` takes NaN for NaN and
/// says how many differ in their bits. A number against a NaN would
/// still be a mismatch (the unit tests of `differential`).
#[test]
fn nans_agree_across_the_simulator_and_the_device() {
    let dir = built("nan", QEMU);
    let x = [1.0f32, f32::INFINITY, -2.5, f32::NEG_INFINITY];
    let f = npy_file("q_nan_x.npy", &f32s(&[4], &x)).display().to_string();
    let (out, t) = both(&dir, "self_sub", &[&f], 1, "nan");
    let y = out.to_f32();
    assert!(y[0] == 0.0 && y[2] == 0.0 && y[1].is_nan() && y[3].is_nan(), "{y:?}");
    assert!(t.contains("outputs bit-identical but for 2 NaN(s) whose sign or payload differs"), "{t}");
}

/// A kernel that starts as the vendor's samples do, with the C library
/// headers: they exist on the device (include/device-libc) and do what
/// they do on the simulator — malloc/calloc/free, memcpy/memset/memcmp,
/// the math library, snprintf, printf — bit for bit; a failed `assert`
/// checks on the device too (zig's -O2 defined NDEBUG) and stops the core
/// with the abort report naming the expression.
#[test]
fn the_c_library_headers_work_on_the_device_as_on_the_simulator() {
    let dir = built("libc", QEMU);
    let x: Vec<f32> = (0..16).map(|i| (i as f32 - 7.5) * 0.75).collect();
    let f = npy_file("q_libc_x.npy", &f32s(&[16], &x)).display().to_string();
    let (out, t) = both(&dir, "libc_mix", &[&f], 1, "libc");
    // The kernel's sum, in its order, in f32.
    let want: Vec<f32> = x.iter().map(|&v| v.abs().sqrt() + v.floor() + v.max(0.0) + v * 4.0 + v % 1.5 + v.trunc() + 3.0 + 8.0 + 1.0 + 2.0).collect();
    assert_eq!(out.to_f32(), want);
    assert!(t.contains("    n=16 len=4 cmp=0") && t.contains("printf: n=16 len=4 cmp=0"), "{t}");
    let o =
        customop(&["run", &dir.display().to_string(), "failing_assert", &f, "-o", &scratch("out").join("assert.npy").display().to_string(), "--on", "qemu"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(7), "{t}");
    assert!(t.contains("error 98 (assertion failed in the kernel): x.numel() < 0 at ") && t.contains("libc_mix.cpp:45"), "{t}");
}

#[test]
fn a_device_kernel_prints_the_same_text_as_the_simulator() {
    let dir = built("printing", QEMU);
    let x = values(16, -1.0, 1.0, 11);
    let xs = npy_file("q_print_x.npy", &f32s(&[16], &x)).display().to_string();
    for cores in SINGLE_CORE {
        let (out, t) = both(&dir, "say", &[&xs, "77"], cores, "print");
        assert_eq!(out.to_f32(), x);
        for c in 0..cores {
            for line in [
                format!("core {c} of 8: tag=77 n=16"),
                "|   42|-7   |00009|+3| 4|-123456789|".into(),
                "|beef|BEEF|0xff|00000ABC|Q|text|abc|".into(),
                "|3.141590|-2.50|1.234568e+04|0.0001|    0.6667|6.0e+23 |".into(),
                format!("wide:{:0190}|", 5),
            ] {
                // The simulator's report lists it under its core, the
                // device's as a printf line of the core.
                assert!(t.contains(&format!("    {line}\n")), "simulator, core {c}: {line}\n{t}");
                let dev = t.split(&format!("qemu core {c}:")).nth(1).unwrap_or("");
                let dev = dev.split("qemu core ").next().unwrap_or("");
                assert!(dev.contains(&format!("  printf: {line}\n")), "device, core {c}: {line}\n{t}");
            }
        }
    }
}

#[test]
fn a_difference_between_simulator_and_device_is_exit_11_with_the_elements() {
    // The same kernel source, but the device build sees CUSTOMOP_DEVICE_SKEW
    // (a flag the host compile does not get): the outputs differ in one
    // element, and --on both must say which.
    let src = scratch("skew");
    std::fs::write(
        src.join("k.cpp"),
        "#include <torch/torch.h>\n\
         torch::Tensor copy1(const torch::Tensor& t) {\n\
           torch::Tensor o = torch::zeros(t.sizes(), torch::kFloat);\n\
           auto a = t.accessor<float, 1>(); auto b = o.accessor<float, 1>();\n\
           for (int64_t i = 0; i < t.size(0); i++) b[i] = a[i];\n\
         #ifdef __XTENSA__\n\
           b[5] = 1.5f;\n\
         #endif\n\
           return o;\n\
         }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("shape.cpp"),
        "#include <torch/torch.h>\n#include \"torchneuron/register.h\"\n\
         torch::Tensor s(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }\n\
         NEURON_LIBRARY(skew, m) { m.def(\"copy1\", &s, \"copy1\"); }\n",
    )
    .unwrap();
    let out = src.join("build");
    let (k, s, o) = (src.join("k.cpp").display().to_string(), src.join("shape.cpp").display().to_string(), out.display().to_string());
    customop_ok(&["build", "--name", "skew", "--compute", &k, "--shape", &s, "--out", &o, "--target", "qemu"]);
    let x = npy_file("q_skew.npy", &f32s(&[8], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])).display().to_string();
    let y = scratch("out").join("skew.npy").display().to_string();
    let r = customop(&["run", &o, "copy1", &x, "-o", &y, "--on", "both"]);
    assert_eq!(r.status.code(), Some(11), "{}", text(&r));
    assert!(text(&r).contains("1 of 8 elements differ"), "{}", text(&r));
    assert!(text(&r).contains("[5] (flat 5): simulator 5.0 (0x40a00000), device 1.5 (0x3fc00000)"), "{}", text(&r));
    // Each side alone runs fine and writes its own answer.
    customop_ok(&["run", &o, "copy1", &x, "-o", &y, "--on", "qemu"]);
    assert_eq!(npy::read(Path::new(&y)).unwrap().to_f32()[5], 1.5);
    // A sim-only build cannot run on QEMU.
    let sim = built("stream", &[]);
    let r = customop(&["run", &sim.display().to_string(), "scale_stream", &x, "-o", &y, "--on", "qemu"]);
    assert_eq!(r.status.code(), Some(6), "{}", text(&r));
    assert!(text(&r).contains("needs a --target qemu build"), "{}", text(&r));
}

#[test]
fn a_kernel_compiled_with_frame_pointers_runs_through_the_alloca_handler() {
    // With frame pointers LLVM moves SP with `movsp` around stack-passed
    // arguments (the spellings kernel has 8 parameters, more than the 6
    // argument registers); when the caller's window is already spilled,
    // `movsp` raises the Alloca exception (EXCCAUSE 5), which the board's
    // vector handles by reloading the caller's window. Without it the run
    // ends in the board's fatal report (exit 102).
    let dir = built("spellings", &["--target", "qemu", "--cflags", "-fno-omit-frame-pointer"]);
    let sysroot = std::process::Command::new("rustup").args(["run", "nightly-2026-10-15", "rustc", "--print", "sysroot"]).output().unwrap();
    let objdump = Path::new(String::from_utf8_lossy(&sysroot.stdout).trim()).join("lib/rustlib/x86_64-unknown-linux-gnu/bin/llvm-objdump");
    let objs: Vec<_> = std::fs::read_dir(dir.join("customop-build/obj/xtensa"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "o"))
        .collect();
    let d = std::process::Command::new(&objdump).args(["--mattr=+windowed,+density", "-d"]).args(&objs).output().expect("llvm-objdump of the nightly");
    assert!(String::from_utf8_lossy(&d.stdout).contains("movsp"), "the frame-pointer build has movsp");
    let n = 33u64;
    let files: Vec<String> =
        (16..19).map(|s| npy_file(&format!("q_fp_{s}.npy"), &f32s(&[n], &values(n as usize, -1.0, 1.0, s))).display().to_string()).collect();
    let vals: Vec<Vec<f32>> = (16..19).map(|s| values(n as usize, -1.0, 1.0, s)).collect();
    let want: Vec<f32> = (0..n as usize).map(|k| vals[0][k] + vals[1][k] + vals[2][k] + (0.5f32 + -2.0 + 0.25 + 1000.0 + 0.125)).collect();
    for cores in SINGLE_CORE {
        let (out, _) = both(&dir, "sum_all", &[&files[0], &files[1], &files[2], "0.5", "-2", "0.25", "1000", "0.125"], cores, "fp");
        assert_eq!(out.to_f32(), want, "{cores} core(s)");
    }
}

#[test]
fn a_kernel_failing_the_same_way_on_both_is_a_failed_run_with_its_status() {
    // The kernel returns an int32 tensor where its shape function said
    // float: error 35 on the simulator and on the device alike.
    let src = scratch("wrong");
    std::fs::write(
        src.join("k.cpp"),
        "#include <torch/torch.h>\ntorch::Tensor wrong(const torch::Tensor& t) { return torch::zeros(t.sizes(), torch::kInt); }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("shape.cpp"),
        "#include <torch/torch.h>\n#include \"torchneuron/register.h\"\n\
         torch::Tensor s(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }\n\
         NEURON_LIBRARY(w, m) { m.def(\"wrong\", &s, \"wrong\"); }\n",
    )
    .unwrap();
    let o = src.join("build").display().to_string();
    let (k, s) = (src.join("k.cpp").display().to_string(), src.join("shape.cpp").display().to_string());
    // --multicore so that it may run on 8 cores too.
    customop_ok(&["build", "--name", "wrong", "--compute", &k, "--shape", &s, "--out", &o, "--target", "qemu", "--multicore"]);
    let x = npy_file("q_wrong.npy", &f32s(&[3], &[1.0, 2.0, 3.0])).display().to_string();
    let y = scratch("out").join("wrong.npy").display().to_string();
    for cores in ["1", "8"] {
        let r = customop(&["run", &o, "wrong", &x, "-o", &y, "--on", "both", "--cores", cores]);
        let t = text(&r);
        assert_eq!(r.status.code(), Some(7), "{t}");
        assert!(t.contains("error 35: returned tensor dtype differs from the output descriptor (on both the simulator and the emulated cluster)"), "{t}");
        assert!(t.contains("qemu core 0: returned 0, status 35"), "{t}");
    }
}
