//! The profile's figures (per core, per line), the files written from
//! them (`profile.json`, `flamegraph.svg` from folded stacks through
//! `inferno`, `trace.json` in the Chrome trace event format) and the
//! report's text.

use super::model::{Model, MODEL};
use super::raw::Raw;
use crate::error::{Error, ErrorKind, Result};
use customop_symbols::{Frame, Lines, Origin};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The profile's JSON file.
pub const PROFILE_JSON: &str = "profile.json";
/// The flame graph.
pub const FLAMEGRAPH: &str = "flamegraph.svg";
/// The trace of the cores on one time axis.
pub const TRACE: &str = "trace.json";
/// Lines the report prints.
pub const TOP_LINES: usize = 10;
/// HBM window accesses from which the report advises staging.
pub const ADVICE_MIN_HBM: u64 = 1024;

/// One core's figures.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Core {
    pub core: u32,
    pub instructions: u64,
    /// Of which the library's (runtime, its headers, compiler builtins).
    pub library_instructions: u64,
    pub hbm_window_accesses: u64,
    pub tcm_accesses: u64,
    pub stack_accesses: u64,
    pub dma_bytes: u64,
    pub dma_descriptors: u64,
    pub dma_to_tcm_bytes: u64,
    pub dma_to_hbm_bytes: u64,
    pub modeled_ns: f64,
}

/// One source line's figures, summed over the cores.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Line {
    pub file: String,
    pub line: u32,
    pub function: String,
    /// The library's line (else the kernel's).
    pub library: bool,
    /// This line's instructions: a kernel line's own and those of the
    /// library's code it led to (the functions it called, until they
    /// returned); a library line's, those no kernel line led to (the
    /// runtime's before the kernel and after it).
    pub instructions: u64,
    /// Of [`Line::instructions`], the library's.
    pub library_instructions: u64,
    pub hbm_window_accesses: u64,
    pub tcm_accesses: u64,
    /// Bytes the DMA engine moved for this line: its descriptors'
    /// transfers began after this line's code was the kernel's last to
    /// run (a `tensor_to_tcm` call's bytes go to its line). Not in
    /// `modeled_ns`: the DMA's time is the cores' and the trace's.
    pub dma_bytes: u64,
    pub modeled_ns: f64,
    /// Of the op's summed modeled time.
    pub share: f64,
}

/// A whole profile, as `profile.json` holds it.
#[derive(Clone, Debug, Serialize)]
pub struct Profile {
    /// The op's modeled time: the slowest core's.
    pub modeled_ns: f64,
    pub model: Model,
    pub cores: Vec<Core>,
    /// Heaviest first.
    pub lines: Vec<Line>,
    /// Folded stacks (`core N;kernel;file:line;library...` ps, see
    /// [`folded_stack`]).
    #[serde(skip)]
    pub folded: Vec<String>,
    /// Per core, per outermost function: modeled ns (the trace).
    #[serde(skip)]
    pub functions: BTreeMap<u32, Vec<(String, f64)>>,
}

impl Profile {
    /// The kernel's heaviest source line (line 0, code the compiler made
    /// without a line, is not one).
    pub fn hottest_kernel_line(&self) -> Option<&Line> {
        self.lines.iter().find(|l| !l.library && l.line > 0)
    }
}

/// The line an address is charged to (of its frames, innermost first):
/// its innermost frame of the op's own code, the kernel's or its generated
/// wrapper's (so a library header's code inlined into the kernel counts
/// for the kernel's line that used it), else its innermost frame, the
/// library's.
fn charged(frames: &[Frame]) -> LineKey {
    let (f, library) = match frames.iter().find(|f| f.origin() != Origin::Library) {
        Some(f) => (f, false),
        None => (frames.first().expect("never empty"), true),
    };
    (f.file.clone().unwrap_or_default(), f.line.unwrap_or(0), f.function.clone(), library)
}

/// A line's key: file ("" without DWARF), line (0 without one), function,
/// library's.
type LineKey = (String, u32, String, bool);

/// A flame graph frame's text: the folded format's separator is `;`.
fn label(s: &str) -> String {
    s.replace(';', ":")
}

