//! Every refusal of `customop build` and `customop run`: a clear message
//! naming the file and op, and a stable exit status (see
//! `customop::ErrorKind::exit_code`, documented in docs/kernel-guide.md).

mod common;
use common::*;
use customop::npy::Array;
use std::path::PathBuf;

const HEADERS: &str = "#include <torch/torch.h>\n#include \"torchneuron/register.h\"\n";

/// Writes `compute` and `shape` sources for case `case`; returns their paths.
fn sources(case: &str, compute: &str, shape: &str) -> (PathBuf, PathBuf) {
    let d = scratch("refusals").join(case);
    std::fs::create_dir_all(&d).unwrap();
    let (c, s) = (d.join("kernel.cpp"), d.join("shape.cpp"));
    std::fs::write(&c, format!("#include <torch/torch.h>\n{compute}")).unwrap();
    std::fs::write(&s, format!("{HEADERS}{shape}")).unwrap();
    (c, s)
}

/// Builds a case; returns the exit status and the message.
fn build_case(case: &str, compute: &str, shape: &str, extra: &[&str]) -> (i32, String) {
    let (c, s) = sources(case, compute, shape);
    let out = scratch("refusals").join(case).join("build");
    let (c, s, o) = (c.display().to_string(), s.display().to_string(), out.display().to_string());
    let mut args = vec!["build", "--name", case, "--compute", &c, "--shape", &s, "--out", &o];
    args.extend_from_slice(extra);
    let r = customop(&args);
    (r.status.code().unwrap_or(-1), text(&r))
}

/// Builds case `case` (its build must succeed, with `build_extra`), then
/// runs `op` on one tensor `x` with `run_extra`; returns the run and the
/// output's path.
fn build_and_run(case: &str, compute: &str, shape: &str, build_extra: &[&str], op: &str, x: &Array, run_extra: &[&str]) -> (std::process::Output, PathBuf) {
    let (rc, msg) = build_case(case, compute, shape, build_extra);
    assert_eq!(rc, 0, "{msg}");
    let dir = scratch("refusals").join(case).join("build").display().to_string();
    let f = npy_file(&format!("{case}_x.npy"), x).display().to_string();
    let out = scratch("out").join(format!("{case}.npy"));
    let o = out.display().to_string();
    let mut args = vec!["run", dir.as_str(), op, f.as_str(), "-o", o.as_str()];
    args.extend_from_slice(run_extra);
    (customop(&args), out)
}

const RELU: &str = "torch::Tensor relu(const torch::Tensor& t) { return t; }\n";
const SHAPE_FN: &str = "torch::Tensor sh(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }\n";

#[test]
fn more_than_10_ops_is_refused() {
    let defs: String = (0..11).map(|i| format!("    m.def(\"op{i}\", &sh, \"relu\");\n")).collect();
    let (rc, msg) = build_case("many_ops", RELU, &format!("{SHAPE_FN}NEURON_LIBRARY(lots, m) {{\n{defs}}}\n"), &[]);
    assert_eq!(rc, 3, "{msg}");
    assert!(msg.contains("shape.cpp:15: op `op10` is op number 11 of library `lots`: a custom-op library has at most 10 ops"), "{msg}");
}

#[test]
fn more_than_10_arguments_is_refused() {
    let params: Vec<String> = (0..11).map(|i| format!("const torch::Tensor& t{i}")).collect();
    let compute = format!("torch::Tensor wide({}) {{ return t0; }}\n", params.join(", "));
    let (rc, msg) = build_case("many_args", &compute, &format!("{SHAPE_FN}NEURON_LIBRARY(l, m) {{ m.def(\"wide\", &sh, \"wide\"); }}\n"), &[]);
    assert_eq!(rc, 3, "{msg}");
    assert!(msg.contains("kernel.cpp:2: compute function `wide` of op `wide` takes 11 arguments: at most 10"), "{msg}");
}

