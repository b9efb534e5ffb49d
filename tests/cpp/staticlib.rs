//! Finding the host `libneuroncustomop.a` from an integration test, and
//! compiling C++ against it. Shared by `tests/cpp_kernels.rs`,
//! `tests/bad_input.rs` and `tests/symbols.rs` (`#[path]` module).
//!
//! Why not just `target/<profile>/libneuroncustomop.a`: cargo builds the
//! library (both crate types, `staticlib` and `rlib`) into
//! `target/<profile>/deps/libneuroncustomop-<hash>.{a,rlib}` before it
//! builds an integration test, but it copies ("uplifts") the staticlib to
//! `target/<profile>/` only when the library is a root of the build
//! (`cargo build`), never for `cargo test --test x`. So that path may be
//! missing, or stale, or built with other features. The archive that
//! belongs to *this* test binary is the one with the same `<hash>` as the
//! rlib the test links; it is recognised by containing a Rust symbol of
//! the `neuroncustomop` crate that the test binary contains (the symbol
//! hash depends on the crate's metadata hash, so another build of the
//! crate does not match).
//!
//! Overrides: `NEURON_STATICLIB=/path/to/libneuroncustomop.a`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (the root package's manifest directory).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The directory holding the running test binary (`target/<profile>/deps`).
fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent().expect("test binary has a parent directory").to_path_buf()
}

fn nm_defined(path: &Path) -> Vec<String> {
    let out = Command::new("nm")
        .arg("--defined-only")
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run nm (binutils) on {}: {e}", path.display()));
    assert!(out.status.success(), "nm {} failed: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

/// A few mangled Rust symbols of the `neuroncustomop` crate that the running
/// test binary defines (it links the rlib built alongside the staticlib).
fn fingerprint_symbols() -> Vec<String> {
    // Make sure the binary holds code of the crate, whatever the caller used.
    std::hint::black_box(neuroncustomop::host::Simulator::new as fn() -> _);
    let exe = std::env::current_exe().expect("current_exe");
    nm_defined(&exe)
        .into_iter()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_owned))
        .filter(|s| s.starts_with("_ZN14neuroncustomop") && s.contains("17h"))
        .take(8)
        .collect()
}

/// The host staticlib built together with this test binary. Panics with a
/// clear message if there is none.
pub fn path() -> PathBuf {
    if let Some(p) = std::env::var_os("NEURON_STATICLIB") {
        let p = PathBuf::from(p);
        assert!(p.is_file(), "NEURON_STATICLIB={} does not exist", p.display());
        return p;
    }
    let deps = deps_dir();
    let profile_dir = deps.parent().expect("deps has a parent").to_path_buf();
    let mut candidates: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&deps)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    n.starts_with("libneuroncustomop-") && n.ends_with(".a")
                })
                .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
                .collect()
        })
        .unwrap_or_default();
    // Newest first: the matching one is normally the newest.
    candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
    let uplifted = profile_dir.join("libneuroncustomop.a");
    if uplifted.is_file() {
        candidates.push((std::time::SystemTime::UNIX_EPOCH, uplifted.clone()));
    }
    assert!(
        !candidates.is_empty(),
        "the host staticlib libneuroncustomop.a was not found in {} nor {}: \
         build it with `cargo test -p neuroncustomop` (or `cargo build -p neuroncustomop`), \
         or point NEURON_STATICLIB at it",
        deps.display(),
        profile_dir.display()
    );
    let syms = fingerprint_symbols();
    assert!(!syms.is_empty(), "no neuroncustomop symbols in the test binary to match the staticlib against");
    for (_, c) in &candidates {
        let defined = nm_defined(c);
        if syms.iter().any(|s| defined.iter().any(|l| l.ends_with(s.as_str()))) {
            return c.clone();
        }
    }
    panic!(
        "none of the staticlibs {:?} was built together with this test binary (stale build?); \
         rebuild with `cargo test -p neuroncustomop` or set NEURON_STATICLIB",
        candidates.iter().map(|c| c.1.display().to_string()).collect::<Vec<_>>()
    );
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
    assert!(
        out.status.success(),
        "g++ failed for {name} ({cmd:?}):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
