//! The C++ figures of `cargo xtask perf` (names `cpp_*`): vendor-style
//! kernels (`perf/cpp/`) built by `customop build --target qemu` (the open
//! toolchain every C++ kernel uses) and run by `customop run --on qemu`
//! under the counting plugin (`perf/profile.c`, the instrument of
//! `customop run --profile`) with code classes (`L`/`I` lines of its
//! `classes=FILE`): per emulated core, the executed instructions and the
//! share of them inside the library.
//!
//! "Library" is the code of the runtime's crates in the linked image
//! (`neuroncustomop`, `neuron_runtime`, `neuron_hal` and their
//! dependencies), found by input section in the link map. `core`, `alloc`,
//! `compiler_builtins` and the board (window vectors) count as their
//! caller's: `memcpy` called by the runtime is the library's, a soft-float
//! compare called by the kernel is the kernel's. The QEMU HAL's software
//! DMA engine (hardware on the Q7) is not counted, as in the Rust figures.

use crate::main_job::{npy_f32, read_npy_f32};
use crate::{root, run, xtask_target_base, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Elements of the end-to-end ReLU (16 chunks of 1024; 2 per core on 8).
pub(crate) const RELU_ELEMS: usize = 16 * 1024;
/// The 1-D and 2-D tensors of the element figures.
const X1: [usize; 1] = [2048];
const X2: [usize; 2] = [64, 33];
/// An HBM address the inline translate hit is measured on (translated
/// to, never dereferenced: the emulator backs no HBM there).
const HBM: u64 = neuron_hal::QEMU.hbm_soc_base + (1 << 30);

/// Crates whose code is the library's.
const LIBRARY_CRATES: &[&str] =
    &["neuroncustomop", "neuron_capi", "neuron_runtime", "neuron_hal", "heapless", "hash32", "stable_deref_trait", "bitflags", "libm", "half"];
/// Crates whose code counts as its caller's.
const INHERIT_CRATES: &[&str] = &["core", "alloc", "compiler_builtins", "q7_qemu_board"];

/// One region of one core: (total, library) instructions, markers' cost
/// subtracted.
type Counts = (u64, u64);
/// Per core, its regions in the order they ran.
type CoreRegions = Vec<Vec<(String, Counts)>>;

fn customop_bin() -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo).current_dir(root()).args(["build", "--release", "-p", "customop"]))?;
    Ok(xtask_target_base().join("release/customop"))
}

fn work() -> PathBuf {
    crate::xtensa_dir().join("perf/cpp")
}

/// `customop build --target qemu` of `perf/cpp` (multicore or not).
fn build(bin: &Path, multicore: bool) -> Result<PathBuf> {
    let src = root().join("perf/cpp");
    let dir = work().join(if multicore { "cpp_perf_mc" } else { "cpp_perf" });
    let mut c = Command::new(bin);
    c.current_dir(root()).args(["build", "--name", "cpp_perf", "--target", "qemu"]);
    if multicore {
        c.arg("--multicore");
    }
    c.arg("--compute").arg(src.join("perf_ops.cpp")).arg("--shape").arg(src.join("shape.cpp")).arg("--out").arg(&dir);
    run(&mut c)?;
    Ok(dir)
}

/// The link map's input sections: (address, size, archive member).
fn map_sections(map: &Path) -> Result<Vec<(u64, u64, String)>> {
    let text = std::fs::read_to_string(map).map_err(|e| format!("{}: {e}", map.display()))?;
    let body = text.split("Linker script and memory map").nth(1).ok_or("map: no memory map")?;
    let mut out = Vec::new();
    for line in body.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let n = w.len();
        if n < 3 || !w[n - 3].starts_with("0x") || !w[n - 2].starts_with("0x") || !w[n - 1].contains(".o") {
            continue;
        }
        let (Ok(a), Ok(sz)) = (u64::from_str_radix(w[n - 3].trim_start_matches("0x"), 16), u64::from_str_radix(w[n - 2].trim_start_matches("0x"), 16)) else {
            continue;
        };
        if sz == 0 || a == 0 {
            continue;
        }
        // `lib.a(member.o)` for an archive member, the path for an object.
        let member = w[n - 1].rsplit('(').next().unwrap_or(w[n - 1]).trim_end_matches(')');
        out.push((a, sz, member.to_string()));
    }
    Ok(out)
}

/// The crate an archive member belongs to (`neuron_runtime-<hash>...`).
fn crate_of(member: &str) -> &str {
    member.split(['-', '.']).next().unwrap_or(member)
}