#[test]
fn an_argument_kind_outside_the_list_is_refused() {
    let compute = "torch::Tensor gate(const torch::Tensor& t, bool on) { return t; }\n";
    let (rc, msg) = build_case("bad_kind", compute, &format!("{SHAPE_FN}NEURON_LIBRARY(l, m) {{ m.def(\"gate\", &sh, \"gate\"); }}\n"), &[]);
    assert_eq!(rc, 3, "{msg}");
    assert!(
        msg.contains("kernel.cpp:2: compute function `gate` of op `gate`: argument 2 `bool on` is not a supported kind (torch::Tensor, torch::Scalar, double, int64_t, int, float, long long)"),
        "{msg}"
    );
}

#[test]
fn a_return_type_other_than_one_tensor_is_refused() {
    for (case, ret, spelled) in
        [("ret_void", "void", "void"), ("ret_tuple", "std::tuple<torch::Tensor, torch::Tensor>", "std::tuple<torch::Tensor, torch::Tensor>")]
    {
        let compute = format!("{ret} two(const torch::Tensor& t) {{ }}\n");
        let (rc, msg) = build_case(case, &compute, &format!("{SHAPE_FN}NEURON_LIBRARY(l, m) {{ m.def(\"two\", &sh, \"two\"); }}\n"), &[]);
        assert_eq!(rc, 3, "{msg}");
        assert!(
            msg.contains(&format!("kernel.cpp:2: compute function `two` of op `two` returns `{spelled}`: a compute function returns exactly one tensor")),
            "{msg}"
        );
    }
}

#[test]
fn a_compute_function_the_sources_do_not_define_is_refused() {
    // Declared but not defined, and a same-named function in a namespace:
    // neither is a definition at global scope.
    let compute = "torch::Tensor relu_fwd(const torch::Tensor& t);\nnamespace k { torch::Tensor relu_fwd(const torch::Tensor& t) { return t; } }\n";
    let (rc, msg) = build_case("no_compute", compute, &format!("{SHAPE_FN}NEURON_LIBRARY(l, m) {{\n  m.def(\"relu\", &sh, \"relu_fwd\");\n}}\n"), &[]);
    assert_eq!(rc, 3, "{msg}");
    assert!(msg.contains("shape.cpp:5: op `relu`: compute function `relu_fwd` is not defined at global scope in the compute sources ("), "{msg}");
    assert!(msg.contains("kernel.cpp)"), "{msg}");
}

#[test]
fn a_shape_function_that_does_not_exist_is_refused() {
    let (rc, msg) = build_case("no_shape", RELU, "NEURON_LIBRARY(l, m) {\n  m.def(\"relu\", &relu_shape, \"relu\");\n}\n", &[]);
    assert_eq!(rc, 3, "{msg}");
    assert!(msg.contains("shape.cpp:4: op `relu`: shape function `relu_shape` is not defined at global scope in the shape sources"), "{msg}");
}

#[test]
fn a_malformed_or_missing_neuron_library_is_refused() {
    let (rc, msg) = build_case("malformed", RELU, &format!("{SHAPE_FN}NEURON_LIBRARY(l, m) {{\n  m.def(\"relu\", sh, relu);\n}}\n"), &[]);
    assert_eq!(rc, 3, "{msg}");
    assert!(msg.contains("shape.cpp:5: malformed NEURON_LIBRARY: expected `m.def(\"op_name\", &shape_fn, \"compute_fn\");`"), "{msg}");
    let (rc, msg) = build_case("missing", RELU, SHAPE_FN, &[]);
    assert_eq!(rc, 3, "{msg}");
    assert!(msg.contains("no NEURON_LIBRARY block in the shape sources"), "{msg}");
}

