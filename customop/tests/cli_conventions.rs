//! The command line as kernel authors expect one: a passing compile's
//! warnings are shown (summarised; in full with `-v`, with each command),
//! and `customop ops DIR` lists a build's ops.

mod common;
use common::*;

const RELU: &str = include_str!("../../examples/relu/relu.cpp");
const SHAPE: &str = include_str!("../../examples/relu/shape.cpp");

#[test]
fn warnings_of_a_passing_compile_are_shown_and_v_shows_the_commands() {
    let dir = scratch("warnings");
    let warn = RELU.replacen("{\n    torch::Tensor t_out", "{\n    int unused = 1;\n    torch::Tensor t_out", 1);
    assert_ne!(warn, RELU);
    std::fs::write(dir.join("relu.cpp"), warn).unwrap();
    std::fs::write(dir.join("shape.cpp"), SHAPE).unwrap();
    let (k, s) = (dir.join("relu.cpp").display().to_string(), dir.join("shape.cpp").display().to_string());
    let out = dir.join("quiet").display().to_string();
    let _ = std::fs::remove_dir_all(&out);
    let t = customop_ok(&["build", "--name", "w", "--compute", &k, "--shape", &s, "--out", &out, "--cflags", "-Wall"]);
    assert!(t.contains("relu.cpp printed:") && t.contains("warning: unused variable") && t.contains("-v shows"), "{t}");
    assert!(!t.contains("g++ -std=c++17"), "without -v no command lines: {t}");
    let out = dir.join("loud").display().to_string();
    let _ = std::fs::remove_dir_all(&out);
    let t = customop_ok(&["build", "-v", "--name", "w", "--compute", &k, "--shape", &s, "--out", &out, "--cflags", "-Wall"]);
    assert!(t.contains("customop: compiling ") && t.contains("-Wall") && t.contains("warning: unused variable") && t.contains("customop: linking "), "{t}");
    // A cached build compiles nothing, so warns of nothing.
    let t = customop_ok(&["build", "--name", "w", "--compute", &k, "--shape", &s, "--out", &out, "--cflags", "-Wall"]);
    assert!(!t.contains("warning:"), "{t}");
    let t = customop_ok(&["ops", &out]);
    assert!(t.contains("1 op(s):\n  relu_forward(const torch::Tensor&) -> torch::Tensor\n      compute relu_forward, shape relu_fwd_shape"), "{t}");
    let r = customop(&["ops", &dir.display().to_string()]);
    assert_eq!(r.status.code(), Some(6), "not a build directory: {}", text(&r));
}

#[test]
fn timeout_bounds_a_run_on_the_emulated_cores() {
    let dir = scratch("qemu-timeout");
    // Spins on a volatile, so the compiler keeps the loop.
    let spin = RELU.replacen("{\n    torch::Tensor t_out", "{\n    volatile int go = 1;\n    while (go) {}\n    torch::Tensor t_out", 1);
    std::fs::write(dir.join("relu.cpp"), spin).unwrap();
    std::fs::write(dir.join("shape.cpp"), SHAPE).unwrap();
    let (k, s, out) = (dir.join("relu.cpp").display().to_string(), dir.join("shape.cpp").display().to_string(), dir.join("b").display().to_string());
    customop_ok(&["build", "--name", "spin", "--compute", &k, "--shape", &s, "--out", &out, "--target", "qemu"]);
    let x = dir.join("x.npy");
    customop::npy::write(&x, &f32s(&[2, 2], &[1.0, -1.0, 2.0, -2.0])).unwrap();
    let y = dir.join("y.npy").display().to_string();
    let started = std::time::Instant::now();
    let r = customop(&["run", &out, "relu_forward", &x.display().to_string(), "-o", &y, "--on", "qemu", "--timeout", "3"]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(13), "{t}");
    assert!(t.contains("did not finish within --timeout 3 s"), "{t}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "stopped at the bound, not QEMU's default 120 s");
}
