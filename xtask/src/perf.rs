//! Performance: `cargo xtask bench-report` (ratios of the Criterion host
//! benchmarks) and `cargo xtask perf` (executed-instruction counts on the
//! emulated core, the runtime's footprint in a linked image and its stack
//! use, checked against `perf/budgets.toml`; also a step of `test`).
//!
//! Counting: `kernels/perf-image` calls `perf_mark()` around every measured
//! operation; the TCG plugin `perf/profile.c`, the instrument behind
//! `customop run --profile` (built by customop-emulator, as customop
//! builds it), counts every executed instruction and, with
//! `marks=FILE`, writes the running count at every run of `perf_mark`'s
//! first instruction. Instructions of the QEMU HAL's software DMA engine
//! (`neuron_hal::xtensa::emulated::*`, hardware on the Q7) are not counted.
//! Exact and deterministic: the same image gives the same counts. The C++
//! figures (`cpp_*`, [`crate::perf_cpp`]) use the same plugin per core,
//! with the library's share.

use crate::{artifact_dir, build_xtensa, link, root, xtensa_dir, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const BUDGETS: &str = "perf/budgets.toml";
/// The prefix of the QEMU HAL's software DMA engine's symbols (not counted).
pub(crate) const ENGINE: &str = "neuron_hal::xtensa::emulated::";
const KERNELS_MANIFEST: &str = "kernels/Cargo.toml";
/// A count may exceed its budget by this factor before the check fails.
const SLACK: f64 = 1.10;

// ---------------------------------------------------------------- bench-report

/// The median of a Criterion `estimates.json` (ns).
fn median_ns(path: &Path) -> Option<f64> {
    let s = std::fs::read_to_string(path).ok()?;
    let at = s.find("\"median\"")?;
    let rest = &s[at..];
    let p = rest.find("\"point_estimate\":")? + "\"point_estimate\":".len();
    let num: String = rest[p..].trim_start().chars().take_while(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')).collect();
    num.parse().ok()
}

/// `cargo xtask bench-report`: for every group `target/criterion/<g>/` with
/// `ours` and `native`, the ratio of the medians. Prints the table and
/// writes it to `target/criterion/ratios.md`.
pub fn bench_report() -> Result {
    let dir = crate::xtask_target_base().join("criterion");
    let mut groups: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e} (run `cargo bench -p neuron-bench` first)", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("ours/new/estimates.json").exists())
        .collect();
    groups.sort();
    let mut md = String::from("| group | ours (median) | native (median) | ours / native (time) | native / ours (speed) |\n|---|---:|---:|---:|---:|\n");
    for g in &groups {
        let name = g.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (Some(o), Some(n)) = (median_ns(&g.join("ours/new/estimates.json")), median_ns(&g.join("native/new/estimates.json"))) else {
            continue;
        };
        md.push_str(&format!("| {name} | {} | {} | {:.2}× | {:.3}× |\n", fmt_ns(o), fmt_ns(n), o / n, n / o));
    }
    print!("{md}");
    let out = dir.join("ratios.md");
    customop_outpath::write(&out, md.as_bytes()).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("xtask: written to {}", out.display());
    Ok(())
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.2} ns")
    }
}

// ---------------------------------------------------------------- perf

/// One measured figure: name, value, unit.
type Figures = BTreeMap<String, u64>;

fn perf_dir() -> PathBuf {
    xtensa_dir().join("perf")
}

/// The defined symbols of `elf`: (address, size, demangled name), what
/// `nm -S -C` lists.
pub(crate) fn nm(elf: &Path) -> Result<Vec<(u64, u64, String)>> {
    let bytes = std::fs::read(elf).map_err(|e| format!("{}: {e}", elf.display()))?;
    let img = crate::elf::Elf::parse(&bytes).map_err(|e| format!("{}: {e}", elf.display()))?;
    Ok(img.table.into_iter().map(|s| (s.addr as u64, s.size as u64, s.name)).collect())
}

/// The plugin, built in the perf folder when its sources changed.
pub(crate) fn plugin() -> Result<PathBuf> {
    customop_emulator::plugin::built(&perf_dir()).map_err(|e| e.to_string())
}

/// The plugin's `classes=` lines that leave the software DMA engine of
/// `syms` uncounted.
pub(crate) fn engine_lines(syms: &[(u64, u64, String)]) -> String {
    syms.iter().filter(|s| s.2.starts_with(ENGINE) && s.1 > 0).map(|(a, sz, _)| format!("x {a:x} {:x}\n", a + sz)).collect()
}

