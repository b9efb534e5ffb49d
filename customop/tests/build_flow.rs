//! `customop build` beyond the kernels: the rebuild cache, `-DSTACK_SIZE`,
//! the generated sources and schema, several compute and shape sources,
//! and a shape function that fails.

mod common;
use common::*;
use std::path::{Path, PathBuf};

fn copy_kernel(kernel: &str, to: &str) -> PathBuf {
    let d = scratch("flow").join(to);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    for e in std::fs::read_dir(kernels().join(kernel)).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, d.join(p.file_name().unwrap())).unwrap();
    }
    d
}

fn build_dir(src: &Path, compute: &str, out: &Path, extra: &[&str]) -> String {
    let (c, s, o) = (src.join(compute).display().to_string(), src.join("shape.cpp").display().to_string(), out.display().to_string());
    let mut a = vec!["build", "--name", "flow", "--compute", c.as_str(), "--shape", s.as_str(), "--out", o.as_str()];
    a.extend_from_slice(extra);
    customop_ok(&a)
}

#[test]
fn rebuild_skips_what_is_unchanged_and_recompiles_what_changed() {
    let src = copy_kernel("stream", "cache_src");
    let out = src.join("build");
    std::fs::write(src.join("factor.h"), "#pragma once\nconstexpr float kFactor = 2.0f;\n").unwrap();
    let kernel = std::fs::read_to_string(src.join("scale.cpp")).unwrap();
    let with_header = kernel.replace("#include <torch/torch.h>", "#include <torch/torch.h>\n#include \"factor.h\"").replace("* 2.0f", "* kFactor");
    std::fs::write(src.join("scale.cpp"), &with_header).unwrap();
    let t = build_dir(&src, "scale.cpp", &out, &[]);
    assert!(t.contains("4 source(s) compiled, 0 cached)"), "{t}");
    let t = build_dir(&src, "scale.cpp", &out, &[]);
    assert!(t.contains("0 source(s) compiled, 4 cached, not relinked)"), "{t}");
    // A header the compute source includes changed: only it recompiles.
    std::fs::write(src.join("factor.h"), "#pragma once\nconstexpr float kFactor = 3.0f;\n").unwrap();
    let t = build_dir(&src, "scale.cpp", &out, &[]);
    assert!(t.contains("1 source(s) compiled, 3 cached)"), "{t}");
    let x = npy_file("cache_x.npy", &f32s(&[10], &values(10, -1.0, 1.0, 11)));
    let (y, _) = run_op(&out, "scale_stream", &[&x.display().to_string()], 1, "cache");
    let want: Vec<f32> = values(10, -1.0, 1.0, 11).iter().map(|v| v * 3.0 + 1.0).collect();
    assert_eq!(y.to_f32(), want, "the rebuilt library runs the changed code");
    // Other flags: everything recompiles.
    let t = build_dir(&src, "scale.cpp", &out, &["--cflags", "-DUNUSED_FLAG=1"]);
    assert!(t.contains("4 source(s) compiled, 0 cached)"), "{t}");
    // One more compute source (all others cached): the library is relinked
    // and has its op.
    std::fs::write(src.join("extra.cpp"), "#include <torch/torch.h>\ntorch::Tensor extra_fn(const torch::Tensor& t) { return t; }\n").unwrap();
    let shape = std::fs::read_to_string(src.join("shape.cpp")).unwrap();
    std::fs::write(
        src.join("shape2.cpp"),
        shape
            .replace("stream_ops", "extra_ops")
            .replace("\"scale_stream\", &scale_shape, \"scale_stream\"", "\"extra\", &scale_shape2, \"extra_fn\"")
            .replace("scale_shape(", "scale_shape2("),
    )
    .unwrap();
    let p = |f: &str| src.join(f).display().to_string();
    let t = customop_ok(&[
        "build",
        "--name",
        "flow",
        "--compute",
        &p("scale.cpp"),
        "--compute",
        &p("extra.cpp"),
        "--shape",
        &p("shape.cpp"),
        "--shape",
        &p("shape2.cpp"),
        "--out",
        &out.display().to_string(),
        "--cflags",
        "-DUNUSED_FLAG=1",
    ]);
    assert!(t.contains("2 op(s): scale_stream, extra") && !t.contains("not relinked"), "{t}");
    let (y, _) = run_op(&out, "extra", &[&x.display().to_string()], 1, "cache");
    assert_eq!(y.to_f32(), values(10, -1.0, 1.0, 11));
    // A source that defines no op changes neither generated file, but the
    // set of objects: relinked all the same.
    std::fs::write(src.join("helper.cpp"), "int customop_test_helper(int x) { return x + 1; }\n").unwrap();
    let t = customop_ok(&[
        "build",
        "--name",
        "flow",
        "--compute",
        &p("scale.cpp"),
        "--compute",
        &p("extra.cpp"),
        "--compute",
        &p("helper.cpp"),
        "--shape",
        &p("shape.cpp"),
        "--shape",
        &p("shape2.cpp"),
        "--out",
        &out.display().to_string(),
        "--cflags",
        "-DUNUSED_FLAG=1",
    ]);
    assert!(t.contains("1 source(s) compiled, 6 cached)") && !t.contains("not relinked"), "{t}");
}