#[test]
fn compiler_errors_come_with_the_compilers_diagnostics() {
    let compute = "torch::Tensor relu(const torch::Tensor& t) { return t.no_such_method(); }\n";
    let (rc, msg) = build_case("bad_cpp", compute, &format!("{SHAPE_FN}NEURON_LIBRARY(l, m) {{ m.def(\"relu\", &sh, \"relu\"); }}\n"), &[]);
    assert_eq!(rc, 4, "{msg}");
    assert!(msg.contains("compiling ") && msg.contains("kernel.cpp failed"), "{msg}");
    assert!(msg.contains("no_such_method"), "g++'s own diagnostic is shown:\n{msg}");
}

#[test]
fn an_unknown_target_is_refused() {
    let (rc, msg) = build_case("target_x", RELU, SHAPE_FN, &["--target", "x86"]);
    assert_eq!(rc, 2, "{msg}");
    assert!(msg.contains("unknown target `x86` (expected sim, qemu or q7)"), "{msg}");
}

#[test]
fn run_refuses_arguments_that_do_not_fit_the_op() {
    let dir = built("scalar_args", &[]);
    let d = dir.display().to_string();
    let x = npy_file("refuse_x.npy", &f32s(&[4], &[1.0, 2.0, 3.0, 4.0])).display().to_string();
    let out = scratch("out").join("refused.npy").display().to_string();
    let cases: [(&[&str], i32, &str); 7] = [
        (&["affine", &x, "1.5"], 6, "op `affine` takes 3 argument(s) (const torch::Tensor&, const torch::Scalar&, int64_t), 2 given"),
        (
            &["affine", &x, "1.5", "9223372036854775808"],
            6,
            "argument 3 of op `affine` (int64_t) is a 64-bit integer: `9223372036854775808` is outside its range [-9223372036854775808, 9223372036854775807]",
        ),
        (&["affine", "2.0", "1.5", "3"], 6, "argument 1 of op `affine` (const torch::Tensor&) is a tensor: give a .npy file, not the number 2.0"),
        (&["affine", &x, "1.5", "3.5"], 6, "argument 3 of op `affine` (int64_t) is a 64-bit integer: `3.5` is not an integer"),
        (&["affine", &x, "abc", "3"], 6, "argument 2 of op `affine` (const torch::Scalar&) is a scalar: give a number, not `abc`"),
        (&["nope", &x], 6, "library `scalar_args` has no op `nope` (its ops: affine, offset_int)"),
        (&["affine", "/nonexistent.npy", "1", "2"], 5, "cannot read /nonexistent.npy"),
    ];
    for (args, code, want) in cases {
        let mut a = vec!["run", d.as_str()];
        a.extend_from_slice(args);
        a.extend_from_slice(&["-o", &out]);
        let r = customop(&a);
        let t = text(&r);
        assert_eq!(r.status.code(), Some(code), "{args:?}: {t}");
        assert!(t.contains(want), "{args:?}: want `{want}` in:\n{t}");
    }
    // A float64 file is not a dtype that marshals.
    let f64_file = scratch("npy").join("f64.npy");
    let mut b = customop::npy::render(&f32s(&[2], &[1.0, 2.0])).unwrap();
    let at = b.windows(3).position(|w| w == b"<f4").unwrap();
    b[at..at + 3].copy_from_slice(b"<f8");
    std::fs::write(&f64_file, b).unwrap();
    let r = customop(&["run", &d, "affine", &f64_file.display().to_string(), "1", "2", "-o", &out]);
    assert_eq!(r.status.code(), Some(6), "{}", text(&r));
    assert!(text(&r).contains("dtype float64 ('<f8') does not marshal"), "{}", text(&r));
}