/// The running totals of a `marks=` file: per line (vCPU, total, library).
pub(crate) fn read_marks(path: &Path) -> Result<Vec<(u32, u64, u64)>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if text.lines().last() != Some("end") {
        return Err(format!("{}: incomplete (the emulated run did not exit normally)", path.display()));
    }
    Ok(text
        .lines()
        .filter_map(|l| {
            let w: Vec<u64> = l.strip_prefix("K ")?.split_whitespace().filter_map(|x| x.parse().ok()).collect();
            match w[..] {
                [v, t, lib] => Some((v as u32, t, lib)),
                _ => None,
            }
        })
        .collect())
}

/// Builds and links the perf image, runs it under the plugin; returns the
/// instruction counts per region (markers' cost subtracted) and the
/// painted stack depth.
fn measure() -> Result<Figures> {
    let manifest = root().join(KERNELS_MANIFEST).display().to_string();
    build_xtensa(&["--release".into(), "--manifest-path".into(), manifest, "-p".into(), "perf-image".into()])?;
    let elf = xtensa_dir().join("images/perf-image.elf");
    link("qemu", &elf, None, &[], &[artifact_dir(true).join("libperf_image.a")])?;
    let syms = nm(&elf)?;
    let (f, names) = run_image(&elf, &syms, None)?;
    // `PERF_PROFILE=<region>`: executed instructions of that region per
    // function (a second run with the plugin's `region=K`).
    if let Ok(region) = std::env::var("PERF_PROFILE") {
        let k = names.iter().position(|n| *n == region).ok_or_else(|| format!("PERF_PROFILE: no region {region:?} (have {names:?})"))?;
        run_image(&elf, &syms, Some(k))?;
    }
    Ok(f)
}

/// Per-function totals of the plugin's region lines (`P addr n`, summed
/// per address: n may be negative), printed biggest first, then the
/// watched calls (`W from to n`).
fn print_profile(log: &str, syms: &[(u64, u64, String)]) {
    let mut funcs: Vec<&(u64, u64, String)> = syms.iter().filter(|s| s.1 > 0).collect();
    funcs.sort_by_key(|s| s.0);
    let mut per: BTreeMap<&str, i64> = BTreeMap::new();
    let mut total = 0;
    for l in log.lines().filter_map(|l| l.strip_prefix("P ")) {
        let mut w = l.split_whitespace();
        let (Some(a), Some(n)) = (w.next().and_then(|a| u64::from_str_radix(a, 16).ok()), w.next().and_then(|n| n.parse::<i64>().ok())) else {
            continue;
        };
        let i = funcs.partition_point(|s| s.0 <= a);
        let name = i.checked_sub(1).map(|i| funcs[i]).filter(|s| a < s.0 + s.1).map_or("?", |s| s.2.as_str());
        *per.entry(name).or_default() += n;
        total += n;
    }
    per.retain(|_, n| *n != 0);
    let mut v: Vec<_> = per.into_iter().collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1));
    eprintln!("profile: {total} instructions (the opening marker's call included, as in the region's raw count)");
    for (name, n) in v {
        eprintln!("{n:>8}  {name}");
    }
    let name_of = |a: u64| {
        let i = funcs.partition_point(|s| s.0 <= a);
        i.checked_sub(1).map(|i| funcs[i]).filter(|s| a < s.0 + s.1).map_or("?", |s| s.2.as_str())
    };
    for l in log.lines().filter_map(|l| l.strip_prefix("W ")) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let hex = |i: usize| w.get(i).and_then(|x| u64::from_str_radix(x, 16).ok());
        if let (Some(from), Some(to), Some(n)) = (hex(0), hex(1), w.get(2).and_then(|n| n.parse::<u64>().ok())) {
            eprintln!("call {n:>5}x  {} -> {}", name_of(from), name_of(to));
        }
    }
}

