//! The profile plugin's instruction counts (`perf/profile.c`: what
//! `customop run --profile` and `cargo xtask perf` count with) against an
//! independent count: QEMU's own log of every block it executes, one
//! instruction per block (`-singlestep -d exec,nochain`). A kernel calls
//! `perf_mark()` around TCM staging through the emulated DMA engine,
//! soft-float compares and a call chain that spills and refills register
//! windows; the plugin's running counts at both markers must equal the
//! log's, exactly: all instructions, the ones outside the DMA engine
//! (which `cargo xtask perf` leaves out), and the library's share by the
//! plugin's class rule.
//!
//! Needs the Xtensa toolchain and qemu-system-xtensa, as
//! tests/device_qemu.rs; skipped, with a message, without QEMU.

mod common;
use common::*;
use neuron_image::elf::Elf;
use std::path::Path;
use std::process::Command;

use customop_emulator::command::QEMU;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Kernel,
    Lib,
    Inherit,
    Skip,
}

/// Code ranges of the image with their class, disjoint, sorted.
struct Classes(Vec<(u64, u64, Class)>);

impl Classes {
    /// The DMA engine uncounted; the runtime's crates the library; the
    /// compiler's helpers (soft float, core) and the board's window
    /// vectors counted as their caller's.
    fn of(elf: &Elf) -> Classes {
        let mut v: Vec<(u64, u64, Class)> = elf
            .table
            .iter()
            .filter(|s| s.size > 0)
            .filter_map(|s| {
                let n = s.name.as_str();
                let c = if n.starts_with(customop::profile::classes::ENGINE) {
                    Class::Skip
                } else if ["neuron_runtime::", "neuroncustomop::", "neuron_hal::", "neuron_capi::"].iter().any(|p| n.starts_with(p)) {
                    Class::Lib
                } else if n.starts_with("compiler_builtins::") || n.starts_with("core::") || n.starts_with("__") || n.starts_with("_Window") {
                    Class::Inherit
                } else {
                    return None;
                };
                Some((s.addr as u64, (s.addr + s.size) as u64, c))
            })
            .collect();
        v.sort_by_key(|r| r.0);
        // Aliases and overlaps: the first range at an address wins.
        let mut out: Vec<(u64, u64, Class)> = Vec::new();
        for r in v {
            if out.last().is_none_or(|l| r.0 >= l.1) {
                out.push(r);
            }
        }
        Classes(out)
    }

    fn class(&self, pc: u64) -> Class {
        self.0.iter().find(|r| r.0 <= pc && pc < r.1).map_or(Class::Kernel, |r| r.2)
    }

    /// The plugin's `classes=` file: `x` uncounted, `L` library, `I`
    /// inherited; with `code` false only the `x` lines.
    fn file(&self, code: bool) -> String {
        self.0
            .iter()
            .filter_map(|&(lo, hi, c)| {
                let k = match c {
                    Class::Skip => 'x',
                    Class::Lib if code => 'L',
                    Class::Inherit if code => 'I',
                    _ => return None,
                };
                Some(format!("{k} {lo:x} {hi:x}\n"))
            })
            .collect()
    }
}

/// The pcs of the blocks core 0 executed, in order, from QEMU's
/// `-d exec,nochain` log: a block QEMU entered but left before its first
/// instruction ("Stopped execution of TB chain before", an exit request)
/// did not run.
fn executed(log: &str) -> Vec<u64> {
    let mut pcs = Vec::new();
    let pc_of = |rest: &str| -> u64 {
        // "... [cs_base/pc/flags/cflags] symbol" or "... [pc] symbol".
        let inside = rest.split('[').nth(1).and_then(|r| r.split(']').next()).unwrap_or_else(|| panic!("log line without [..]: {rest}"));
        let f: Vec<&str> = inside.split('/').collect();
        u64::from_str_radix(f[if f.len() > 1 { 1 } else { 0 }], 16).unwrap_or_else(|e| panic!("{inside}: {e}"))
    };
    for l in log.lines() {
        if let Some(rest) = l.strip_prefix("Trace ") {
            assert!(rest.starts_with("0:"), "one core only: {l}");
            pcs.push(pc_of(rest));
        } else if let Some(rest) = l.strip_prefix("Stopped execution of TB chain before ") {
            assert_eq!(pcs.pop(), Some(pc_of(rest)), "a stopped block that was not the last entered: {l}");
        }
    }
    pcs
}

/// What the plugin's rule gives on the log's instruction stream: at each
/// run of `mark`, the instructions before it (uncounted ones left out)
/// and the library's share of them (class I takes the class of the last
/// instruction outside it).
fn replay(pcs: &[u64], mark: u64, classes: &Classes, skip: bool, code: bool) -> Vec<(u64, u64)> {
    let (mut total, mut lib, mut last) = (0u64, 0u64, Class::Kernel);
    let mut marks = Vec::new();
    for &pc in pcs {
        if pc == mark {
            marks.push((total, lib));
        }
        let c = classes.class(pc);
        if skip && c == Class::Skip {
            continue;
        }
        if code && c != Class::Inherit {
            last = c;
        }
        total += 1;
        if last == Class::Lib {
            lib += 1;
        }
    }
    marks
}