#[test]
fn a_failing_kernel_fails_the_run_with_the_reason() {
    // The kernel returns an int32 tensor where its shape function said float.
    let compute = "torch::Tensor wrong(const torch::Tensor& t) { return torch::zeros(t.sizes(), torch::kInt); }\n";
    let (c, s) = sources("wrong_dtype", compute, &format!("{SHAPE_FN}NEURON_LIBRARY(l, m) {{ m.def(\"wrong\", &sh, \"wrong\"); }}\n"));
    let dir = scratch("refusals").join("wrong_dtype").join("build").display().to_string();
    customop_ok(&["build", "--name", "wrong_dtype", "--compute", &c.display().to_string(), "--shape", &s.display().to_string(), "--out", &dir]);
    let x = npy_file("wrong_x.npy", &f32s(&[3], &[1.0, 2.0, 3.0])).display().to_string();
    let out = scratch("out").join("wrong.npy");
    let _ = std::fs::remove_file(&out);
    let r = customop(&["run", &dir, "wrong", &x, "-o", &out.display().to_string()]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(7), "{t}");
    assert!(t.contains("op `wrong` failed on 1 core(s): error 35: returned tensor dtype differs from the output descriptor"), "{t}");
    assert!(t.contains("core 0:"), "the report follows:\n{t}");
    assert!(!out.exists(), "no output written for a failed run");
}

#[test]
fn a_shape_function_with_other_parameters_than_the_compute_function_is_refused_at_build() {
    // The compute function takes two tensors, the shape function one.
    let compute = "torch::Tensor two(const torch::Tensor& a, const torch::Tensor& b) { return a; }\n";
    let (c, s) = sources("shape_arity", compute, &format!("{SHAPE_FN}NEURON_LIBRARY(l, m) {{ m.def(\"two\", &sh, \"two\"); }}\n"));
    let dir = scratch("refusals").join("shape_arity").join("build").display().to_string();
    let r = customop(&["build", "--name", "shape_arity", "--compute", &c.display().to_string(), "--shape", &s.display().to_string(), "--out", &dir]);
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    let want = format!("op `two`: shape function `sh` ({}:", s.display());
    assert!(text(&r).contains(&want) && text(&r).contains(&format!("takes 1 argument(s), compute function `two` ({}:2) takes 2", c.display())), "{}", text(&r));
    // With a matching shape function it builds, and the core count is checked.
    let shape2 = "torch::Tensor sh(torch::Tensor t, torch::Tensor u) { return torch::zeros(t.sizes(), torch::kFloat); }\n\
                  NEURON_LIBRARY(l, m) { m.def(\"two\", &sh, \"two\"); }\n";
    let (c, s) = sources("shape_arity2", compute, shape2);
    let dir = scratch("refusals").join("shape_arity2").join("build").display().to_string();
    customop_ok(&["build", "--name", "shape_arity", "--compute", &c.display().to_string(), "--shape", &s.display().to_string(), "--out", &dir]);
    let x = npy_file("arity_x.npy", &f32s(&[2], &[1.0, 2.0])).display().to_string();
    let out = scratch("out").join("arity.npy").display().to_string();
    for bad in ["9", "2", "0"] {
        let r = customop(&["run", &dir, "two", &x, &x, "-o", &out, "--cores", bad]);
        assert_eq!(r.status.code(), Some(2), "{}", text(&r));
        assert!(text(&r).contains(&format!("--cores {bad}: an op runs on 1 core or on all 8 GPSIMD cores")), "{}", text(&r));
    }
    // A build without --multicore runs on one core: eight is refused before running.
    let r = customop(&["run", &dir, "two", &x, &x, "-o", &out, "--cores", "8"]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(text(&r).contains("was built without --multicore: a single-core op runs on 1 core"), "{}", text(&r));
}

#[test]
fn a_shape_function_parameter_of_another_kind_is_refused_at_build() {
    let compute = "torch::Tensor two(const torch::Tensor& a, const torch::Tensor& b) { return a; }\n";
    let shape = "torch::Tensor sh2(torch::Tensor t, double k) { return torch::zeros(t.sizes(), torch::kFloat); }\n\
                 NEURON_LIBRARY(l, m) { m.def(\"two\", &sh2, \"two\"); }\n";
    let (c, s) = sources("shape_kind", compute, shape);
    let dir = scratch("refusals").join("shape_kind").join("build").display().to_string();
    let r = customop(&["build", "--name", "shape_kind", "--compute", &c.display().to_string(), "--shape", &s.display().to_string(), "--out", &dir]);
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    let t = text(&r);
    assert!(t.contains(&format!("op `two`: argument 2 is `double` in shape function `sh2` ({}:", s.display())), "{t}");
    assert!(t.contains(&format!("but `const torch::Tensor&` in compute function `two` ({}:2)", c.display())), "{t}");
}

/// A kernel that crashes the simulator (here the vendor docs' classic: a
/// `tcm_malloc` larger than the pool returns null, used unchecked) still
/// kills the process, as any native code would, but first says so: which
/// core, which op, which signal and the faulting address, as the
/// device's exception report does under QEMU.
#[test]
fn a_kernel_that_crashes_the_simulator_is_named_before_the_process_dies() {
    let compute = "torch::Tensor unchecked(const torch::Tensor& t) {\n    \
                   float* volatile buf = static_cast<float*>(torch::neuron::tcm_malloc(1 << 20));  // past the pool: null\n    \
                   buf[4] = static_cast<float>(t.numel());\n    \
                   return t;\n}\n";
    let shape = format!("{SHAPE_FN}NEURON_LIBRARY(crash_ops, m) {{ m.def(\"unchecked\", &sh, \"unchecked\"); }}\n");
    let (o, _) = build_and_run("crash", compute, &shape, &[], "unchecked", &f32s(&[4], &[1.0, 2.0, 3.0, 4.0]), &[]);
    // The run's process dies of the SIGSEGV; the tool reports it (exit 12).
    assert_eq!(o.status.code(), Some(12), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("customop: op `unchecked`: the kernel on 1 core(s) crashed (SIGSEGV):"), "{t}");
    assert!(
        t.contains("neuroncustomop: abort on core 0: the kernel crashed in op unchecked: SIGSEGV (a load or store at an address nothing is mapped at: a null or wild pointer) at address 0x10"),
        "{t}"
    );
}

/// Output into a pipe nobody reads any more (`customop ... | head -1`)
/// ends the process by SIGPIPE, quietly, as it does `cat`; it used to
/// panic on the failed write and abort.
#[test]
fn a_closed_output_pipe_ends_the_process_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_customop")).arg("help").stdout(writer.try_clone().unwrap()).stderr(writer).status().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status}");
}

