//! `customop run --on both --rtol R --atol A`: the simulator's and the
//! emulated device's outputs compared with torch.testing.assert_close's
//! rule instead of bit for bit. The kernel here rounds on the device as a
//! device's own libm may (one part in 10^7 off), so bit for bit it fails
//! with the largest difference named, and within a tolerance it passes.

mod common;
use common::*;

const KERNEL: &str = r#"#include <torch/torch.h>

// Scales by one: on the device by a factor a hair above one, as a device
// libm whose last bit differs from the host's would.
torch::Tensor scale_one(const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    auto in = t_in.accessor<float, 1>();
    auto out = t_out.accessor<float, 1>();
#ifdef __XTENSA__
    const float k = 1.0f + 2e-7f;
#else
    const float k = 1.0f;
#endif
    for (int64_t i = 0; i < t_in.size(0); i++) out[i] = in[i] * k;
    return t_out;
}
"#;

const SHAPE: &str = "#include <torch/torch.h>\n#include \"torchneuron/register.h\"\n\
                     torch::Tensor s(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }\n\
                     NEURON_LIBRARY(tolerant, m) { m.def(\"scale_one\", &s, \"scale_one\"); }\n";

#[test]
fn on_both_compares_bit_for_bit_or_within_the_tolerance_given() {
    let dir = scratch("tolerance");
    std::fs::write(dir.join("k.cpp"), KERNEL).unwrap();
    std::fs::write(dir.join("shape.cpp"), SHAPE).unwrap();
    let p = |f: &str| dir.join(f).display().to_string();
    customop_ok(&["build", "--name", "tolerant", "--compute", &p("k.cpp"), "--shape", &p("shape.cpp"), "--out", &p("build"), "--target", "qemu"]);
    let x = npy_file("tolerance-x.npy", &f32s(&[64], &values(64, 1.0, 100.0, 3))).display().to_string();
    let (b, y) = (p("build"), p("y.npy"));
    let run = |extra: &[&str]| {
        let mut a = vec!["run", b.as_str(), "scale_one", x.as_str(), "-o", y.as_str(), "--on", "both"];
        a.extend_from_slice(extra);
        customop(&a)
    };

    let exact = run(&[]);
    let t = text(&exact);
    assert_eq!(exact.status.code(), Some(11), "bit for bit, the two differ:\n{t}");
    assert!(t.contains("elements differ between the simulator and the emulated device; the largest difference is"), "{t}");
    assert!(t.contains("--rtol/--atol give a tolerance"), "{t}");

    let close = run(&["--rtol", "1e-6"]);
    let t = text(&close);
    assert!(close.status.success(), "within rtol 1e-6 they agree:\n{t}");
    assert!(t.contains("outputs agree within --rtol 0.000001 --atol 0 (") && t.contains("the largest difference is"), "{t}");

    let tight = run(&["--rtol", "1e-9"]);
    let t = text(&tight);
    assert_eq!(tight.status.code(), Some(11), "{t}");
    assert!(t.contains("beyond --rtol 0.000000001 --atol 0"), "{t}");

    let alone = customop(&["run", &b, "scale_one", &x, "-o", &y, "--rtol", "1e-6"]);
    assert_eq!(alone.status.code(), Some(2), "a tolerance needs --on both:\n{}", text(&alone));
    assert!(text(&alone).contains("use them with --on both"), "{}", text(&alone));
    let bad = customop(&["run", &b, "scale_one", &x, "-o", &y, "--on", "both", "--atol", "-1"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}