/// The folded stack of the op's own code at `frames` (innermost first),
/// from the kernel up: the author's outermost frame (else the op's
/// outermost, a generated wrapper's), then inward each frame's function
/// and, after each of the op's own, its line; the library's frames (its
/// headers inlined there) by function above the line that used them.
/// None when no frame is the op's own.
fn kernel_stack(frames: &[Frame]) -> Option<String> {
    let own = |f: &Frame| f.origin() != Origin::Library;
    let root = frames.iter().rposition(Frame::is_authors).or_else(|| frames.iter().rposition(own))?;
    let mut parts = Vec::new();
    for f in frames[..=root].iter().rev() {
        parts.push(label(&f.function));
        if own(f) {
            let at = f.line.map_or_else(|| "?".to_owned(), |l| l.to_string());
            parts.push(label(&format!("{}:{at}", short(f.file.as_deref().unwrap_or_default()))));
        }
    }
    Some(parts.join(";"))
}

/// The folded stack of `frames` (innermost first) on `core`: the op's
/// own code's as [`kernel_stack`]; the library's, called from the
/// kernel's stack `caller` (that of the kernel's instruction that led to
/// it), above it by function; else the library's alone, outermost first,
/// and the innermost frame's line.
pub fn folded_stack(core: u32, frames: &[Frame], caller: Option<&str>) -> String {
    let mut stack = format!("core {core}");
    if let Some(k) = kernel_stack(frames) {
        return format!("{stack};{k}");
    }
    if let Some(c) = caller {
        stack.push(';');
        stack.push_str(c);
    }
    for fr in frames.iter().rev() {
        stack.push(';');
        stack.push_str(&label(&fr.function));
    }
    if caller.is_none() {
        let inner = frames.first().expect("never empty");
        if let Some(line) = inner.line {
            stack.push(';');
            stack.push_str(&label(&format!("{}:{line}", short(inner.file.as_deref().unwrap_or_default()))));
        }
    }
    stack
}

/// The figures of `raw`, its addresses named by `lines` (a frame without
/// a line takes its block's).
pub fn analyse(raw: &Raw, lines: &Lines, cores: u32) -> Profile {
    analyse_frames(raw, |a| lines.frames_by_block(a), cores)
}

