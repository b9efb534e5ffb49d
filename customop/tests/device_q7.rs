//! `customop build --target q7`: a vendor-style C++ kernel compiled for
//! Xtensa and linked into the nine FLL images (eight per-core ones with
//! `--multicore`, the single-core one without), each laid out in its
//! window, the per-core ones not overlapping, every vector page the same
//! bytes, stripped copies beside them.
//!
//! Needs the Xtensa toolchain (ziglang 0.17.1 from PyPI, the pinned
//! nightly with llvm-tools, binutils-xtensa-lx106): without it the build
//! fails with exit 10 and a message naming what to install.

mod common;
use common::*;
use customop::xtensa::{check, images::Linked};
use neuron_image::{elf::Elf, layout};
use std::path::Path;

const CODE: u32 = 0x8400_0000;
const WINDOW: u32 = 0x20_0000;

fn image(dir: &Path, file: &str, layout_name: &str) -> Linked {
    let path = dir.join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let elf = Elf::parse(&bytes).unwrap();
    Linked { layout: layout::layout(layout_name).unwrap(), path, stripped: None, elf, bytes }
}

#[test]
fn nine_fll_images_of_one_kernel_are_laid_out_in_their_windows() {
    let multi = built("tcm_multicore", &["--target", "q7", "--multicore"]);
    let single = built("tcm_multicore", &["--target", "q7"]);
    let mut all: Vec<Linked> = (0..8).map(|c| image(&multi, &format!("tcm_multicore_cpu{c}.elf"), &format!("fll-cpu{c}"))).collect();
    all.push(image(&single, "tcm_multicore.elf", "fll-single"));

    for (c, im) in all.iter().enumerate() {
        let (lo, hi) = if c < 8 { (CODE + c as u32 * WINDOW, CODE + (c as u32 + 1) * WINDOW) } else { (CODE, CODE + (32 << 20)) };
        let text = im.elf.section(".text").expect(".text");
        assert_eq!(text.addr, lo, "{}: code starts its window", im.path.display());
        for s in im.elf.sections.iter().filter(|s| s.alloc && s.size > 0 && s.name != ".vectors") {
            assert!(s.addr >= lo && s.addr as u64 + s.size as u64 <= hi as u64, "{}: {} at {:#x}+{:#x}", im.path.display(), s.name, s.addr, s.size);
        }
        let v = im.elf.section(".vectors").expect(".vectors");
        assert_eq!(v.addr, 0, "vectors at IRAM 0");
        assert!(v.size > 0x300 && v.size <= 0x1000, "{}: vector page of {} bytes", im.path.display(), v.size);
        assert_eq!(im.elf.entry, im.elf.symbols["register_funcs"], "entry register_funcs");
        for sym in ["relu_multicore_stack_switch", "get_func_ptr", "customop_setup"] {
            let a = im.elf.symbols.get(sym).copied().unwrap_or_else(|| panic!("{sym} in {}", im.path.display()));
            assert!(a >= lo && a < hi, "{sym} in the window");
        }
        // The stripped copy: the same loadable sections, no symbol table.
        let sp = im.path.with_extension("stripped.elf");
        let sb = std::fs::read(&sp).unwrap_or_else(|e| panic!("{}: {e}", sp.display()));
        let stripped = Elf::parse(&sb).unwrap();
        assert!(stripped.symbols.is_empty() && sb.len() < im.bytes.len(), "{} is stripped", sp.display());
        assert_eq!(stripped.section_bytes(&sb, ".text"), im.elf.section_bytes(&im.bytes, ".text"));
    }
    let v0 = all[0].elf.section_bytes(&all[0].bytes, ".vectors").unwrap();
    assert!(all.iter().all(|im| im.elf.section_bytes(&im.bytes, ".vectors").unwrap() == v0), "identical vector pages");
    // The per-core images' code and data are pairwise disjoint (each in its
    // own window) and, with the single image, pass xtask's FLL check.
    let problems = check::fll(&all, &["register_funcs", "relu_multicore_stack_switch"]);
    assert!(problems.is_empty(), "{problems:#?}");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(multi.join("customop.json")).unwrap()).unwrap();
    assert_eq!(schema["target"], "q7");
    assert_eq!(schema["images"].as_array().map(Vec::len), Some(8));
}

#[test]
fn a_misplaced_section_is_a_finding() {
    // The check is not vacuous: an image moved by one window overlaps its
    // neighbour and leaves its own window.
    let multi = built("tcm_multicore", &["--target", "q7", "--multicore"]);
    let mut imgs: Vec<Linked> = (0..2).map(|c| image(&multi, &format!("tcm_multicore_cpu{c}.elf"), &format!("fll-cpu{c}"))).collect();
    for s in imgs[1].elf.sections.iter_mut().filter(|s| s.name == ".text") {
        s.addr -= WINDOW;
    }
    let p = check::fll(&imgs, &[]);
    assert!(p.iter().any(|l| l.contains("fll-cpu1: .text") && l.contains("outside")), "{p:#?}");
    assert!(p.iter().any(|l| l.contains("overlaps")), "{p:#?}");
}

#[test]
fn run_refuses_a_q7_build() {
    let multi = built("tcm_multicore", &["--target", "q7", "--multicore"]);
    let x = npy_file("q7_x.npy", &f32s(&[8], &[1.0; 8])).display().to_string();
    let out = scratch("out").join("q7.npy").display().to_string();
    let r = customop(&["run", &multi.display().to_string(), "relu_multicore", &x, "-o", &out]);
    assert_eq!(r.status.code(), Some(6), "{}", text(&r));
    assert!(text(&r).contains("built for target q7"), "{}", text(&r));
}

#[test]
fn a_missing_xtensa_toolchain_is_a_clear_environment_error() {
    let k = kernels().join("relu2d");
    let out = scratch("no_zig").display().to_string();
    let (c, s) = (k.join("relu.cpp").display().to_string(), k.join("shape.cpp").display().to_string());
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_customop"))
        .args(["build", "--name", "nozig", "--compute", &c, "--shape", &s, "--out", &out, "--target", "q7"])
        .env("PYTHON", "/no/such/python3")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(10), "{}", text(&r));
    assert!(text(&r).contains("pip install ziglang==0.17.1"), "{}", text(&r));
}

/// The C++ standard library in the per-core images: the kernel using
/// libc++ (<vector>, <algorithm>, ...) links into the eight FLL images,
/// which pass the layout check with its new/delete and sort in each
/// core's window.
#[test]
fn a_kernel_using_the_standard_library_makes_valid_fll_images() {
    let multi = built("stdlib", &["--target", "q7", "--multicore"]);
    let all: Vec<Linked> = (0..8).map(|c| image(&multi, &format!("stdlib_cpu{c}.elf"), &format!("fll-cpu{c}"))).collect();
    let problems = check::fll(&all, &["register_funcs", "sort_vector_stack_switch", "_Znwj", "_ZdlPvj"]);
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(all.iter().all(|im| im.elf.symbols.keys().any(|s| s.contains("__sort"))), "libc++'s sort in every image");
}