#[test]
fn stack_size_define_reaches_the_launcher() {
    let src = copy_kernel("stream", "stack_src");
    let out = src.join("build");
    // Above the 4 MiB maximum: the launcher's one abort, naming the error.
    build_dir(&src, "scale.cpp", &out, &["--cflags", "-DSTACK_SIZE=5000000"]);
    let generated = std::fs::read_to_string(out.join("customop-build/ops.cpp")).unwrap();
    assert!(generated.contains("switch_stack_or_call_wrapper(scale_stream_wrapper, STACK_SIZE)"), "{generated}");
    let x = npy_file("stack_x.npy", &f32s(&[4], &[1.0, 2.0, 3.0, 4.0])).display().to_string();
    let r = customop(&["run", &out.display().to_string(), "scale_stream", &x, "-o", &scratch("out").join("stack.npy").display().to_string()]);
    assert!(!r.status.success());
    assert!(text(&r).contains("error 61 (requested stack exceeds the 4 MiB maximum): switch_stack_or_call_wrapper"), "{}", text(&r));
    // At the maximum it runs.
    build_dir(&src, "scale.cpp", &out, &["--cflags", "-DSTACK_SIZE=4194304"]);
    let (y, _) = run_op(&out, "scale_stream", &[&x], 1, "stack");
    assert_eq!(y.to_f32(), [3.0, 5.0, 7.0, 9.0]);
}

#[test]
fn generated_wrapper_and_schema_are_readable() {
    let dir = built("scalar_args", &[]);
    let ops = std::fs::read_to_string(dir.join("customop-build/ops.cpp")).unwrap();
    for line in [
        "torch::Tensor affine(const torch::Tensor&, const torch::Scalar&, int64_t);",
        "extern \"C\" void affine_wrapper(void) {\n    customop_setup(true);\n    torch::Tensor a0 = torchneuron::detail::tensor_arg(customop_next_tensor());\n    torch::Scalar a1 = torchneuron::detail::scalar_arg(customop_next_scalar());\n    int64_t a2 = static_cast<int64_t>(customop_next_int64());\n    if (customop_status() == 0) {\n        torch::Tensor out = affine(a0, a1, a2);\n        customop_return_tensor(torchneuron::detail::raw(out));\n    }\n    customop_cleanup();\n}",
        "long long a1 = static_cast<long long>(customop_next_long_long());",
        "double a2 = static_cast<double>(customop_next_double());",
        "extern \"C\" int32_t get_func_cnt(void) { return 2; }",
    ] {
        assert!(ops.contains(line), "ops.cpp lacks:\n{line}\n---\n{ops}");
    }
    let shapes = std::fs::read_to_string(dir.join("customop-build/shapes.cpp")).unwrap();
    assert!(shapes.contains("NEURON_LIBRARY_INIT_(scalar_ops)(lib);"), "{shapes}");
    let schema = customop::Schema::load(&dir).unwrap();
    assert_eq!(schema.libraries, ["scalar_ops"]);
    let names: Vec<&str> = schema.ops.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["affine", "offset_int"]);
    let kinds: Vec<customop::ArgKind> = schema.ops[1].params.iter().map(|p| p.kind).collect();
    assert_eq!(kinds, [customop::ArgKind::Tensor, customop::ArgKind::LongLong, customop::ArgKind::Double]);
    assert!(!schema.multicore);
}