/// Writes the plugin's class file for `elf` (from `elf.map`): the code
/// classes, and the DMA engine left uncounted.
fn class_file(elf: &Path, out: &Path) -> Result {
    let mut map = elf.as_os_str().to_owned();
    map.push(".map");
    let mut lines = crate::perf::engine_lines(&crate::perf::nm(elf)?);
    for (a, sz, member) in map_sections(Path::new(&map))? {
        let k = crate_of(&member);
        let cls = if LIBRARY_CRATES.contains(&k) {
            'L'
        } else if INHERIT_CRATES.contains(&k) {
            'I'
        } else {
            continue;
        };
        lines.push_str(&format!("{cls} {a:x} {:x}\n", a + sz));
    }
    customop_outpath::write(out, lines.as_bytes()).map_err(|e| format!("{}: {e}", out.display()))
}

/// The `-plugin` argument for `elf`: marker, its counts' file, classes.
fn plugin_arg(elf: &Path, classes: &Path, marks: &Path) -> Result<String> {
    let syms = crate::perf::nm(elf)?;
    let mark = syms.iter().find(|s| s.2 == "perf_mark").ok_or_else(|| format!("{}: no perf_mark symbol", elf.display()))?.0;
    Ok(format!("{},mark=0x{mark:x},marks={},classes={}", crate::perf::plugin()?.display(), marks.display(), classes.display()))
}

/// Runs `op` of the build in `dir` on `cores` cores with `inputs`; returns
/// the output and, per core, the regions in order with their counts.
fn run_op(bin: &Path, dir: &Path, op: &str, inputs: &[(&[usize], Vec<f32>)], values: &[u64], cores: u32) -> Result<(Vec<f32>, CoreRegions)> {
    let elf = dir.join("cpp_perf_qemu.elf");
    let classes = dir.join("classes.txt");
    class_file(&elf, &classes)?;
    let marks_file = dir.join(format!("{op}-{cores}.marks"));
    let _ = std::fs::remove_file(&marks_file);
    let plugin = plugin_arg(&elf, &classes, &marks_file)?;
    // customop wants a log with a plugin; the counts go to `marks_file`.
    let log = dir.join(format!("{op}-{cores}.log"));
    let mut c = Command::new(bin);
    c.current_dir(root()).arg("run").arg(dir).arg(op);
    for (k, (shape, v)) in inputs.iter().enumerate() {
        let p = dir.join(format!("{op}-in{k}.npy"));
        customop_outpath::write(&p, &npy_f32(shape, v)?).map_err(|e| format!("{}: {e}", p.display()))?;
        c.arg(p);
    }
    for v in values {
        c.arg(v.to_string());
    }
    let y = dir.join(format!("{op}-{cores}-out.npy"));
    c.arg("-o").arg(&y).args(["--on", "qemu", "--cores", &cores.to_string()]);
    c.env("CUSTOMOP_QEMU_PLUGIN", &plugin).env("CUSTOMOP_QEMU_PLUGIN_LOG", &log);
    eprintln!("xtask: running {c:?}");
    let out = c.output().map_err(|e| format!("{}: {e}", bin.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("customop run {op} on {cores} core(s) failed ({}):\n{stdout}{}", out.status, String::from_utf8_lossy(&out.stderr)));
    }
    // The report: `qemu core C: ...` then its `  printf: ...` lines.
    let mut names: Vec<Vec<String>> = vec![Vec::new(); cores as usize];
    let mut core = None;
    for l in stdout.lines() {
        if let Some(r) = l.strip_prefix("qemu core ") {
            core = r.split(':').next().and_then(|c| c.trim().parse::<usize>().ok());
        } else if let (Some(c), Some(n)) = (core, l.trim_start().strip_prefix("printf: perf: region ")) {
            names.get_mut(c).ok_or("perf: core out of range")?.push(n.trim().to_string());
        }
    }
    let mut marks: Vec<Vec<Counts>> = vec![Vec::new(); cores as usize];
    for (v, t, lib) in crate::perf::read_marks(&marks_file)? {
        marks.get_mut(v as usize).ok_or("perf: mark of an unknown vCPU")?.push((t, lib));
    }
    let mut per_core = Vec::new();
    for (c, (n, m)) in names.iter().zip(&marks).enumerate() {
        if m.len() != 2 * n.len() || n.first().map(String::as_str) != Some("empty") {
            return Err(format!("perf: core {c} of {op}: {} regions but {} marks", n.len(), m.len()));
        }
        let raw: Vec<Counts> = (0..n.len()).map(|k| (m[2 * k + 1].0 - m[2 * k].0, m[2 * k + 1].1 - m[2 * k].1)).collect();
        let empty = raw[0];
        per_core.push(n.iter().zip(&raw).map(|(name, r)| (name.clone(), (r.0.saturating_sub(empty.0), r.1.saturating_sub(empty.1)))).collect());
    }
    Ok((read_npy_f32(&y)?, per_core))
}

