//! The vendor's C++ surface (`<torch/torch.h>`, `<ATen/ATen.h>`,
//! `<neuron/neuron-utils.hpp>`, SPEC §11), with kernels written the
//! vendor's way in `tests/cpp_torch/`:
//!
//! - every kernel-side header compiles freestanding (only the compiler's
//!   own headers visible) and warning-free under `-Wall -Wextra -Werror`;
//! - the header's printf formatter agrees with glibc's snprintf on a large
//!   table of formats and values;
//! - vendor-style kernels calling each documented op, factory, accessor,
//!   coherence policy, Scalar conversion and dtype run on the simulator
//!   against references; printf reaches the core's ring with `<stdio.h>`
//!   included before or after `<torch/torch.h>`;
//! - what the vendor's library lacks (autograd, devices, `data_ptr()`,
//!   other aten ops, writes through a const tensor's accessors) does not
//!   compile, each with its message.

mod cpp;

use std::path::PathBuf;
use std::process::Command;

fn cxx() -> std::ffi::OsString {
    std::env::var_os("CXX").unwrap_or_else(|| "g++".into())
}

fn include_dir() -> PathBuf {
    cpp::repo().join("include")
}

/// The compiler's own (freestanding) header directory.
fn compiler_include_dir() -> PathBuf {
    let out = Command::new(cxx()).arg("-print-file-name=include").output().expect("run g++ -print-file-name=include");
    assert!(out.status.success());
    let p = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert!(p.join("stdint.h").is_file(), "{} has no stdint.h", p.display());
    p
}