/// One run of the perf image: the figures and the region names, or with
/// `prof = Some(k)` the per-function profile of region k (printed).
fn run_image(elf: &Path, syms: &[(u64, u64, String)], prof: Option<usize>) -> Result<(Figures, Vec<String>)> {
    let so = plugin()?;
    let mark = syms.iter().find(|s| s.2 == "perf_mark").ok_or("perf-image: no perf_mark symbol")?.0;
    let classes = perf_dir().join("classes.txt");
    customop_outpath::write(&classes, engine_lines(syms).as_bytes()).map_err(|e| format!("{}: {e}", classes.display()))?;
    let log = perf_dir().join("marks.txt");
    let _ = std::fs::remove_file(&log);
    let mut args = format!("{},mark=0x{mark:x},marks={},classes={}", so.display(), log.display(), classes.display());
    if let Some(k) = prof {
        args.push_str(&format!(",region={k}"));
        // `PERF_WATCH=name,name`: the calls into these functions per call site.
        for w in std::env::var("PERF_WATCH").unwrap_or_default().split(',').filter(|w| !w.is_empty()) {
            if let Some(s) = syms.iter().find(|s| s.2 == w && s.1 > 0) {
                args.push_str(&format!(",watch=0x{:x}", s.0));
            }
        }
    }
    let mut cmd = crate::qemu::command(elf, "sim", 1, &[]);
    cmd.args(["-plugin", &args]).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    eprintln!("xtask: running {cmd:?}");
    let mut child = cmd.spawn().map_err(|e| format!("{}: {e}", crate::qemu::QEMU))?;
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("perf image: timeout (60 s)".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !status.success() || !stdout.contains("perf: done") {
        return Err(format!("perf image failed ({status}):\n{stdout}{}", String::from_utf8_lossy(&out.stderr)));
    }
    let names: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("perf: region ")).map(str::trim).collect();
    let log_text = std::fs::read_to_string(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    if prof.is_some() {
        print_profile(&log_text, syms);
    }
    let marks: Vec<u64> = read_marks(&log)?.into_iter().map(|m| m.1).collect();
    if marks.len() != 2 * names.len() || names.first() != Some(&"empty") {
        return Err(format!("perf: {} regions but {} marks", names.len(), marks.len()));
    }
    let raw: BTreeMap<&str, u64> = names.iter().enumerate().map(|(k, n)| (*n, marks[2 * k + 1] - marks[2 * k])).collect();
    let r = |n: &str| raw.get(n).copied().unwrap_or(0).saturating_sub(raw["empty"]);
    let mut f = Figures::new();
    f.insert("translate_hit_recent".into(), r("translate_hit_recent"));
    let worst = ["translate_hit_recent", "translate_hit_dyn0", "translate_hit_dyn1", "translate_hit_sbuf", "translate_hit_scratch"]
        .iter()
        .map(|n| r(n))
        .max()
        .unwrap_or(0);
    f.insert("translate_hit_worst".into(), worst);
    f.insert("rust_translate_hit_recent".into(), r("rust_translate_hit_recent"));
    let worst = ["rust_translate_hit_recent", "rust_translate_hit_dyn0", "rust_translate_hit_dyn1", "rust_translate_hit_sbuf", "rust_translate_hit_scratch"]
        .iter()
        .map(|n| r(n))
        .max()
        .unwrap_or(0);
    f.insert("rust_translate_hit_worst".into(), worst);
    // Every record's hit on its own row (the worst rows above keep the
    // slowest of them).
    for rec in ["dyn0", "dyn1", "sbuf", "scratch"] {
        for pre in ["translate_hit_", "rust_translate_hit_"] {
            let n = format!("{pre}{rec}");
            let v = r(&n);
            f.insert(n, v);
        }
    }
    f.insert("translate_miss_excl_write".into(), r("translate_miss").saturating_sub(r("window_register_write")));
    f.insert("accessor_read".into(), r("accessor_read"));
    f.insert("accessor_read_first".into(), r("accessor_read_first"));
    f.insert("accessor_read_2d".into(), r("accessor_read_2d"));
    f.insert("accessor_write_2d".into(), r("accessor_write_2d"));
    f.insert("stream_read".into(), r("stream_read"));
    f.insert("stream_refill_4k".into(), r("stream_read_refill").saturating_sub(r("stream_read")));
    f.insert("stream_read_into_first_256".into(), r("stream_read_into_first"));
    f.insert("stream_read_into_256".into(), r("stream_read_into"));
    f.insert("invocation_2t_4k".into(), r("invocation"));
    f.insert("launch_2t_4k".into(), r("launch"));
    let stack = stdout.lines().find_map(|l| l.strip_prefix("perf: stack ")?.trim().parse().ok()).ok_or("perf: no stack line")?;
    f.insert("stack_custom_op_path".into(), stack);
    Ok((f, names.iter().map(|n| n.to_string()).collect()))
}

/// Runtime text and data in the linked example image (the Q7 FLL image of
/// the axpy op, `--gc-sections`): the input sections kept in the map file,
/// summed per archive member; everything but the kernel (`axpy_op`,
/// `fll_image`) and the board's vectors (`q7_qemu_board`) is the runtime
/// (its crates, and what of `core`/`alloc`/`compiler_builtins` it pulls).
/// Text is `.text`/`.literal`/`.rodata`, data is the initialised
/// `.data`/`.sdata` (bytes the image carries); zero-initialised
/// `.bss`/`.sbss` occupies RAM but not the image, so it is returned
/// apart and not in the footprint. Returns (text, data, bss) bytes and the
/// per-crate breakdown of text + data.
pub fn footprint(map: &Path) -> Result<(u64, u64, u64, BTreeMap<String, u64>)> {
    let text = std::fs::read_to_string(map).map_err(|e| format!("{}: {e}", map.display()))?;
    let body = text.split("Linker script and memory map").nth(1).ok_or("map: no memory map")?;
    let (mut code, mut data, mut bss) = (0u64, 0u64, 0u64);
    let mut per: BTreeMap<String, u64> = BTreeMap::new();
    let mut section = String::new();
    for line in body.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.is_empty() {
            continue;
        }
        if w[0].starts_with('.') && line.starts_with(' ') {
            section = w[0].to_string();
        }
        let n = w.len();
        if n < 3 || !w[n - 3].starts_with("0x") || !w[n - 2].starts_with("0x") || !w[n - 1].contains(".o") {
            continue;
        }
        let Ok(size) = u64::from_str_radix(w[n - 2].trim_start_matches("0x"), 16) else { continue };
        let member = w[n - 1].rsplit('(').next().unwrap_or(w[n - 1]).trim_end_matches(')');
        let krate = member.split(['-', '.']).next().unwrap_or(member).to_string();
        if matches!(krate.as_str(), "axpy_op" | "fll_image" | "q7_qemu_board") || size == 0 {
            continue;
        }
        let is_code = [".text", ".literal", ".rodata"].iter().any(|p| section.starts_with(p));
        let is_data = [".data", ".sdata"].iter().any(|p| section.starts_with(p));
        let is_bss = [".bss", ".sbss", "COMMON"].iter().any(|p| section.starts_with(p));
        if is_code {
            code += size;
        } else if is_data {
            data += size;
        } else if is_bss {
            bss += size;
            continue;
        } else {
            continue;
        }
        *per.entry(krate).or_default() += size;
    }
    Ok((code, data, bss, per))
}