fn region(v: &[(String, Counts)], name: &str) -> Result<Counts> {
    v.iter().find(|r| r.0 == name).map(|r| r.1).ok_or_else(|| format!("perf: no region {name}"))
}

/// Per element, in thousandths of an instruction (budgets are integers).
fn milli(n: u64, elems: usize) -> u64 {
    (n * 1000 + elems as u64 / 2) / elems as u64
}

fn relu_input() -> Vec<f32> {
    (0..RELU_ELEMS).map(|i| ((i * 7919) % 2001) as f32 / 100.0 - 10.0).collect()
}

fn check_relu(x: &[f32], y: &[f32], what: &str) -> Result {
    let bad = x.iter().zip(y).filter(|(a, b)| (if **a > 0.0 { **a } else { 0.0 }).to_bits() != b.to_bits()).count();
    if y.len() != x.len() || bad != 0 {
        return Err(format!("perf: {what}: the output is not relu of the input ({bad} of {} differ)", x.len()));
    }
    Ok(())
}

/// Measures every `cpp_*` figure.
pub(crate) fn measure(f: &mut BTreeMap<String, u64>) -> Result {
    // The C++ toolchain and QEMU: what the main job needs.
    crate::preflight::check(crate::preflight::For::MainJob)?;
    let bin = customop_bin()?;
    std::fs::create_dir_all(work()).map_err(|e| format!("{}: {e}", work().display()))?;
    let single = build(&bin, false)?;
    let multi = build(&bin, true)?;

    // One element through the accessors.
    let x1: Vec<f32> = (0..X1[0]).map(|i| i as f32 + 0.5).collect();
    let x2: Vec<f32> = (0..X2[0] * X2[1]).map(|i| -(i as f32) - 0.25).collect();
    let (y, cores) = run_op(&bin, &single, "acc_elem", &[(&X1[..], x1.clone()), (&X2[..], x2.clone())], &[HBM], 1)?;
    if y.get(5) != Some(&x1[5]) || y.get(6) != Some(&x2[3 * X2[1] + 4]) || y.get(7) != Some(&1.0) {
        return Err(format!("perf: acc_elem: wrong elements ({:?}, {:?}, {:?})", y.get(5), y.get(6), y.get(7)));
    }
    for name in ["cpp_acc_read_1d", "cpp_acc_write_1d", "cpp_acc_read_2d", "cpp_acc_write_2d", "cpp_translate_hit_inline"] {
        let (t, lib) = region(&cores[0], name)?;
        f.insert(name.into(), t);
        f.insert(format!("{name}_lib"), lib);
    }

    // The end-to-end ReLU: per-element accessor and TCM on one core, TCM
    // on eight (per element of the whole tensor on the busiest core: the
    // cluster's critical path).
    let x = relu_input();
    let shape = [RELU_ELEMS];
    let (y, cores) = run_op(&bin, &single, "relu_acc", &[(&shape[..], x.clone())], &[], 1)?;
    check_relu(&x, &y, "relu_acc")?;
    let (t, lib) = region(&cores[0], "cpp_relu_acc")?;
    f.insert("cpp_relu_acc_per_elem_milli".into(), milli(t, RELU_ELEMS));
    f.insert("cpp_relu_acc_lib_per_elem_milli".into(), milli(lib, RELU_ELEMS));
    let (y, cores) = run_op(&bin, &single, "relu_tcm", &[(&shape[..], x.clone())], &[], 1)?;
    check_relu(&x, &y, "relu_tcm on 1 core")?;
    let (t, lib) = region(&cores[0], "cpp_relu_tcm")?;
    f.insert("cpp_relu_tcm1_per_elem_milli".into(), milli(t, RELU_ELEMS));
    f.insert("cpp_relu_tcm1_lib_per_elem_milli".into(), milli(lib, RELU_ELEMS));
    let (y, cores) = run_op(&bin, &multi, "relu_tcm", &[(&shape[..], x.clone())], &[], 8)?;
    check_relu(&x, &y, "relu_tcm on 8 cores")?;
    let per: Vec<Counts> = cores.iter().map(|c| region(c, "cpp_relu_tcm")).collect::<Result<_>>()?;
    let busiest = per.iter().copied().max_by_key(|c| c.0).unwrap_or_default();
    f.insert("cpp_relu_tcm8_per_elem_milli".into(), milli(busiest.0, RELU_ELEMS));
    f.insert("cpp_relu_tcm8_lib_per_elem_milli".into(), milli(busiest.1, RELU_ELEMS));
    f.insert("cpp_relu_tcm8_all_cores_per_elem_milli".into(), milli(per.iter().map(|c| c.0).sum(), RELU_ELEMS));
    Ok(())
}