/// `x.size(1)` of a 1-D tensor, where libtorch throws "dimension out of
/// range": the run fails with error 96 first, not with the error the 0
/// it gets leads to later (here `empty({n, 0})`'s 45).
#[test]
fn a_dimension_past_the_tensors_rank_fails_the_run_naming_it() {
    let compute = "torch::Tensor rows(const torch::Tensor& t) {\n    \
                   torch::Tensor out = torch::empty({t.size(0), t.size(1)}, torch::kFloat);\n    \
                   auto a = t.accessor<float, 2>();\n    \
                   auto o = out.accessor<float, 2>();\n    \
                   for (int64_t i = 0; i < t.size(0); i++)\n        \
                   for (int64_t j = 0; j < a.size(1); j++) o[i][j] = a[i][j];\n    \
                   return out;\n}\n";
    let shape = format!("{SHAPE_FN}NEURON_LIBRARY(dim_ops, m) {{ m.def(\"rows\", &sh, \"rows\"); }}\n");
    let (o, _) = build_and_run("dim_range", compute, &shape, &[], "rows", &f32s(&[4], &[1.0, 2.0, 3.0, 4.0]), &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(7), "{t}");
    assert!(t.contains("failed on 1 core(s): error 96: dimension out of range"), "{t}");
}

/// A multicore op whose cores each return a tensor of their own (instead
/// of writing their slices of `get_dst_tensor()`): each return copies the
/// whole tensor over the output, racing the others. The verdict (output
/// not covered) says so.
#[test]
fn cores_returning_tensors_of_their_own_are_named_in_the_verdict() {
    let compute = "#include <neuron/neuron-utils.hpp>\n\
                   torch::Tensor own(const torch::Tensor& x) {\n    \
                   torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);\n    \
                   const int64_t per = x.numel() / get_cpu_count(), b = per * get_cpu_id();\n    \
                   float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * per);\n    \
                   x.tcm_accessor().tensor_to_tcm<float>(buf, b, per);\n    \
                   out.tcm_accessor().tcm_to_tensor<float>(buf, b, per);\n    \
                   torch::neuron::tcm_free(buf);\n    \
                   return out;\n}\n";
    let shape = format!("{SHAPE_FN}NEURON_LIBRARY(own_ops, m) {{ m.def(\"own\", &sh, \"own\"); }}\n");
    let (o, _) = build_and_run("own_output", compute, &shape, &["--multicore"], "own", &f32s(&[64], &[1.5; 64]), &["--cores", "8"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(7), "{t}");
    assert!(t.contains("error 107"), "{t}");
    assert!(
        t.contains("8 of the 8 cores returned a tensor of their own, each copied whole over the output: on several cores each writes its slice of get_dst_tensor() and returns that"),
        "{t}"
    );
}

/// Tensors larger than a core's 5 MiB HBM heap: the shape function runs
/// on the host as the vendor's does, with no device heap bounding the
/// inputs it is given or the output it makes (it failed with "returned
/// an undefined tensor" from 5 MiB on). The kernel writes through
/// `get_dst_tensor()`, as a kernel with outputs this large must.
#[test]
fn shape_functions_take_tensors_larger_than_the_device_heap() {
    let compute = "torch::Tensor twice(const torch::Tensor& x) {\n    \
                   torch::Tensor out = get_dst_tensor();\n    \
                   float* buf = static_cast<float*>(torch::neuron::tcm_malloc(4096 * sizeof(float)));\n    \
                   for (int64_t at = 0; at < x.numel(); at += 4096) {\n        \
                   x.tcm_accessor().tensor_to_tcm<float>(buf, at, 4096);\n        \
                   for (int k = 0; k < 4096; k++) buf[k] *= 2.0f;\n        \
                   out.tcm_accessor().tcm_to_tensor<float>(buf, at, 4096);\n    \
                   }\n    \
                   torch::neuron::tcm_free(buf);\n    \
                   return out;\n}\n";
    let shape = format!("{SHAPE_FN}NEURON_LIBRARY(big_ops, m) {{ m.def(\"twice\", &sh, \"twice\"); }}\n");
    // 12 MiB in, 12 MiB out.
    let n = 3 << 20;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let (o, out) = build_and_run("big_shape", compute, &shape, &[], "twice", &f32s(&[1024, (n / 1024) as u64], &x), &[]);
    assert!(o.status.success(), "{}", text(&o));
    let y = customop::npy::read(&out).unwrap().to_f32();
    assert!(y.iter().zip(&x).all(|(a, b)| *a == 2.0 * b), "every element doubled");
}

/// A shape function whose factory fails (here a zero dimension) gives an
/// undefined tensor; the message says which error the factory hit.
#[test]
fn a_shape_function_whose_factory_fails_says_why() {
    let shape = "torch::Tensor zero_dim(torch::Tensor t) { return torch::zeros({t.size(0), 0}, torch::kFloat); }\n\
                 NEURON_LIBRARY(zd_ops, m) { m.def(\"relu\", &zero_dim, \"relu\"); }\n";
    let (o, _) = build_and_run("zero_dim_shape", RELU, shape, &[], "relu", &f32s(&[4], &[1.0, 2.0, 3.0, 4.0]), &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(8), "{t}");
    assert!(t.contains("returned an undefined tensor (a factory failed: a shape entry is zero or the element count overflows)"), "{t}");
}
