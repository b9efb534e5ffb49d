//! Finding the host `libneuroncustomop.a` from an integration test, and
//! compiling C++ against it: the test binaries' shared module (`mod cpp;`)
//! of `tests/{cpp_kernels,cpp_api,torch_surface,bad_input,symbols}.rs`.
//!
//! Finding the archive is the `customop-staticlib` crate (one
//! implementation, shared with the `customop` tool): the
//! `libneuroncustomop-<hash>.a` cargo built together with this test
//! binary, recognised by its symbols.
//!
//! Overrides: `NEURON_STATICLIB=/path/to/libneuroncustomop.a`.

// Included by several test binaries; each uses only some of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (the root package's manifest directory).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The host staticlib built together with this test binary. Panics with a
/// clear message if there is none.
pub fn path() -> PathBuf {
    customop_staticlib::find().unwrap_or_else(|e| panic!("{e}"))
}

/// Where compiled C++ test programs go.
pub fn out_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cpp");
    std::fs::create_dir_all(&d).expect("create the C++ output directory");
    d
}

/// Compiles and links `sources` (relative to `tests/cpp/`) into program
/// `name` with `g++ -std=c++17 -O1 -Wall -Werror -I include`, against the
/// host staticlib. Panics with g++'s output on failure.
pub fn build(name: &str, sources: &[&str]) -> PathBuf {
    let lib = path();
    let root = repo();
    let exe = out_dir().join(name);
    let mut cmd = Command::new(std::env::var_os("CXX").unwrap_or_else(|| "g++".into()));
    cmd.args(["-std=c++17", "-O1", "-Wall", "-Werror", "-I"]).arg(root.join("include"));
    for s in sources {
        cmd.arg(root.join("tests/cpp").join(s));
    }
    cmd.arg(&lib).args(["-lpthread", "-ldl", "-lm", "-o"]).arg(&exe);
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run g++: {e}"));
    assert!(out.status.success(), "g++ failed for {name} ({cmd:?}):\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    exe
}

/// Runs a built program with `args`; returns its output.
pub fn run(exe: &Path, args: &[&str]) -> Output {
    Command::new(exe).args(args).output().unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()))
}

/// Runs a built program and asserts it exits 0 (printing its output if not).
pub fn run_ok(exe: &Path, args: &[&str]) -> String {
    let out = run(exe, args);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{} {args:?} failed ({}):\n{text}", exe.display(), out.status);
    text
}
