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

/// Writes case `case`'s compute source `compute` (`k.cpp`) and a one-op
/// shape source (`shape.cpp`: library `lib`, op `op`, a shape function of
/// `(torch::Tensor t{extra})` giving t's shape as float); returns the two
/// paths and the build directory, as strings for the command line.
fn one_op_case(case: &str, compute: &str, lib: &str, op: &str, extra: &str) -> (String, String, String) {
    let src = scratch(case);
    std::fs::write(src.join("k.cpp"), compute).unwrap();
    std::fs::write(
        src.join("shape.cpp"),
        format!(
            "#include <torch/torch.h>\n#include \"torchneuron/register.h\"\n\
             torch::Tensor s(torch::Tensor t{extra}) {{ return torch::zeros(t.sizes(), torch::kFloat); }}\n\
             NEURON_LIBRARY({lib}, m) {{ m.def(\"{op}\", &s, \"{op}\"); }}\n"
        ),
    )
    .unwrap();
    let path = |f: &str| src.join(f).display().to_string();
    (path("k.cpp"), path("shape.cpp"), path("build"))
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

/// The bits of `v`.
fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

/// The object (archive member) that the image `elf`'s link took function
/// `name`'s code from, by its map file.
fn code_origin(elf: &Path, name: &str) -> String {
    let map = std::fs::read_to_string(elf.with_extension("elf.map")).unwrap();
    let kept = map.split("Linker script and memory map").nth(1).expect("the map's memory map");
    let section = format!(".text.{name}");
    let line =
        kept.lines().find(|l| l.split_whitespace().next() == Some(section.as_str())).unwrap_or_else(|| panic!("no {section} in {}'s map", elf.display()));
    line.rsplit('(').next().unwrap_or(line).to_string()
}

/// Kernels that call the C math library (a row softmax through TCM with
/// `expf`; `logf`, `tanhf`, `sqrtf`, `powf`, `sinf`·`cosf` through an
/// accessor): the simulator and the emulated device compute them with the
/// same libm (`neuron-libm`, a port of musl's), so `--on both` is
/// bit-identical, on 1 core and with the rows shared out over 8, and both
/// give neuron-libm's bits. On the device those functions are
/// neuron-libm's strong definitions, not compiler_builtins' weak ones.
#[test]
fn kernels_calling_libm_agree_on_1_and_8_cores() {
    let dir = built("libm", QEMU);
    let mc = built("libm", &["--target", "qemu", "--multicore"]);
    let (r, c) = (16u64, 1024u64);
    let x = values((r * c) as usize, -8.0, 8.0, 74);
    let xs = npy_file("q_softmax_x.npy", &f32s(&[r, c], &x)).display().to_string();
    let want = bits(&libm_softmax_rows(&x, c as usize));
    assert_eq!(bits(&both(&dir, "row_softmax", &[&xs], 1, "libm").0.to_f32()), want, "1 core");
    assert_eq!(bits(&both(&mc, "row_softmax_multicore", &[&xs], 8, "libm_mc").0.to_f32()), want, "8 cores");
    let y = values(2000, -6.0, 6.0, 75);
    let ys = npy_file("q_mix_y.npy", &f32s(&[2000], &y)).display().to_string();
    let want: Vec<f32> = y.iter().map(|&v| libm_math_mix(v)).collect();
    assert_eq!(bits(&both(&dir, "math_mix", &[&ys], 1, "libm").0.to_f32()), bits(&want));
    for image in [dir.join("libm_qemu.elf"), mc.join("libm_qemu.elf")] {
        for f in ["expf", "logf", "tanhf", "sqrtf", "powf", "sinf", "cosf"] {
            let from = code_origin(&image, f);
            assert!(from.starts_with("neuron_libm-"), "{f} of {} is from {from}", image.display());
        }
    }
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
        for d in [Dtype::Uint8, Dtype::Int16, Dtype::Int64, Dtype::Fp16, Dtype::Bfloat16, Dtype::Fp32] {
            let data: Vec<u8> = (0..37u64 * u64::from(d.elem_size())).map(|i| (i * 37 + 11) as u8 & 0x7e).collect();
            let f = npy_file(&format!("q_dtype_{d:?}.npy"), &Array { dtype: d, shape: vec![37], data }).display().to_string();
            let (out, _) = both(&dt, "flip_any", &[&f], cores, &format!("{d:?}"));
            assert_eq!(out.dtype, d);
        }
        // The 16-bit float classes through the 2-D per-element accessor.
        let x: Vec<f32> = (0..35).map(|k| (k as f32 - 17.0) * 0.25).collect();
        let want: Vec<f32> = x.iter().map(|v| v + 2.0).collect();
        for d in [Dtype::Fp16, Dtype::Bfloat16] {
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
    let (k, s, o) = one_op_case(
        "skew",
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
        "skew",
        "copy1",
        "",
    );
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
    let (k, s, o) = one_op_case(
        "wrong",
        "#include <torch/torch.h>\ntorch::Tensor wrong(const torch::Tensor& t) { return torch::zeros(t.sizes(), torch::kInt); }\n",
        "w",
        "wrong",
        "",
    );
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

/// The C++ standard library inside a kernel (SPEC §11: libc++ on the
/// device, the host's library on the simulator): one build of a kernel
/// using <vector>, <algorithm>, <array>, <numeric>, <limits>, <cmath>,
/// <utility> and <type_traits>; every op bit-identical across the two and
/// equal to the same computation done here.
#[test]
fn the_standard_library_works_in_a_device_kernel_as_on_the_simulator() {
    let dir = built("stdlib", QEMU);
    let x: Vec<f32> = vec![3.5, -1.25, 0.0, 7.75, -2.5, 2.25, -0.5, 1.0, 5.5, -3.75, 0.25, 4.0, -6.5, 0.75, 2.0, -0.125];
    let n = x.len();
    let f = npy_file("q_std_x.npy", &f32s(&[n as u64], &x)).display().to_string();

    // sort, then a stable partition (non-negatives first, order kept) with
    // the first half reversed.
    let mut sorted = x.clone();
    sorted.sort_by(f32::total_cmp);
    let mut w: Vec<f32> = sorted.iter().copied().filter(|v| *v >= 0.0).chain(sorted.iter().copied().filter(|v| *v < 0.0)).collect();
    w[..n / 2].reverse();
    let want_sort: Vec<f32> = sorted.iter().zip(&w).map(|(s, w)| s * 2.0 + w).collect();
    assert_eq!(both(&dir, "sort_vector", &[&f], 1, "std").0.to_f32(), want_sort, "sort_vector");

    // partial_sum - mean (accumulate, in order) + inner_product(iota(4)).
    let mean = x.iter().fold(0.0f32, |a, v| a + v) / n as f32;
    let mut acc = 0.0f32;
    let want: Vec<f32> = x
        .iter()
        .map(|v| {
            acc += v;
            acc - mean + 14.0
        })
        .collect();
    assert_eq!(both(&dir, "numeric_ops", &[&f], 1, "std").0.to_f32(), want, "numeric_ops");

    // max and argmax, min, the ends swapped, two limits in front.
    let (best, at) = x.iter().enumerate().fold((f32::MIN, -1i32), |b, (i, v)| if *v > b.0 { (*v, i as i32) } else { b });
    let lo = x.iter().fold(f32::MAX, |a, v| a.min(*v));
    let mut v = x.clone();
    v.swap(0, n - 1);
    let mut want: Vec<f32> = v.iter().map(|f| (f - best).max(-1.0) + at as f32 + lo).collect();
    want[0] = f32::EPSILON;
    want[1] = i16::MAX as f32;
    assert_eq!(both(&dir, "limits_utility", &[&f], 1, "std").0.to_f32(), want, "limits_utility");

    // <cmath>'s float overloads (exactly rounded ones: the same bits on
    // the host's libm and the device's).
    let want: Vec<f32> = x
        .iter()
        .map(|&v| v.abs().sqrt() + v.floor() + v.ceil() + v.trunc() + v.round() + v.max(0.0) + v % 1.5 + v * 8.0 + 1.0f32.copysign(v) + 0.0 + v.abs())
        .collect();
    assert_eq!(both(&dir, "cmath_ops", &[&f], 1, "std").0.to_f32(), want, "cmath_ops");
    // frexp, modf, nearbyint, lround, scalbn, ilogb, logb, remainder,
    // nextafter from the float's bits (every input normal or zero).
    let want: Vec<f32> = x
        .iter()
        .map(|&v| {
            if v == 0.0 {
                return 0.0;
            }
            let b = v.to_bits();
            let ilogb = ((b >> 23) & 0xff) as i32 - 127;
            let m = f32::from_bits((b & 0x807f_ffff) | (126 << 23));
            let next = f32::from_bits(if v > 0.0 { b + 1 } else { b - 1 });
            m + (ilogb + 1) as f32
                + (v - v.trunc())
                + v.trunc() * 2.0
                + v.round_ties_even()
                + v.round()
                + v * 0.25
                + ilogb as f32
                + ilogb as f32
                + (v - 2.0 * (v / 2.0).round_ties_even())
                + (next - v) * 1_048_576.0
        })
        .collect();
    assert_eq!(both(&dir, "cmath_more", &[&f], 1, "std").0.to_f32(), want, "cmath_more");
    // The vendor's C++14 (`--cflags -std=c++14`, after the tool's
    // -std=c++17 on both sides): the same kernel, the same bits.
    let dir14 = built("stdlib", &["--target", "qemu", "--cflags", "-std=c++14"]);
    assert_eq!(both(&dir14, "sort_vector", &[&f], 1, "std14").0.to_f32(), want_sort, "sort_vector, C++14");
    assert_eq!(both(&dir14, "cmath_more", &[&f], 1, "std14").0.to_f32(), want, "cmath_more, C++14");

    // A function-local static vector (__cxa_atexit on the device).
    let want: Vec<f32> = x.iter().map(|v| v + 0.5).collect();
    assert_eq!(both(&dir, "static_scratch", &[&f], 1, "std").0.to_f32(), want, "static_scratch");
    // A vector of 1000 floats on the heap, and a nothrow new that fits.
    let want: Vec<f32> = x.iter().map(|v| v + 1000.0).collect();
    assert_eq!(both(&dir, "vector_fill", &[&f, "1000"], 1, "std").0.to_f32(), want, "vector_fill");
    let want: Vec<f32> = x.iter().map(|v| v + 1.0).collect();
    assert_eq!(both(&dir, "nothrow_probe", &[&f, "1000"], 1, "std").0.to_f32(), want, "nothrow_probe");
    let want = vec![x[3]; n];
    assert_eq!(both(&dir, "vector_at", &[&f, "3"], 1, "std").0.to_f32(), want, "vector_at");
}

/// `new` on the device takes the core's 1 MiB libc heap: a std::vector of
/// a million floats (4 MB) does not fit, and without exceptions operator
/// new stops the core with the abort report (error 10) naming the size,
/// not a null pointer written through; `new (std::nothrow)` returns null.
/// libc++'s other "throws" (`at()` past the end) are the abort report too
/// (error 99, libc++'s message).
#[test]
fn allocation_failure_and_library_throws_end_in_the_abort_report_on_the_device() {
    let dir = built("stdlib", QEMU);
    let x: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let f = npy_file("q_std_heap.npy", &f32s(&[8], &x)).display().to_string();
    let on_qemu = |op: &str, arg: &str| {
        let out = scratch("out").join(format!("std-{op}-{arg}.npy"));
        let _ = std::fs::remove_file(&out);
        let o = customop(&["run", &dir.display().to_string(), op, &f, arg, "-o", &out.display().to_string(), "--on", "qemu"]);
        (o, out)
    };
    let (o, _) = on_qemu("vector_fill", "1000000");
    let t = text(&o);
    assert_eq!(o.status.code(), Some(7), "{t}");
    assert!(t.contains("abort on core 0: error 10 (out of memory): operator new(4000000 bytes) found no room on the core's libc heap"), "{t}");
    let (o, out) = on_qemu("nothrow_probe", "1000000");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(npy::read(&out).unwrap().to_f32(), x.iter().map(|v| v - 1.0).collect::<Vec<_>>(), "null from new(std::nothrow)");
    let (o, _) = on_qemu("vector_at", "8");
    let t = text(&o);
    assert_eq!(o.status.code(), Some(7), "{t}");
    assert!(
        t.contains("error 99 (the C++ standard library stopped the kernel): out_of_range was thrown in -fno-exceptions mode with message \"vector\""),
        "{t}"
    );
}

/// A kernel that uses none of the C++ library links none of it (the
/// device runtime's `new`/`delete`, libc++'s compiled `std::sort`, the
/// abort paths): `--gc-sections` drops them, so its image is no larger
/// than before the library existed.
#[test]
fn a_kernel_without_the_standard_library_links_none_of_it() {
    let dir = built("relu2d", QEMU);
    let bytes = std::fs::read(dir.join("relu2d_qemu.elf")).unwrap();
    let elf = neuron_image::elf::Elf::parse(&bytes).unwrap();
    for sym in ["_Znwj", "_ZdlPv", "neuron_libcxx_abort", "__cxa_pure_virtual"] {
        assert!(!elf.symbols.contains_key(sym), "{sym} linked into a kernel that does not use it");
    }
    assert!(!elf.symbols.keys().any(|s| s.contains("__sort")), "libc++'s sort linked into a kernel that does not sort");
    // The check can fail: the stdlib kernel has them.
    let dir = built("stdlib", QEMU);
    let bytes = std::fs::read(dir.join("stdlib_qemu.elf")).unwrap();
    let elf = neuron_image::elf::Elf::parse(&bytes).unwrap();
    assert!(elf.symbols.contains_key("_Znwj") && elf.symbols.keys().any(|s| s.contains("__sort")), "the stdlib kernel links new and sort");
}

/// A header the device cannot have (streams, threads, files) fails the
/// device build with one message that says so, not libc++'s wall of
/// errors; the simulator side (the host's library) compiles it.
#[test]
fn an_unavailable_standard_header_is_one_clear_error() {
    let (k, s, o) = one_op_case(
        "iostream",
        "#include <iostream>\n#include <vector>\n#include <torch/torch.h>\n\
         torch::Tensor say(const torch::Tensor& t) { std::cout << t.numel() << std::endl; return t; }\n",
        "io",
        "say",
        "",
    );
    let r = customop(&["build", "--name", "io", "--compute", &k, "--shape", &s, "--out", &o, "--target", "qemu"]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(4), "{t}");
    assert!(t.contains("fatal error: \"<iostream> is not available on the device: the device has no streams or files"), "{t}");
    assert_eq!(t.matches("error:").count(), 1, "one message:\n{t}");
    assert!(t.contains("1 error generated"), "{t}");
}

/// The vendor's device library is C++14: the standard headers compile for
/// the device at `-std=c++14` (the user's `--cflags` come after ours) as
/// at the default C++17, and the flags reach clang (C++17's
/// `std::clamp` is refused at C++14).
#[test]
fn the_standard_headers_compile_for_the_device_at_cxx14_and_cxx17() {
    use customop::xtensa::toolchain::Toolchain;
    let tc = Toolchain::find().expect("the Xtensa toolchain");
    let dir = scratch("cxx14");
    let src = dir.join("std14.cpp");
    std::fs::write(
        &src,
        "#include <vector>\n#include <algorithm>\n#include <array>\n#include <numeric>\n#include <limits>\n#include <cmath>\n\
         #include <utility>\n#include <type_traits>\n\
         float f(int n) { std::vector<float> v(n, 1.5f); std::sort(v.begin(), v.end()); std::array<int, 2> a{{1, 2}};\n\
           return std::accumulate(v.begin(), v.end(), 0.0f) + std::sqrt(2.0f) + a[1] + std::numeric_limits<float>::epsilon()\n\
             + std::is_same<std::decay<const int&>::type, int>::value + std::max(1, 2) + std::make_pair(1, 2).first;\n\
         #ifdef WANT_CLAMP\n  return std::clamp(1, 2, 3);\n#endif\n}\n",
    )
    .unwrap();
    let include = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../include");
    for (std, clamp, ok) in [("-std=c++14", false, true), ("-std=c++17", true, true), ("-std=c++14", true, false)] {
        let mut user = vec![std.to_owned()];
        if clamp {
            user.push("-DWANT_CLAMP".into());
        }
        let obj = dir.join(format!("std14-{std}-{clamp}.o"));
        let r = tc.compile(&tc.flags(&include, &user), &src, &obj);
        assert_eq!(r.is_ok(), ok, "{std} clamp {clamp}: {r:?}");
    }
}

/// Every `std::` function of libc++'s `<cmath>`, in float and double,
/// and the functions the device `<math.h>` declares beyond C99 (`sincos`,
/// `exp10`, `lgamma_r`, ...), link against the device library: an object
/// calling them all has no undefined symbol the device runtime does not
/// define.
#[test]
fn every_cmath_function_links_on_the_device() {
    use customop::xtensa::{devlib, toolchain::Toolchain};
    let tc = Toolchain::find().expect("the Xtensa toolchain");
    let dir = scratch("cmath");
    let src = dir.join("all_cmath.cpp");
    let one = [
        "abs",
        "acos",
        "asin",
        "atan",
        "ceil",
        "cos",
        "cosh",
        "exp",
        "fabs",
        "floor",
        "log",
        "log10",
        "sin",
        "sinh",
        "sqrt",
        "tan",
        "tanh",
        "acosh",
        "asinh",
        "atanh",
        "cbrt",
        "erf",
        "erfc",
        "exp2",
        "expm1",
        "ilogb",
        "lgamma",
        "llrint",
        "llround",
        "log1p",
        "log2",
        "logb",
        "lrint",
        "lround",
        "nearbyint",
        "rint",
        "round",
        "tgamma",
        "trunc",
    ];
    let two = ["atan2", "fmod", "pow", "copysign", "fdim", "fmax", "fmin", "hypot", "nextafter", "remainder"];
    let mut body =
        String::from("#include <cmath>\ndouble all(float xf, float yf, double xd, double yd, int n, long l) {\n  double s = 0; int e; float fi; double di;\n");
    for f in one {
        body += &format!("  s += std::{f}(xf) + std::{f}(xd);\n");
    }
    for f in two {
        body += &format!("  s += std::{f}(xf, yf) + std::{f}(xd, yd);\n");
    }
    body += "  s += std::fma(xf, yf, xf) + std::fma(xd, yd, xd) + std::frexp(xf, &e) + std::frexp(xd, &e) + std::ldexp(xf, n) + std::ldexp(xd, n);\n\
      s += std::modf(xf, &fi) + std::modf(xd, &di) + std::remquo(xf, yf, &e) + std::remquo(xd, yd, &e) + std::scalbn(xf, n) + std::scalbln(xd, l);\n\
      s += std::hypot(xd, yd, xd) + std::nan(\"\") + std::nanf(\"\") + std::nexttoward(xf, (long double)yd) + std::fpclassify(xf);\n\
      float sf, cf; double sd, cd; sincosf(xf, &sf, &cf); sincos(xd, &sd, &cd);\n\
      s += sf + cf + sd + cd + exp10f(xf) + exp10(xd) + lgammaf_r(xf, &e) + lgamma_r(xd, &e) + roundevenf(xf) + roundeven(xd);\n\
      s += fmaximumf(xf, yf) + fminimum(xd, yd) + fmaximum_numf(xf, yf) + fminimum_num(xd, yd) + j0f(xf) + j1(xd) + jnf(n, xf) + yn(n, xd) + y0f(xf) + y1(xd);\n  return s;\n}\n";
    std::fs::write(&src, body).unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../include");
    let obj = dir.join("all_cmath.o");
    tc.compile(&tc.flags(&include, &[]), &src, &obj).unwrap();
    let nm = |args: &[&str], file: &Path| -> Vec<String> {
        let o = std::process::Command::new("xtensa-lx106-elf-nm").args(args).arg(file).output().expect("xtensa-lx106-elf-nm");
        String::from_utf8_lossy(&o.stdout).lines().filter_map(|l| l.split_whitespace().last().map(str::to_owned)).collect()
    };
    let undefined = nm(&["-u"], &obj);
    for f in ["lgammaf", "frexp", "sincosf", "exp10", "lgamma_r", "yn"] {
        assert!(undefined.iter().any(|s| s == f), "{f}: {undefined:?}");
    }
    let archive = devlib::archive(devlib::Runtime::Qemu).unwrap();
    let defined: std::collections::HashSet<String> = nm(&["--defined-only"], &archive).into_iter().collect();
    let missing: Vec<&String> = undefined.iter().filter(|s| !defined.contains(*s)).collect();
    assert!(missing.is_empty(), "<cmath> functions the device library lacks: {missing:?}");
}

/// Hardening is off by default (as the vendor's libc++ and the host's
/// library); a kernel that turns libc++'s checks on for the device gets a
/// failed check as the abort report with libc++'s message (the *enforce*
/// semantic of our `__config_site`), not a bare trap. The in-range call
/// runs as usual.
#[test]
fn libcxx_hardening_turned_on_ends_a_failed_check_in_the_abort_report() {
    let (k, s, o) = one_op_case(
        "hardening",
        "#include <vector>\n#include <torch/torch.h>\n\
         torch::Tensor pick(const torch::Tensor& t, int64_t i) {\n\
           std::vector<float> v(4, 2.5f);\n\
           torch::Tensor o = torch::empty(t.sizes(), torch::kFloat);\n\
           auto b = o.accessor<float, 1>();\n\
           for (int64_t k = 0; k < t.size(0); k++) b[k] = v[static_cast<size_t>(i)];\n\
           return o;\n\
         }\n",
        "h",
        "pick",
        ", int64_t i",
    );
    customop_ok(&[
        "build",
        "--name",
        "h",
        "--compute",
        &k,
        "--shape",
        &s,
        "--out",
        &o,
        "--target",
        "qemu",
        "--cflags",
        "-D_LIBCPP_HARDENING_MODE=_LIBCPP_HARDENING_MODE_FAST",
    ]);
    let x = npy_file("q_hard.npy", &f32s(&[3], &[0.0; 3])).display().to_string();
    let y = scratch("out").join("hard.npy").display().to_string();
    customop_ok(&["run", &o, "pick", &x, "1", "-o", &y, "--on", "qemu"]);
    assert_eq!(npy::read(Path::new(&y)).unwrap().to_f32(), [2.5; 3]);
    let r = customop(&["run", &o, "pick", &x, "4", "-o", &y, "--on", "qemu"]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(7), "{t}");
    assert!(t.contains("error 99 (the C++ standard library stopped the kernel): ") && t.contains("vector[] index out of bounds"), "{t}");
}

/// Global constructors: the device image does not run them (the loader
/// calls `register_funcs` and the launchers only), the simulator's dlopen
/// does, so a namespace-scope object with a constructor would be zeros on
/// the device only. The device build refuses it, naming the source; the
/// twin with a function-local static runs on both
/// (`the_standard_library_works_in_a_device_kernel_as_on_the_simulator`,
/// op `static_scratch`).
#[test]
fn a_global_object_with_a_constructor_is_refused_by_the_device_build() {
    let (k, s, o) = one_op_case(
        "global_ctor",
        "#include <torch/torch.h>\n\
         struct Table { float v[4]; Table() { for (int i = 0; i < 4; i++) v[i] = i * 0.5f; } };\n\
         static Table table;\n\
         torch::Tensor k(const torch::Tensor& t) {\n\
           torch::Tensor o = torch::empty(t.sizes(), torch::kFloat);\n\
           auto a = t.accessor<float, 1>(); auto b = o.accessor<float, 1>();\n\
           for (int64_t i = 0; i < t.size(0); i++) b[i] = a[i] + table.v[i % 4];\n\
           return o;\n\
         }\n",
        "g",
        "k",
        "",
    );
    let r = customop(&["build", "--name", "g", "--compute", &k, "--shape", &s, "--out", &o, "--target", "qemu"]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(4), "{t}");
    assert!(t.contains("k.cpp: a global object needs code run when the image loads") && t.contains("function-local `static`"), "{t}");
    // The simulator alone builds it (dlopen runs the constructor there).
    customop_ok(&["build", "--name", "g", "--compute", &k, "--shape", &s, "--out", &o]);
}

/// `--on both` with a kernel the simulator's sanitizer fails and the
/// emulated device runs (reading memory nothing wrote is no status there):
/// the simulator's finding, shown next to the device's report, not a
/// disagreement.
#[test]
fn a_sanitizer_finding_on_both_is_the_simulators_beside_the_devices_report() {
    let dir = built("sanitizer", QEMU);
    let x: Vec<f32> = (0..8).map(|i| i as f32 - 3.0).collect();
    let f = npy_file("q_sanitizer_x.npy", &f32s(&[8], &x)).display().to_string();
    let o =
        customop(&["run", &dir.display().to_string(), "empty_accumulate", &f, "-o", &scratch("out").join("q_san.npy").display().to_string(), "--on", "both"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(7), "{t}");
    // The emulated cores check their loads too: both find the read, each
    // in its words (the device's with the kernel's line).
    assert!(t.contains("on both the simulator and the emulated cluster"), "{t}");
    assert!(t.contains("uninitialised read of an empty tensor [8]"), "{t}");
    assert!(t.contains("emulated-core check: error 115: op `empty_accumulate`, core 0: uninitialised read of a torch::empty tensor"), "{t}");
    assert!(t.to_lowercase().contains("core 0"), "{t}");
    // Its correct twin agrees bit for bit.
    let (out, _) = both(&dir, "zeros_accumulate", &[&f], 1, "sanitizer");
    assert_eq!(out.to_f32(), x);
}

/// A store through a wild pointer on the emulated core: the board's
/// exception line, then the cause in words and the kernel's file:line
/// (from the image's debug information); on the simulator the same
/// kernel crashes with the address.
#[test]
fn a_wild_store_names_its_cause_and_function_on_the_emulated_core() {
    let dir = built("device_crash", QEMU).display().to_string();
    let x = npy_file("q_wild_x.npy", &f32s(&[4], &[1.0, 2.0, 3.0, 4.0])).display().to_string();
    let out = scratch("out").join("q-wild.npy").display().to_string();
    let r = customop(&["run", &dir, "store_wild", &x, "-o", &out, "--on", "qemu"]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(7), "{t}");
    let src = kernels().join("device_crash/null_store.cpp");
    let line = std::fs::read_to_string(&src).unwrap().lines().position(|l| l.contains("// WILD STORE")).unwrap() + 1;
    let place = format!("where: {}:{line} in store_wild(at::Tensor const&)", src.display());
    for want in [
        "EXCCAUSE=15 (LoadStorePIFAddrError)",
        "what happened: a load or store at an address no memory answers (a null or wild pointer) (address 0x1c)",
        &place,
    ] {
        assert!(t.contains(want), "no {want:?} in:\n{t}");
    }
    let r = customop(&["run", &dir, "store_wild", &x, "-o", &out]);
    assert!(r.status.code() == Some(12) && text(&r).contains("at address 0x1c"), "{}", text(&r));
}