/// `customop run` of the op on one emulated core with `env` set.
fn run(dir: &Path, x: &str, tag: &str, env: &[(&str, String)]) {
    let out = scratch("out").join(format!("{tag}.npy"));
    let mut c = Command::new(env!("CARGO_BIN_EXE_customop"));
    c.args(["run", &dir.display().to_string(), "relu_marked", x, "-o", &out.display().to_string(), "--on", "qemu"]);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{tag}: {}", text(&o));
}

/// The plugin's marker lines `K vcpu total lib`.
fn plugin_marks(file: &Path) -> Vec<(u64, u64)> {
    let t = std::fs::read_to_string(file).unwrap();
    assert_eq!(t.lines().last(), Some("end"), "{t}");
    t.lines()
        .filter_map(|l| {
            let w: Vec<u64> = l.strip_prefix("K ")?.split_whitespace().map(|x| x.parse().unwrap()).collect();
            assert_eq!(w[0], 0, "{l}");
            Some((w[1], w[2]))
        })
        .collect()
}

#[test]
fn the_plugins_counts_equal_qemus_own_instruction_log() {
    if Command::new(QEMU).arg("--version").output().is_err() {
        eprintln!("skipped: {QEMU} is not installed (apt-get install qemu-system-misc); this test needs it");
        return;
    }
    let dir = built("exact_count", &["--target", "qemu"]);
    let image = dir.join("exact_count_qemu.elf");
    let elf = Elf::parse(&std::fs::read(&image).unwrap()).unwrap();
    let mark = elf.table.iter().find(|s| s.name == "perf_mark").expect("perf_mark in the image").addr as u64;
    let classes = Classes::of(&elf);
    let work = scratch("work");
    let so = customop::profile::plugin::built(&work).unwrap();
    let x = values(1000, -2.0, 2.0, 7);
    let xf = npy_file("exact_in.npy", &f32s(&[1000], &x)).display().to_string();

    let log = work.join("exec.log");
    let _ = std::fs::remove_file(&log);
    run(&dir, &xf, "singlestep", &[("CUSTOMOP_QEMU_ARGS", format!("-singlestep -d exec,nochain -D {}", log.display()))]);
    let pcs = executed(&std::fs::read_to_string(&log).unwrap());

    // The region holds what makes counting per block hard: blocks left
    // in the middle for a window exception, and uncounted engine code.
    let (first, second) = {
        let at: Vec<usize> = pcs.iter().enumerate().filter(|p| *p.1 == mark).map(|p| p.0).collect();
        assert_eq!(at.len(), 2, "two markers");
        (at[0], at[1])
    };
    let region = &pcs[first..second];
    let vector = |n: &str| elf.table.iter().find(|s| s.name == n).map(|s| s.addr as u64).unwrap_or_else(|| panic!("no {n}"));
    for v in ["_WindowOverflow8", "_WindowUnderflow8"] {
        assert!(region.contains(&vector(v)), "the region never runs {v}");
    }
    assert!(region.iter().any(|pc| classes.class(*pc) == Class::Skip), "the region never runs the DMA engine");
    assert!(region.len() > 5000, "a region of {} instructions", region.len());

    // Every instruction; without the engine's; and the library's share.
    for (skip, code, tag) in [(false, false, "all"), (true, false, "skip"), (true, true, "classes")] {
        let mf = work.join(format!("marks-{tag}.txt"));
        let _ = std::fs::remove_file(&mf);
        let mut plugin = format!("{},mark=0x{mark:x},marks={}", so.display(), mf.display());
        if skip {
            let cf = work.join(format!("classes-{tag}.txt"));
            std::fs::write(&cf, classes.file(code)).unwrap();
            plugin.push_str(&format!(",classes={}", cf.display()));
        }
        run(&dir, &xf, tag, &[("CUSTOMOP_QEMU_PLUGIN", plugin), ("CUSTOMOP_QEMU_PLUGIN_LOG", work.join("plugin.log").display().to_string())]);
        let got = plugin_marks(&mf);
        let want = replay(&pcs, mark, &classes, skip, code);
        eprintln!("{tag}: plugin {got:?}, QEMU's log {want:?}");
        assert_eq!(got, want, "{tag}: the plugin's counts at the markers (total, library) against QEMU's log");
        if code {
            assert!(want[1].1 > want[0].1 && want[1].1 - want[0].1 < want[1].0 - want[0].0, "a library share strictly inside the region");
        }
    }
}