#[test]
fn compile_commands_json_holds_each_sources_host_compile() {
    let dir = built("scalar_args", &[]);
    let text = std::fs::read_to_string(dir.join("customop-build/compile_commands.json")).unwrap();
    let db: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let src = kernels().join("scalar_args/affine.cpp");
    let e = db.iter().find(|e| e["file"].as_str() == Some(src.to_str().unwrap())).unwrap_or_else(|| panic!("no entry for {}:\n{text}", src.display()));
    let args: Vec<&str> = e["arguments"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    // The compile the build made: the compiler, the tool's flags (g++: the
    // loop flags that match the device compiler's -O2), then -c.
    assert!(args.starts_with(&["g++", "-std=c++17", "-O2", "-fPIC"]) || std::env::var_os("CXX").is_some(), "{args:?}");
    assert!(args.contains(&"-fvect-cost-model=dynamic") || std::env::var_os("CXX").is_some(), "{args:?}");
    assert!(args.windows(2).any(|w| w == ["-c", src.to_str().unwrap()]), "{args:?}");
    assert!(db.iter().any(|e| e["file"].as_str().is_some_and(|f| f.ends_with("customop-build/ops.cpp"))), "{text}");
}

#[test]
fn several_compute_and_shape_sources_make_one_library() {
    let a = kernels().join("relu2d");
    let b = kernels().join("stream");
    let out = scratch("flow").join("two_libs");
    let p = |d: &Path, f: &str| d.join(f).display().to_string();
    let t = customop_ok(&[
        "build",
        "--name",
        "two",
        "--compute",
        &p(&a, "relu.cpp"),
        "--compute",
        &p(&b, "scale.cpp"),
        "--shape",
        &p(&a, "shape.cpp"),
        "--shape",
        &p(&b, "shape.cpp"),
        "--out",
        &out.display().to_string(),
    ]);
    assert!(t.contains("3 op(s): relu_forward, relu_backward, scale_stream"), "{t}");
    let x = values(12, -1.0, 1.0, 12);
    let xf = npy_file("two_x.npy", &f32s(&[3, 4], &x)).display().to_string();
    let (y, _) = run_op(&out, "relu_forward", &[&xf], 1, "two");
    assert_eq!(y.to_f32(), x.iter().map(|v| v.max(0.0)).collect::<Vec<_>>());
    let (y, _) = run_op(&out, "scale_stream", &[&xf], 1, "two");
    assert_eq!(y.shape, [3, 4]);
    assert_eq!(y.to_f32(), x.iter().map(|v| v * 2.0 + 1.0).collect::<Vec<_>>());
}

#[test]
fn a_shape_function_that_fails_stops_the_run() {
    let d = scratch("flow").join("bad_shape");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("k.cpp"), "#include <torch/torch.h>\ntorch::Tensor k(const torch::Tensor& t) { return t; }\n").unwrap();
    std::fs::write(
        d.join("shape.cpp"),
        "#include <torch/torch.h>\n#include \"torchneuron/register.h\"\ntorch::Tensor s(torch::Tensor t) { return torch::Tensor(); }\n\
         NEURON_LIBRARY(bad, m) { m.def(\"k\", &s, \"k\"); }\n",
    )
    .unwrap();
    let out = d.join("build").display().to_string();
    customop_ok(&[
        "build",
        "--name",
        "bad",
        "--compute",
        &d.join("k.cpp").display().to_string(),
        "--shape",
        &d.join("shape.cpp").display().to_string(),
        "--out",
        &out,
    ]);
    let x = npy_file("bad_shape_x.npy", &f32s(&[2], &[1.0, 2.0])).display().to_string();
    let r = customop(&["run", &out, "k", &x, "-o", &scratch("out").join("bad_shape.npy").display().to_string()]);
    assert_eq!(r.status.code(), Some(8), "{}", text(&r));
    assert!(text(&r).contains("op `k`: shape function `s` failed (code 6): shape function of op `k` returned an undefined tensor"), "{}", text(&r));
}

/// The generated kernel side goes into the device image in the next
/// issue, which has no hosted C++ library: it and `torchneuron/register.h`
/// compile freestanding, warning-free.
#[test]
fn generated_sources_and_register_h_compile_freestanding_and_warning_free() {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../include");
    for kernel in ["scalar_args", "tensor_ops", "relu2d"] {
        let dir = built(kernel, &[]);
        for f in ["customop-build/ops.cpp", "customop-build/shapes.cpp"] {
            let o = std::process::Command::new("g++")
                .args(["-std=c++17", "-ffreestanding", "-nostdinc++", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I"])
                .arg(&include)
                .arg(dir.join(f))
                .output()
                .expect("run g++");
            assert!(o.status.success(), "{kernel}/{f}:\n{}", String::from_utf8_lossy(&o.stderr));
        }
    }
}

#[test]
fn the_staticlib_can_be_named_explicitly() {
    let src = kernels().join("stream");
    let (c, s) = (src.join("scale.cpp").display().to_string(), src.join("shape.cpp").display().to_string());
    let out = scratch("flow").join("explicit_lib").display().to_string();
    let lib = customop::staticlib::find().expect("the test binary's staticlib");
    let t = customop_ok(&["build", "--name", "ex", "--compute", &c, "--shape", &s, "--out", &out, "--staticlib", &lib.display().to_string()]);
    assert!(t.contains("1 op(s): scale_stream"), "{t}");
    let r = customop(&["build", "--name", "ex", "--compute", &c, "--shape", &s, "--out", &out, "--staticlib", "/nonexistent/libneuroncustomop.a"]);
    assert_eq!(r.status.code(), Some(10), "{}", text(&r));
    assert!(text(&r).contains("--staticlib /nonexistent/libneuroncustomop.a does not exist"), "{}", text(&r));
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_customop"))
        .args(["build", "--name", "ex", "--compute", &c, "--shape", &s, "--out", &out])
        .env("NEURON_STATICLIB", "/nonexistent/lib.a")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(10), "{}", text(&r));
    assert!(text(&r).contains("NEURON_STATICLIB=/nonexistent/lib.a does not exist"), "{}", text(&r));
}