/// The figures of `raw`, its addresses named by `frames_at`.
fn analyse_frames(raw: &Raw, frames_at: impl Fn(u64) -> Vec<Frame>, cores: u32) -> Profile {
    let m = MODEL;
    let mut frames_of: BTreeMap<u64, Vec<Frame>> = BTreeMap::new();
    let sites = raw.callers.keys().map(|k| k.1);
    for a in raw.insns.keys().chain(raw.mem.keys()).chain(raw.dma_sites.keys()).map(|k| k.1).chain(sites) {
        frames_of.entry(a).or_insert_with(|| frames_at(a));
    }
    // The kernel's stack at each instruction that led to library code
    // or DMA, with its root function (the trace's).
    let stacks: BTreeMap<u64, (String, String)> = raw
        .callers
        .keys()
        .map(|k| k.1)
        .chain(raw.dma_sites.keys().map(|k| k.1))
        .filter_map(|a| kernel_stack(&frames_of[&a]).map(|k| (a, (k.split(';').next().unwrap_or_default().to_owned(), k))))
        .collect();
    let caller_of = |a: u64| stacks.get(&a).cloned();
    let mut callers: BTreeMap<(u32, u64), Vec<(u64, u64)>> = BTreeMap::new();
    for (&(core, site, a), &n) in &raw.callers {
        callers.entry((core, a)).or_default().push((site, n));
    }
    let mut per_core: BTreeMap<u32, Core> = (0..cores).map(|c| (c, Core { core: c, ..Core::default() })).collect();
    // Per line: instructions, HBM window accesses, TCM accesses, DMA
    // bytes, of the instructions the library's.
    let mut per_line: BTreeMap<LineKey, (u64, u64, u64, u64, u64)> = BTreeMap::new();
    let mut folded: BTreeMap<String, f64> = BTreeMap::new();
    let mut functions: BTreeMap<u32, BTreeMap<String, f64>> = BTreeMap::new();
    let keys: std::collections::BTreeSet<(u32, u64)> = raw.insns.keys().chain(raw.mem.keys()).copied().collect();
    for (core, a) in keys {
        let n = raw.insns.get(&(core, a)).copied().unwrap_or(0);
        let mem = raw.mem.get(&(core, a)).copied().unwrap_or_default();
        let hbm = mem.hbm_loads + mem.hbm_stores;
        let frames = &frames_of[&a];
        let key = charged(frames);
        let library = key.3;
        let c = per_core.entry(core).or_insert_with(|| Core { core, ..Core::default() });
        c.instructions += n;
        c.library_instructions += if library { n } else { 0 };
        c.hbm_window_accesses += hbm;
        c.tcm_accesses += mem.tcm;
        c.stack_accesses += mem.stack;
        // The library's code a kernel line led to is that line's (its
        // `library_instructions`), each its share of the address's
        // counts; the rest is the address's own line's.
        let mut own = (n, hbm, mem.tcm);
        if library {
            for &(site, k) in callers.get(&(core, a)).map_or(&[][..], Vec::as_slice) {
                let to = charged(&frames_of[&site]);
                if to.3 || n == 0 {
                    continue;
                }
                let k = k.min(own.0);
                let part = |v: u64| (v as u128 * k as u128 / n as u128) as u64;
                let (h, t) = (part(hbm).min(own.1), part(mem.tcm).min(own.2));
                own = (own.0 - k, own.1 - h, own.2 - t);
                let e = per_line.entry(to).or_default();
                (e.0, e.1, e.2, e.4) = (e.0 + k, e.1 + h, e.2 + t, e.4 + k);
            }
        }
        let e = per_line.entry(key).or_default();
        e.0 += own.0;
        e.1 += own.1;
        e.2 += own.2;
        if library {
            e.4 += own.0;
        }
        let ns = m.ns(n, hbm, 0, 0);
        // The library's instructions the kernel's lines led to go above
        // those lines, each its share of the address's time; the rest
        // (the runtime's before the kernel and after it) stand alone.
        let mut rest = n;
        for &(site, k) in callers.get(&(core, a)).map_or(&[][..], Vec::as_slice) {
            let Some((root, caller)) = stacks.get(&site) else { continue };
            let k = k.min(rest);
            rest -= k;
            let share = if n > 0 { ns * k as f64 / n as f64 } else { 0.0 };
            *folded.entry(folded_stack(core, frames, Some(caller))).or_default() += share;
            *functions.entry(core).or_default().entry(root.clone()).or_default() += share;
        }
        let share = if n > 0 { ns * rest as f64 / n as f64 } else { ns };
        if share > 0.0 {
            *folded.entry(folded_stack(core, frames, None)).or_default() += share;
            let root = kernel_stack(frames)
                .map_or_else(|| frames.last().expect("never empty").function.clone(), |k| k.split(';').next().unwrap_or_default().to_owned());
            *functions.entry(core).or_default().entry(root).or_default() += share;
        }
    }
    // DMA before the kernel's first instruction (the invocation's own
    // transfers) has no line.
    for (&(_, a), &(_, bytes)) in raw.dma_sites.iter().filter(|s| s.0 .1 != 0) {
        per_line.entry(charged(&frames_of[&a])).or_default().3 += bytes;
    }
    for (core, d) in &raw.dma {
        if let Some(c) = per_core.get_mut(core) {
            c.dma_bytes = d.bytes();
            c.dma_descriptors = d.descriptors();
            c.dma_to_tcm_bytes = d.to_tcm_bytes;
            c.dma_to_hbm_bytes = d.to_hbm_bytes;
            // The DMA the kernel's lines started goes above them; the
            // rest (the invocation's own transfers) stands alone.
            let (mut descriptors, mut bytes) = (d.descriptors(), d.bytes());
            for (&(_, a), &(sd, sb)) in raw.dma_sites.range((*core, 1)..=(*core, u64::MAX)) {
                let Some((_, caller)) = caller_of(a) else { continue };
                let (sd, sb) = (sd.min(descriptors), sb.min(bytes));
                (descriptors, bytes) = (descriptors - sd, bytes - sb);
                *folded.entry(format!("core {core};{caller};[DMA]")).or_default() += m.ns(0, 0, sb, sd);
            }
            let ns = m.ns(0, 0, bytes, descriptors);
            if ns > 0.0 {
                *folded.entry(format!("core {core};[DMA]")).or_default() += ns;
            }
            // The trace shows the DMA as its own span.
            *functions.entry(*core).or_default().entry("[DMA]".into()).or_default() += m.ns(0, 0, d.bytes(), d.descriptors());
        }
    }
    for c in per_core.values_mut() {
        c.modeled_ns = m.ns(c.instructions, c.hbm_window_accesses, c.dma_bytes, c.dma_descriptors);
    }
    let total: f64 = per_core.values().map(|c| c.modeled_ns).sum::<f64>().max(f64::MIN_POSITIVE);
    let mut lines_out: Vec<Line> = per_line
        .into_iter()
        .map(|((file, line, function, library), (n, hbm, tcm, dma, lib))| {
            let ns = m.ns(n, hbm, 0, 0);
            Line {
                file,
                line,
                function,
                library,
                instructions: n,
                library_instructions: lib,
                hbm_window_accesses: hbm,
                tcm_accesses: tcm,
                dma_bytes: dma,
                modeled_ns: ns,
                share: ns / total,
            }
        })
        .collect();
    lines_out.sort_by(|a, b| b.modeled_ns.total_cmp(&a.modeled_ns).then_with(|| a.file.cmp(&b.file)).then(a.line.cmp(&b.line)));
    let cores_out: Vec<Core> = per_core.into_values().collect();
    let modeled_ns = cores_out.iter().map(|c| c.modeled_ns).fold(0.0, f64::max);
    Profile {
        modeled_ns,
        model: m,
        cores: cores_out,
        lines: lines_out,
        folded: folded.into_iter().map(|(s, ns)| format!("{s} {}", (ns * 1000.0).round().max(1.0) as u64)).collect(),
        functions: functions.into_iter().map(|(c, f)| (c, f.into_iter().collect())).collect(),
    }
}

