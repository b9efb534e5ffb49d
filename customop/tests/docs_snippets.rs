//! README.md and docs/quickstart.md promise that their shell snippets run
//! as printed. This test runs every ```sh block of each, in order, in a
//! fresh copy of the examples (each block from the copy's root, as the
//! docs say, with `customop` on PATH), and checks what the quick start
//! shows of the output. The install block (building `customop`, the
//! virtualenv) is what the test's own environment already is: it must be
//! exactly the lines below, and is not run. The Python blocks are run by
//! python/tests/test_docs_snippets.py.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The install lines the docs may show; the test stands in for them
/// (`customop` on PATH, a Python with NumPy).
const SETUP: &[&str] = &[
    "cargo build --release -p customop",
    "export PATH=\"$PWD/target/release:$PATH\"",
    "python3 -m venv .venv && . .venv/bin/activate",
    "pip install ./python numpy ziglang==0.17.1",
];

/// The fenced blocks of `lang` in `doc`, in order.
fn blocks(doc: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = doc;
    while let Some(at) = rest.find(&fence) {
        let body = &rest[at + fence.len()..];
        let end = body.find("```").expect("block closes");
        out.push(body[..end].to_owned());
        rest = &body[end + 3..];
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A `python3` that imports NumPy: the test's choice, the tools' `PYTHON`
/// (`cargo xtask test` names the project's virtualenv, which has it), the
/// Python package's test virtualenv (`bash python/ci.sh` makes it), or the
/// one on PATH.
fn python_with_numpy() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("NEURONCUSTOMOP_TEST_PYTHON").map(PathBuf::from),
        std::env::var_os("PYTHON").map(PathBuf::from),
        Some(PathBuf::from(REPO).join("python/target/ci-venv/bin/python3")),
        Some(PathBuf::from("python3")),
    ];
    candidates.into_iter().flatten().find(|p| Command::new(p).args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success()))
}

/// Runs each sh block of `doc_path` in a fresh copy; returns each block's output.
fn run_doc(doc_path: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(Path::new(REPO).join(doc_path)).unwrap();
    // From nothing: what an earlier run left is removed.
    let root = scratch(&format!("docs-{}", doc_path.replace('/', "-")));
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::create_dir_all(&root).unwrap();
    for ex in ["relu", "vendor-relu"] {
        copy_dir(&Path::new(REPO).join("examples").join(ex), &root.join("examples").join(ex));
    }
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_customop"), bin.join("customop")).unwrap();
    let python = python_with_numpy().expect("these snippets make x.npy with NumPy: put a python3 with numpy on PATH (or run `bash python/ci.sh` once)");
    let mut path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect::<Vec<_>>();
    path.insert(0, bin);
    if let Some(dir) = python.parent().filter(|d| !d.as_os_str().is_empty()) {
        path.insert(0, dir.to_path_buf());
    }
    let path = std::env::join_paths(path).unwrap();
    // The install block puts ziglang beside NumPy; where the test's Python
    // lacks it, `PYTHON` (the tool's own setting) names one that has it.
    let zig_python = ["python3", "python"]
        .into_iter()
        .chain(python.to_str())
        .find_map(|p| {
            let o = Command::new(p).args(["-c", "import ziglang, sys; print(sys.executable)"]).output().ok().filter(|o| o.status.success())?;
            Some(String::from_utf8_lossy(&o.stdout).trim().to_owned())
        })
        .unwrap_or_else(|| "python3".to_owned());
    let mut outputs = Vec::new();
    for b in blocks(&doc, "sh") {
        let lines: Vec<&str> = b.lines().filter(|l| !l.trim().is_empty()).collect();
        let setup = lines.iter().filter(|l| SETUP.contains(l)).count();
        if setup > 0 {
            assert_eq!(setup, lines.len(), "{doc_path}: an install block holds only the install lines {SETUP:?}:\n{b}");
            continue;
        }
        let o = Command::new("bash").args(["-euo", "pipefail", "-c", &b]).current_dir(&root).env("PATH", &path).env("PYTHON", &zig_python).output().unwrap();
        assert!(o.status.success(), "{doc_path}: this block failed:\n{b}\n{}", text(&o));
        outputs.push(String::from_utf8_lossy(&o.stdout).into_owned());
    }
    outputs
}

#[test]
fn readmes_shell_snippets_run_as_printed() {
    let out = run_doc("README.md");
    assert_eq!(out.len(), 1, "README's quick start is one block");
    assert!(
        out[0].contains("run: 1 core(s), ok")
            && out[0].contains("relu_forward(const torch::Tensor&) -> torch::Tensor\n      compute relu_forward, shape relu_fwd_shape, declared at shape.cpp:"),
        "{}",
        out[0]
    );
}

#[test]
fn the_quickstarts_shell_snippets_run_as_printed_and_print_what_it_shows() {
    let doc = std::fs::read_to_string(Path::new(REPO).join("docs/quickstart.md")).unwrap();
    let out = run_doc("docs/quickstart.md");
    assert_eq!(out.len(), 4, "customop env; build and run; the emulated cores; 8 cores");
    assert!(
        out[0].contains("for the host simulator:") && !out[0].contains("missing  "),
        "section 1's customop env, on a machine that has every part:\n{}",
        out[0]
    );
    let out = &out[1..];
    let shown = blocks(&doc, "text");
    // The annotated report is the run's own output, as printed (but for
    // its counts, which vary with the build and the input).
    let digits = |s: &str| s.split(|c: char| c.is_ascii_digit()).filter(|p| !p.is_empty()).collect::<Vec<_>>().join("N");
    assert!(digits(&out[0]).ends_with(&digits(&shown[0])), "section 4 shows the report of section 3's run:\n{}\nshown:\n{}", out[0], shown[0]);
    // The emulated run's last line, as printed.
    assert_eq!(out[1].lines().last().map(|l| format!("{l}\n")), Some(shown[1].clone()), "{}", out[1]);
    assert!(out[2].contains("ran relu_forward on 8 core(s)"), "{}", out[2]);
}