/// The budgets: `name = number` lines (comments with `#`).
pub(crate) fn budgets() -> Result<BTreeMap<String, u64>> {
    let p = root().join(BUDGETS);
    let s = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut b = BTreeMap::new();
    // Only the `[budgets]` table: `[sim_bench]` (ratios) is sim-bench's.
    let mut inside = false;
    for l in s.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty()) {
        if l.starts_with('[') {
            inside = l == "[budgets]";
            continue;
        }
        if !inside {
            continue;
        }
        let (k, v) = l.split_once('=').ok_or_else(|| format!("{BUDGETS}: bad line {l:?}"))?;
        b.insert(k.trim().to_string(), v.trim().replace('_', "").parse().map_err(|e| format!("{BUDGETS}: {k}: {e}"))?);
    }
    Ok(b)
}

/// `cargo xtask perf` and the `test` step: measures, prints the table
/// (also written to `target/xtensa/perf/report.md`), fails when a figure
/// exceeds its budget by more than 10 %.
pub fn check() -> Result {
    let mut f = measure()?;
    crate::perf_cpp::measure(&mut f)?;
    // The example image as the Q7 runs it (rebuilt and relinked: cheap
    // when up to date; the FLL step of `test` checks it).
    crate::target::build_images()?;
    crate::target::fll_images()?;
    let map = xtensa_dir().join("images/axpy-fll-cpu0.elf.map");
    let (code, data, bss, per) = footprint(&map)?;
    f.insert("runtime_text".into(), code);
    f.insert("runtime_data".into(), data);
    f.insert("runtime_bss".into(), bss);
    f.insert("runtime_footprint".into(), code + data);
    let b = budgets()?;
    let mut md = String::from("| metric | measured | budget | status |\n|---|---:|---:|---|\n");
    let mut over = Vec::new();
    for (k, v) in &f {
        let (budget, status) = match b.get(k) {
            Some(&lim) if (*v as f64) > lim as f64 * SLACK => {
                over.push(format!("{k} = {v} > {lim} + 10 %"));
                (lim.to_string(), "OVER BUDGET")
            }
            Some(&lim) => (lim.to_string(), "ok"),
            None => ("-".into(), "no budget"),
        };
        md.push_str(&format!("| {k} | {v} | {budget} | {status} |\n"));
    }
    md.push_str("\nruntime bytes per crate (text + data): ");
    md.push_str(&per.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", "));
    md.push('\n');
    eprint!("{md}");
    let out = perf_dir().join("report.md");
    customop_outpath::write(&out, md.as_bytes()).map_err(|e| format!("{}: {e}", out.display()))?;
    let missing: Vec<_> = b.keys().filter(|k| !f.contains_key(*k)).collect();
    if !missing.is_empty() {
        return Err(format!("budgets without a measurement: {missing:?}"));
    }
    if over.is_empty() {
        Ok(())
    } else {
        Err(over.join("; "))
    }
}