/// A path's last two components (the flame graph's labels stay short).
fn short(file: &str) -> String {
    let parts: Vec<&str> = file.rsplit('/').take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

fn ms(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.1} µs", ns / 1e3)
    }
}

/// Thousands separated by commas.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The Chrome trace: one thread per core; its outermost functions and
/// its DMA one after another, each as long as its modeled time.
pub fn trace(p: &Profile) -> serde_json::Value {
    let mut events = vec![serde_json::json!({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "op (modeled device time)"}})];
    for c in &p.cores {
        events.push(serde_json::json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": c.core, "args": {"name": format!("core {}", c.core)}}));
        events.push(serde_json::json!({"name": format!("core {}", c.core), "ph": "X", "pid": 1, "tid": c.core, "ts": 0.0, "dur": c.modeled_ns / 1e3,
            "args": {"instructions": c.instructions, "hbm_window_accesses": c.hbm_window_accesses, "dma_bytes": c.dma_bytes}}));
        let mut fs = p.functions.get(&c.core).cloned().unwrap_or_default();
        fs.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut t = 0.0;
        for (name, ns) in fs {
            events.push(serde_json::json!({"name": name, "ph": "X", "pid": 1, "tid": c.core, "ts": t / 1e3, "dur": ns / 1e3}));
            t += ns;
        }
    }
    serde_json::json!({"traceEvents": events, "displayTimeUnit": "ns"})
}

/// The flame graph's SVG.
pub fn flamegraph(p: &Profile) -> Result<Vec<u8>> {
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = "modeled device time (ps)".into();
    opts.count_name = "ps".into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, p.folded.iter().map(String::as_str), &mut svg)
        .map_err(|e| Error::new(ErrorKind::Environment, format!("--profile: the flame graph could not be drawn: {e}")))?;
    Ok(svg)
}

/// Writes the three files into `dir` (created if missing).
pub fn write_all(p: &Profile, dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::new(ErrorKind::BadInput, format!("--profile {}: not a directory; give a directory (it is created if missing)", dir.display())));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create the profile directory", dir, e))?;
    let json = serde_json::to_vec_pretty(p).map_err(|e| Error::new(ErrorKind::Environment, format!("--profile: {e}")))?;
    crate::atomic::write(&dir.join(PROFILE_JSON), &json)?;
    crate::atomic::write(&dir.join(FLAMEGRAPH), &flamegraph(p)?)?;
    let t = serde_json::to_vec(&trace(p)).map_err(|e| Error::new(ErrorKind::Environment, format!("--profile: {e}")))?;
    crate::atomic::write(&dir.join(TRACE), &t)
}