/// Compiles `source` (a translation unit's text) with `-fsyntax-only` and
/// the given flags; returns (success, diagnostics).
fn syntax_check(name: &str, source: &str, flags: &[&str]) -> (bool, String) {
    let path = cpp::out_dir().join(format!("{name}.cpp"));
    std::fs::write(&path, source).unwrap();
    let out = Command::new(cxx()).args(["-std=c++17", "-fsyntax-only"]).args(flags).arg("-I").arg(include_dir()).arg(&path).output().expect("run g++");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// Flags under which only the compiler's freestanding headers and the
/// device's C library headers (`include/device-libc`, on the device
/// build's include path) are visible.
fn freestanding_flags(gcc_include: &std::path::Path) -> Vec<String> {
    vec![
        "-ffreestanding".into(),
        "-nostdinc".into(),
        "-nostdinc++".into(),
        "-isystem".into(),
        gcc_include.display().to_string(),
        "-I".into(),
        include_dir().join("device-libc").display().to_string(),
        "-Wall".into(),
        "-Wextra".into(),
        "-Werror".into(),
    ]
}

/// Every header a kernel may include (the kernel side of `include/`).
const KERNEL_HEADERS: &[&str] = &[
    "torch/torch.h",
    "ATen/ATen.h",
    "ATen/Functions.h",
    "ATen/core/Tensor.h",
    "ATen/core/TensorAccessor.h",
    "ATen/core/CoherencyEnforcer.h",
    "c10/core/Scalar.h",
    "c10/core/ScalarType.h",
    "c10/core/TensorOptions.h",
    "c10/util/ArrayRef.h",
    "c10/util/BFloat16.h",
    "c10/util/Half.h",
    "neuron/neuron-utils.hpp",
    "neuron/printf.hpp",
    "neuron/detail/format.hpp",
    "neuron/detail/format_args.hpp",
    "neuron/detail/decimal.hpp",
    "neuron/detail/traits.hpp",
    "neuroncustomop.hpp",
    "neuroncustomop.h",
    // include/device-libc: the C library a device kernel may include.
    "assert.h",
    "stdlib.h",
    "string.h",
    "math.h",
    "stdio.h",
    "wchar.h",
    "time.h",
    // Their C++ forms (<cmath>, <cstdlib>, ...) are libc++'s on the device
    // (include/device-libcxx, customop/tests/device_qemu.rs).
];

#[test]
fn kernel_headers_are_freestanding_and_warning_free() {
    let gcc = compiler_include_dir();
    let flags = freestanding_flags(&gcc);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    // The check is real: a hosted header the device does not have is not
    // visible under these flags.
    for hosted in ["ctype.h", "unistd.h", "vector", "type_traits", "tuple", "initializer_list"] {
        let (ok, _) = syntax_check("hosted_probe", &format!("#include <{hosted}>\n"), &flags);
        assert!(!ok, "<{hosted}> is visible under the freestanding flags: the check would prove nothing");
    }
    // Each header on its own (self-contained), then all of them together
    // with a kernel using them, device-style (NEURON_DEVICE).
    for h in KERNEL_HEADERS {
        let (ok, diag) = syntax_check("one_header", &format!("#include \"{h}\"\n"), &flags);
        assert!(ok, "{h} does not compile freestanding with -Wall -Wextra -Werror:\n{diag}");
    }
    let mut tu: String = KERNEL_HEADERS.iter().map(|h| format!("#include \"{h}\"\n")).collect();
    tu.push_str(
        r#"
torch::Tensor k(const torch::Tensor& t, const torch::Scalar& s, int64_t n, double d) {
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto a = t.accessor<float, 2>();
    auto o = out.accessor<float, 2>();
    for (int64_t i = 0; i < t.size(0); i++)
        for (int64_t j = 0; j < t.size(-1); j++) o[i][j] = a[i][j] > 0.0 ? a[i][j] * s.toFloat() : static_cast<float>(n * d);
    printf("k %d %f %s\n", get_cpu_id(), d, "x");
    // The vendor's spellings: TensorAccessor's third parameter is
    // read_only; fill_ gives a Tensor& from a const tensor.
    torch::TensorAccessor<float, 2, true> ra = t.accessor<float, 2>();
    torch::TensorAccessor<float, 2, false> wa = out.accessor<float, 2>();
    wa[0][0] = ra[0][0];
    torch::Tensor& filled = t.fill_(1);
    (void)filled;
    return torch::clamp(torch::add(out, torch::pow(out, 2), 0.5), -1, 1);
}
NEURON_CUSTOM_OPS(k)
"#,
    );
    for device in [false, true] {
        let mut f = flags.clone();
        if device {
            f.push("-DNEURON_DEVICE");
        }
        let (ok, diag) = syntax_check("all_headers", &tu, &f);
        assert!(ok, "the kernel-side headers together (device {device}) do not compile freestanding:\n{diag}");
    }
}

#[test]
fn kernel_headers_are_warning_free_hosted_with_stdio_either_side() {
    // -O2 with _FORTIFY_SOURCE: glibc then defines printf inline; the
    // kernel's printf must neither clash with it nor be #undef'd.
    let flags = ["-Wall", "-Wextra", "-Werror", "-O2", "-D_FORTIFY_SOURCE=2"];
    let body = r#"
torch::Tensor k(const torch::Tensor& t) {
    printf("%d %s %.3f\n", 1, "two", 3.0);
    std::printf("host stdout %d\n", 4);
    return torch::abs(t);
}
NEURON_CUSTOM_OPS(k)
"#;
    for (name, pre, post) in [("stdio_first", "#include <stdio.h>\n#include <cstdio>\n", ""), ("stdio_after", "", "#include <cstdio>\n#include <stdio.h>\n")] {
        let tu = format!("{pre}#include <torch/torch.h>\n#include <neuron/neuron-utils.hpp>\n{post}{body}");
        let (ok, diag) = syntax_check(name, &tu, &flags);
        assert!(ok, "{name}: a kernel including stdio does not compile:\n{diag}");
    }
    // The C++ library after torch.h (its <initializer_list>, <cmath>
    // overloads of abs/pow), containers as IntArrayRef, and
    // `using namespace torch;` with unqualified calls.
    let stl = r#"#include <torch/torch.h>
#include <array>
#include <cmath>
#include <cstdlib>
#include <vector>
using namespace torch;
Tensor k(const Tensor& t) {
    std::vector<int64_t> v{2, 3};
    std::array<int64_t, 2> a{{2, 3}};
    Tensor x = zeros(v, kFloat);
    Tensor y = abs(pow(ones(a, kFloat), 2));
    IntArrayRef s = {2, 3};
    int64_t n = 0;
    for (int64_t d : s) n += d;
    printf("%d %d %f\n", t.sizes() == x.sizes(), static_cast<int>(n), std::pow(2.0, 0.5));
    return add(x, y);
}
NEURON_CUSTOM_OPS(k)
"#;
    let (ok, diag) = syntax_check("stl_after", stl, &flags);
    assert!(ok, "a kernel using the C++ library after torch.h does not compile:\n{diag}");
}

/// The vendor's device library is C++14: `--cflags -std=c++14` must work.
/// Every accessor form (taken by value, 16-bit float elements read as
/// float and updated in place, streams, TCM) compiles at C++14 without
/// C++17's guaranteed copy elision, and a real copy of an accessor is
/// still refused (here: a link error, the copy constructor is never
/// defined; at C++17 a compile error).
#[test]
fn kernel_headers_compile_at_cxx14() {
    let body = r#"#include <torch/torch.h>
torch::Tensor k(const torch::Tensor& t, torch::Tensor h) {
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto a = t.accessor<float, 2>();
    auto o = out.accessor<float, 2>();
    auto ha = h.accessor<c10::Half, 1>();
    float f = ha[0];
    c10::Half x = ha[1];
    ha[0] += 1.0f;
    ha[1] = x;
    auto rs = t.read_stream_accessor<float>();
    auto ws = out.write_stream_accessor<float>();
    ws.write(rs.read() + f);
    auto tcm = t.tcm_accessor();
    (void)tcm;
    o[0][0] = a[0][0];
    return out;
}
NEURON_CUSTOM_OPS(k)
"#;
    // Without -Werror: the headers use `if constexpr`, which g++ and clang
    // accept at C++14 as an extension, with a warning.
    let (ok, diag) = syntax_check("cxx14", body, &["-std=c++14"]);
    assert!(ok, "the kernel headers do not compile at -std=c++14:\n{diag}");
    // A copy compiles at C++14 and fails to link: build an object and
    // look for the undefined copy constructor.
    let copy = "#include <torch/torch.h>\nfloat k(const torch::Tensor& t) { auto a = t.accessor<float, 1>(); auto b = a; return b[0]; }\n";
    let path = cpp::out_dir().join("cxx14_copy.cpp");
    std::fs::write(&path, copy).unwrap();
    let obj = path.with_extension("o");
    let out = Command::new(cxx()).args(["-std=c++14", "-c", "-I"]).arg(include_dir()).arg(&path).arg("-o").arg(&obj).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let nm = Command::new("nm").args(["-u", "-C"]).arg(&obj).output().expect("nm");
    let undefined = String::from_utf8_lossy(&nm.stdout);
    assert!(undefined.contains("at::Accessor<float, 1ul, true>::Accessor(at::Accessor<float, 1ul, true> const&)"), "{undefined}");
    let (ok, _) = syntax_check("cxx17_copy", copy, &[]);
    assert!(!ok, "an accessor copy compiles at C++17");
}

#[test]
fn printf_formatter_matches_glibc_snprintf_ring() {
    let exe = cpp::out_dir().join("format_diff");
    let src = cpp::repo().join("tests/cpp_torch/format_diff.cpp");
    let out = Command::new(cxx())
        .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-Wno-format", "-I"])
        .arg(include_dir())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run g++");
    assert!(out.status.success(), "format_diff.cpp does not build:\n{}", String::from_utf8_lossy(&out.stderr));
    let text = cpp::run_ok(&exe, &[]);
    assert!(text.contains("ok: ") && text.contains(" 0 mismatches"), "{text}");
    let cases: usize = text.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(cases > 3000, "only {cases} cases compared:\n{text}");
}

#[test]
fn vendor_style_kernels_run_every_documented_feature() {
    let exe = cpp::build("torch_surface", &["../cpp_torch/surface_kernel.cpp", "../cpp_torch/driver_surface.cpp"]);
    let out = cpp::run_ok(&exe, &[]);
    for feature in [
        "ok: unary ops",
        "ok: add/sub (alpha), mul, div, pow (3 forms), clamp",
        "ok: bitwise_and/or",
        "ok: factories",
        "ok: tensor methods",
        "ok: 2-D accessors",
        "ok: read and write stream accessors",
        "ok: TCM accessor",
        "ok: coherence policy set by name",
        "ok: copies outlive the original",
    ] {
        assert!(out.contains(feature), "missing `{feature}`:\n{out}");
    }
}

#[test]
fn printf_reaches_the_ring_with_stdio_included_first() {
    let exe = cpp::build("torch_printf", &["../cpp_torch/printf_stdio_first.cpp", "../cpp_torch/printf_no_stdio.cpp", "../cpp_torch/driver_printf.cpp"]);
    let out = cpp::run_ok(&exe, &[]);
    assert!(out.contains("ok: printf with <stdio.h> first reaches the ring"), "{out}");
}

#[test]
fn what_the_vendor_library_lacks_does_not_compile() {
    let prelude = "#include <torch/torch.h>\n#include <neuron/neuron-utils.hpp>\n";
    let kernel = |stmt: &str| {
        format!(
            "{prelude}torch::Tensor k(const torch::Tensor& c) {{\n    torch::Tensor t = torch::zeros({{2, 3}}, torch::kFloat);\n    (void)c;\n    {stmt}\n    return t;\n}}\nNEURON_CUSTOM_OPS(k)\n"
        )
    };
    // The control: the kernel around the statements compiles.
    let (ok, diag) = syntax_check("lacks_control", &kernel("t.fill_(1);"), &["-Wall", "-Werror"]);
    assert!(ok, "the control kernel does not compile:\n{diag}");
    let cases: &[(&str, &str, &str)] = &[
        ("backward", "t.backward();", "autograd is not available"),
        ("grad", "auto g = t.grad(); (void)g;", "autograd is not available"),
        ("requires_grad", "t.requires_grad_(true);", "autograd is not available"),
        ("data_ptr", "void* p = t.data_ptr(); (void)p;", "HBM is not directly addressable"),
        ("data_ptr_t", "float* p = t.data_ptr<float>(); (void)p;", "HBM is not directly addressable"),
        ("to", "auto h = t.to(torch::kHalf); (void)h;", "no devices or dtype conversions"),
        ("cuda", "auto g = t.cuda(); (void)g;", "no devices"),
        ("cpu", "auto g = t.cpu(); (void)g;", "no devices"),
        ("item", "auto v = t.item(); (void)v;", "through an accessor"),
        ("relu", "auto r = torch::relu(t); (void)r;", "relu"),
        ("matmul", "auto r = at::matmul(t, t); (void)r;", "matmul"),
        ("sum_method", "auto r = t.sum(); (void)r;", "sum"),
        ("device_option", "auto o = torch::TensorOptions().device(0); (void)o;", "device"),
        ("no_dtype", "auto z = torch::zeros({2, 3}); (void)z;", "zeros"),
        ("const_accessor_write", "auto a = c.accessor<float, 1>(); a[0] = 1.0f;", "read-only"),
        ("const_tcm_write", "float b[1] = {0}; c.tcm_accessor().tcm_to_tensor<float>(b, 0, 1);", "read-only"),
        ("printf_tensor", "printf(\"%d\", t);", "make_arg"),
        ("temporary_accessor", "auto a = torch::zeros({3}, torch::kFloat).accessor<float, 1>(); (void)a;", "deleted"),
        ("temporary_tcm", "auto a = torch::ones({3}, torch::kFloat).tcm_accessor(); (void)a;", "deleted"),
        ("const_write_stream", "auto w = c.write_stream_accessor<float>(); (void)w;", "deleted"),
        ("read_only_accessor_as_writable", "torch::TensorAccessor<float, 1, false> w = c.accessor<float, 1>(); (void)w;", "conversion"),
    ];
    for (name, stmt, message) in cases {
        let (ok, diag) = syntax_check(&format!("lacks_{name}"), &kernel(stmt), &["-Wall"]);
        assert!(!ok, "`{stmt}` compiled, but the vendor's library has no such thing");
        assert!(diag.contains(message), "`{stmt}` failed without naming `{message}`:\n{diag}");
    }
    // A kernel argument outside the codegen's kinds is refused by
    // NEURON_CUSTOM_OPS.
    let bad_arg = format!("{prelude}torch::Tensor k(const torch::Tensor& t, const char* s) {{ (void)s; return t; }}\nNEURON_CUSTOM_OPS(k)\n");
    let (ok, diag) = syntax_check("lacks_bad_arg", &bad_arg, &[]);
    assert!(!ok && diag.contains("a kernel argument must be"), "a const char* argument was not refused:\n{diag}");
}

#[test]
fn fail_invocation_without_a_bound_core_is_no_core() {
    let code = neuroncustomop::ffi::op_failure::neuron_fail_invocation();
    assert_eq!(code, neuroncustomop::runtime::Error::NoCore.code());
}