/// The report: the op's modeled time, per core, the top lines, advice.
pub fn report(p: &Profile, dir: &Path) -> String {
    let mut s = format!("profile: modeled device time {} (the slowest of {} core(s))\n", ms(p.modeled_ns), p.cores.len());
    for c in &p.cores {
        s.push_str(&format!(
            "  core {}: {} instructions ({} library), {} HBM window accesses, {} DMA bytes in {} descriptors: {}\n",
            c.core,
            grouped(c.instructions),
            grouped(c.library_instructions),
            grouped(c.hbm_window_accesses),
            grouped(c.dma_bytes),
            grouped(c.dma_descriptors),
            ms(c.modeled_ns)
        ));
    }
    s.push_str(&format!("  {:<40} {:>12} {:>10} {:>10} {:>11} {:>6}\n", "line", "instructions", "HBM", "DMA bytes", "modeled", "share"));
    let dma: u64 = p.cores.iter().map(|c| c.dma_bytes).sum();
    let dma_ns: f64 = p.cores.iter().map(|c| MODEL.ns(0, 0, c.dma_bytes, c.dma_descriptors)).sum();
    let total: f64 = p.cores.iter().map(|c| c.modeled_ns).sum::<f64>().max(f64::MIN_POSITIVE);
    let mut rows: Vec<(String, u64, u64, u64, f64)> = p
        .lines
        .iter()
        .map(|l| {
            let at = match (l.line, l.file.is_empty()) {
                (0, true) => l.function.clone(),
                (0, false) => format!("{}:? (no line)", short(&l.file)),
                _ => format!("{}:{}", short(&l.file), l.line),
            };
            let at = if l.library { format!("[lib] {at}") } else { at };
            (at, l.instructions, l.hbm_window_accesses, l.dma_bytes, l.modeled_ns)
        })
        .collect();
    if dma > 0 {
        rows.push(("[DMA]".into(), 0, 0, dma, dma_ns));
        rows.sort_by(|a, b| b.4.total_cmp(&a.4));
    }
    for (at, n, hbm, d, ns) in rows.into_iter().take(TOP_LINES) {
        let at: String =
            if at.chars().count() > 40 { format!("…{}", at.chars().rev().take(39).collect::<Vec<_>>().into_iter().rev().collect::<String>()) } else { at };
        s.push_str(&format!("  {at:<40} {:>12} {:>10} {:>10} {:>11} {:>5.1}%\n", grouped(n), grouped(hbm), grouped(d), ms(ns), 100.0 * ns / total));
    }
    let hbm: u64 = p.cores.iter().map(|c| c.hbm_window_accesses).sum();
    if hbm >= ADVICE_MIN_HBM {
        if let Some(l) = p.hottest_kernel_line() {
            s.push_str(&format!(
                "advice: {}:{}: {} element accesses to HBM through the windows in a loop, ~{} modeled; staged through TCM in 1,024-element chunks (docs/kernel-guide.md, TCM staging): ~{}\n",
                short(&l.file),
                l.line,
                grouped(hbm),
                ms(hbm as f64 * MODEL.hbm_window_access_ns),
                ms(MODEL.staged_ns(hbm))
            ));
        }
    }
    s.push_str(&format!("profile written to {} (profile.json, flamegraph.svg, trace.json)\n", dir.display()));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(function: &str, file: Option<&str>, line: Option<u32>) -> Frame {
        Frame { function: function.into(), file: file.map(String::from), line }
    }

    #[test]
    fn an_address_is_charged_to_its_innermost_frame_of_the_ops_own_code() {
        let accessor = frame("at::TensorAccessor<float, 1>::operator[]", Some("/r/include/ATen/core/TensorAccessor.h"), Some(40));
        let kernel = frame("relu(at::Tensor const&)", Some("/k/relu.cpp"), Some(9));
        let wrapper = frame("relu_wrapper", Some("/k/customop-build/ops.cpp"), Some(41));
        let runtime = frame("neuron_capi::ffi::customop::customop_return_tensor", Some("/r/capi/src/ffi/customop.rs"), Some(12));
        // The accessor inlined into the kernel: the kernel's line.
        assert_eq!(charged(&[accessor.clone(), kernel, wrapper.clone()]), ("/k/relu.cpp".into(), 9, "relu(at::Tensor const&)".into(), false));
        // The generated wrapper (the output's copy back) is the op's own.
        assert_eq!(charged(&[wrapper]), ("/k/customop-build/ops.cpp".into(), 41, "relu_wrapper".into(), false));
        // Only the library's frames: the innermost, the library's.
        assert!(charged(&[accessor, runtime.clone()]).3);
        assert_eq!(charged(&[runtime]).0, "/r/capi/src/ffi/customop.rs");
        // Without DWARF: no file, line 0.
        assert_eq!(charged(&[frame("memcpy", None, None)]), (String::new(), 0, "memcpy".into(), true));
    }

    /// A kernel at 0x10..0x20 (its loop line 9 at 0x10, a header's
    /// accessor inlined there at 0x14, a call at 0x18 on line 12), a
    /// soft-float routine at 0x100 the call led to, and the runtime at
    /// 0x200 that ran before the kernel.
    fn frames_at(a: u64) -> Vec<Frame> {
        let kernel = |line| frame("relu(at::Tensor const&)", Some("/k/relu.cpp"), Some(line));
        match a {
            0x10 => vec![kernel(9)],
            0x14 => vec![frame("at::TensorAccessor<float, 1>::operator[]", Some("/r/include/ATen/core/TensorAccessor.h"), Some(40)), kernel(9)],
            0x18 => vec![kernel(12)],
            0x100 => {
                vec![frame("compiler_builtins::float::cmp::cmp::<f32>", Some("/c/float/cmp.rs"), Some(70)), frame("__gesf2", Some("/c/macros.rs"), Some(433))]
            }
            _ => vec![frame("neuron_runtime::invoke", Some("/r/runtime/src/invoke.rs"), Some(5))],
        }
    }

    #[test]
    fn the_librarys_code_goes_above_the_kernel_line_that_led_to_it() {
        let mut raw = Raw::default();
        for (a, n) in [(0x10, 100), (0x14, 50), (0x18, 10), (0x100, 40), (0x200, 7)] {
            raw.insns.insert((0, a), n);
        }
        // 30 of the routine's 40 from the call on line 12; 10 with no kernel
        // instruction before them.
        raw.callers.insert((0, 0x18, 0x100), 30);
        raw.dma_sites.insert((0, 0x18), (2, 2048));
        raw.dma.insert(0, super::super::raw::Dma { to_tcm_descriptors: 3, to_tcm_bytes: 3072, ..Default::default() });
        let p = analyse_frames(&raw, frames_at, 1);
        let stacks: BTreeMap<&str, u64> = p.folded.iter().map(|l| l.rsplit_once(' ').unwrap()).map(|(s, ps)| (s, ps.parse().unwrap())).collect();
        let ps = |n: u64| (MODEL.ns(n, 0, 0, 0) * 1000.0).round() as u64;
        let want: BTreeMap<&str, u64> = [
            ("core 0;relu(at::Tensor const&);k/relu.cpp:9", ps(100)),
            ("core 0;relu(at::Tensor const&);k/relu.cpp:9;at::TensorAccessor<float, 1>::operator[]", ps(50)),
            ("core 0;relu(at::Tensor const&);k/relu.cpp:12", ps(10)),
            ("core 0;relu(at::Tensor const&);k/relu.cpp:12;__gesf2;compiler_builtins::float::cmp::cmp::<f32>", ps(30)),
            ("core 0;__gesf2;compiler_builtins::float::cmp::cmp::<f32>;float/cmp.rs:70", ps(10)),
            ("core 0;neuron_runtime::invoke;src/invoke.rs:5", ps(7)),
            ("core 0;relu(at::Tensor const&);k/relu.cpp:12;[DMA]", (MODEL.ns(0, 0, 2048, 2) * 1000.0).round() as u64),
            ("core 0;[DMA]", (MODEL.ns(0, 0, 1024, 1) * 1000.0).round() as u64),
        ]
        .into_iter()
        .collect();
        assert_eq!(stacks, want);
        // The call's line carries the routine's 30 as its library's; the
        // routine's own line keeps the 10 no kernel line led to.
        let line = |l: u32| p.lines.iter().find(|x| x.line == l).unwrap();
        assert_eq!((line(12).instructions, line(12).library_instructions, line(12).library), (40, 30, false));
        assert_eq!((line(9).instructions, line(9).library_instructions), (150, 0));
        assert_eq!((line(70).instructions, line(70).library_instructions, line(70).library), (10, 10, true));
        assert_eq!((p.cores[0].instructions, p.cores[0].library_instructions), (207, 47));
        assert_eq!(p.lines[0].line, 9);
        // The trace: the kernel's span holds what it led to; the DMA is
        // its own span.
        let f: BTreeMap<&str, f64> = p.functions[&0].iter().map(|(n, ns)| (n.as_str(), *ns)).collect();
        assert!((f["relu(at::Tensor const&)"] - MODEL.ns(190, 0, 0, 0)).abs() < 1e-9, "{f:?}");
        assert!((f["[DMA]"] - MODEL.ns(0, 0, 3072, 3)).abs() < 1e-9, "{f:?}");
    }
}
