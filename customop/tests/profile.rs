//! `customop run --on qemu --profile DIR` on the vendor's three relus
//! ([32, 4096] float32): element accessor, TCM staging in 1,024-element
//! chunks on 1 core, the same over 8 cores with `get_dst_tensor()`. Each
//! output is NumPy's relu; each kernel's hottest line is its loop body;
//! profile.json, flamegraph.svg and trace.json parse; and the modeled
//! times give the vendor's ratios (docs/profiling.md).
//!
//! Needs the Xtensa toolchain and qemu-system-xtensa, as tests/device_qemu.rs.

mod common;
use common::*;
use customop::npy;
use std::path::Path;

/// Runs `op` profiled; returns profile.json, the report's text.
fn profiled(dir: &Path, op: &str, x: &str, cores: u32, want: &[f32]) -> (serde_json::Value, String, std::path::PathBuf) {
    let out = scratch("out").join(format!("{op}.npy"));
    let prof = scratch("prof").join(op);
    let _ = std::fs::remove_dir_all(&prof);
    let (d, o, p, c) = (dir.display().to_string(), out.display().to_string(), prof.display().to_string(), cores.to_string());
    let t = customop_ok(&["run", &d, op, x, "-o", &o, "--cores", &c, "--on", "qemu", "--profile", &p]);
    let got = npy::read(&out).unwrap();
    let got: Vec<f32> = got.data.chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    assert!(got.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()), "{op}: the output is not relu");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(prof.join("profile.json")).unwrap()).unwrap();
    (json, t, prof)
}

/// The line of `file` that carries the `// loop body` comment.
fn loop_body(file: &Path) -> u64 {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines().position(|l| l.contains("// loop body")).unwrap() as u64 + 1
}

fn hottest_kernel_line(json: &serde_json::Value) -> (String, u64) {
    let l = json["lines"].as_array().unwrap().iter().find(|l| !l["library"].as_bool().unwrap() && l["line"].as_u64().unwrap() > 0).unwrap();
    (l["file"].as_str().unwrap().to_owned(), l["line"].as_u64().unwrap())
}

#[test]
fn the_three_vendor_relus_profile_to_their_loop_bodies_and_the_vendor_ratios() {
    let x = values(32 * 4096, -2.0, 2.0, 39);
    let want: Vec<f32> = x.iter().map(|v| if *v > 0.0 { *v } else { 0.0 }).collect();
    let xf = npy_file("relu_in.npy", &f32s(&[32, 4096], &x)).display().to_string();
    let one = built("profile_relus", &["--target", "qemu"]);
    let eight = built("profile_relu_mc", &["--target", "qemu", "--multicore"]);
    let src = kernels();
    let mut ns = Vec::new();
    for (dir, op, cores, file) in [
        (&one, "relu_element", 1, "profile_relus/relu_element.cpp"),
        (&one, "relu_tcm", 1, "profile_relus/relu_tcm.cpp"),
        (&eight, "relu_mc", 8, "profile_relu_mc/relu_mc.cpp"),
    ] {
        let (json, text, prof) = profiled(dir, op, &xf, cores, &want);
        let (f, line) = hottest_kernel_line(&json);
        assert!(f.ends_with(file) && line == loop_body(&src.join(file)), "{op}: hottest kernel line {f}:{line}\n{text}");
        assert!(text.contains(&format!("{}:{line}", file.rsplit('/').next().unwrap())), "{text}");
        for k in ["modeled_ns", "model", "cores", "lines"] {
            assert!(json.get(k).is_some(), "{k}");
        }
        let cs = json["cores"].as_array().unwrap();
        assert_eq!(cs.len(), cores as usize);
        for c in cs {
            for k in ["core", "instructions", "hbm_window_accesses", "dma_bytes", "modeled_ns"] {
                assert!(c.get(k).is_some(), "{k}");
            }
        }
        for k in ["file", "line", "function", "instructions", "hbm_window_accesses", "modeled_ns"] {
            assert!(json["lines"][0].get(k).is_some(), "{k}");
        }
        let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(prof.join("trace.json")).unwrap()).unwrap();
        let events = trace["traceEvents"].as_array().unwrap();
        assert!(events.iter().filter(|e| e["ph"] == "X" && e["name"].as_str().unwrap().starts_with("core ")).count() == cores as usize);
        let svg = std::fs::read_to_string(prof.join("flamegraph.svg")).unwrap();
        assert!(svg.contains("<svg") && svg.trim_end().ends_with("</svg>") && svg.contains("core 0"), "flamegraph");
        ns.push(json["modeled_ns"].as_f64().unwrap());
    }
    let (element, tcm1, tcm8) = (ns[0], ns[1], ns[2]);
    let s = tcm1 / tcm8;
    assert!(s >= 2.0, "1-core/8-core speedup {s}");
    // The vendor's figures at that speedup: R1 = 0.83·S/(S−1) ms; the
    // element relu costs 119 ms more.
    let r1 = 0.83 * s / (s - 1.0);
    let want_ratio = (119.0 + r1) / r1;
    let ratio = element / tcm1;
    eprintln!("modeled: element {element} ns, tcm 1 core {tcm1} ns, tcm 8 cores {tcm8} ns; S {s:.2}, ratio {ratio:.1} (vendor at S: {want_ratio:.1})");
    assert!((ratio / want_ratio - 1.0).abs() <= 0.25, "element/TCM ratio {ratio:.1}, the vendor's at S = {s:.2}: {want_ratio:.1}");
}

#[test]
fn profile_needs_the_emulated_device() {
    let one = built("profile_relus", &["--target", "qemu"]);
    let xf = npy_file("small.npy", &f32s(&[2, 2], &[1.0, -1.0, 2.0, -2.0])).display().to_string();
    let out = scratch("out").join("sim.npy").display().to_string();
    let o = customop(&["run", &one.display().to_string(), "relu_tcm", &xf, "-o", &out, "--profile", &scratch("p").display().to_string()]);
    assert!(!o.status.success());
    assert!(text(&o).contains("--profile profiles the emulated device: add --on qemu or --on both"), "{}", text(&o));
}

#[test]
fn dma_bytes_go_to_the_kernel_lines_that_moved_them() {
    // 4,000 float32: three 1,024-element chunks and one of 928, each
    // copied into TCM and back; the output zeroed first.
    let x = values(4000, -2.0, 2.0, 5);
    let want: Vec<f32> = x.iter().map(|v| if *v > 0.0 { *v } else { 0.0 }).collect();
    let xf = npy_file("dma_in.npy", &f32s(&[4, 1000], &x)).display().to_string();
    let one = built("profile_relus", &["--target", "qemu"]);
    let out = scratch("out").join("dma.npy").display().to_string();
    let prof = scratch("prof").join("dma");
    let _ = std::fs::remove_dir_all(&prof);
    let t = customop_ok(&["run", &one.display().to_string(), "relu_tcm", &xf, "-o", &out, "--on", "qemu", "--profile", &prof.display().to_string()]);
    let got = npy::read(Path::new(&out)).unwrap();
    assert!(got.data.chunks(4).zip(&want).all(|(a, b)| f32::from_le_bytes(a.try_into().unwrap()).to_bits() == b.to_bits()), "not relu");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(prof.join("profile.json")).unwrap()).unwrap();
    let file = "profile_relus/relu_tcm.cpp";
    let text = std::fs::read_to_string(kernels().join(file)).unwrap();
    let line_of = |s: &str| text.lines().position(|l| l.contains(s)).unwrap() as u64 + 1;
    let kernel_lines: Vec<(u64, u64)> = json["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["file"].as_str().unwrap().ends_with(file))
        .map(|l| (l["line"].as_u64().unwrap(), l["dma_bytes"].as_u64().unwrap()))
        .collect();
    let dma = |line: u64| kernel_lines.iter().filter(|l| l.0 == line).map(|l| l.1).sum::<u64>();
    let moving = [line_of("torch::zeros"), line_of("in_tcm.tensor_to_tcm"), line_of("out_tcm.tcm_to_tensor")];
    for l in moving {
        assert_eq!(dma(l), 4 * 4000, "line {l}: {kernel_lines:?}\n{t}");
    }
    assert!(kernel_lines.iter().all(|l| moving.contains(&l.0) || l.1 == 0), "DMA on another line of the kernel: {kernel_lines:?}");
    let core = &json["cores"][0];
    assert!(core["dma_to_tcm_bytes"].as_u64().unwrap() >= 4 * 4000 && core["dma_to_hbm_bytes"].as_u64().unwrap() >= 4 * 4000, "{core}");
    let lines_total: u64 = json["lines"].as_array().unwrap().iter().map(|l| l["dma_bytes"].as_u64().unwrap()).sum();
    assert!(lines_total <= core["dma_bytes"].as_u64().unwrap(), "the lines' DMA {lines_total} above the core's {core}");
}

/// The line of `file` that carries `marker`.
fn line_with(file: &Path, marker: &str) -> u64 {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines().position(|l| l.contains(marker)).unwrap_or_else(|| panic!("{}: no `{marker}`", file.display())) as u64 + 1
}

/// The report's top lines (DMA included), as printed: `file:line` or
/// `[lib] ...`.
fn top_lines(report: &str) -> Vec<String> {
    let rows = report.lines().skip_while(|l| !l.trim_start().starts_with("line ")).skip(1);
    let rows: Vec<String> = rows.take_while(|l| l.starts_with("  ")).map(|l| l.split_whitespace().next().unwrap().to_owned()).collect();
    rows
}

/// A kernel as its author wrote it: its op, its file under the test
/// kernels, the markers of its loop lines (the heaviest first), its
/// function demangled and mangled.
struct Authored<'a> {
    op: &'a str,
    file: &'a str,
    loops: &'a [&'a str],
    function: &'a str,
    mangled: &'a str,
}

/// The checks of a kernel profiled as its author wrote it (`run`:
/// profile.json, the report, the profile's directory): no line 0 in the
/// top ten; the three heaviest lines but DMA are the kernel's own and
/// among them are its loops; the flame graph names the kernel's function
/// demangled (not mangled), with the heaviest loop line above it and the
/// library's code that line called above that.
fn reads_as_the_authors(k: &Authored, run: &(serde_json::Value, String, std::path::PathBuf)) {
    let Authored { op, file, loops, function, mangled } = *k;
    let (json, report, prof) = (&run.0, run.1.as_str(), run.2.as_path());
    let src = kernels().join(file);
    let top = top_lines(report);
    assert_eq!(top.len(), 10, "{op}: {report}");
    assert!(top.iter().all(|l| !l.ends_with(":0") && !l.contains("(no line)")), "{op}: a line 0 in the top ten:\n{report}");
    let heaviest: Vec<&String> = top.iter().filter(|l| *l != "[DMA]").take(3).collect();
    assert!(heaviest.iter().all(|l| l.starts_with(file)), "{op}: the three heaviest lines but DMA are not the kernel's:\n{report}");
    for m in loops {
        let at = format!("{file}:{}", line_with(&src, m));
        assert!(heaviest.iter().any(|l| **l == at), "{op}: `{m}` ({at}) not among the three heaviest lines:\n{report}");
    }
    // profile.json: every line of the kernel has a line; its functions
    // are demangled.
    for l in json["lines"].as_array().unwrap() {
        let f = l["function"].as_str().unwrap();
        assert!(!f.starts_with("_Z"), "{op}: a mangled function in profile.json: {l}");
        if l["file"].as_str().unwrap().ends_with(file) {
            assert!(l["line"].as_u64().unwrap() > 0, "{op}: a kernel line 0: {l}");
            assert_eq!(f, function, "{op}: {l}");
        }
    }
    let svg = std::fs::read_to_string(prof.join("flamegraph.svg")).unwrap();
    let escaped = function.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    assert!(svg.contains(&escaped) && !svg.contains(mangled), "{op}: the flame graph does not name {function} demangled");
    // The graph from the core up: the kernel's function right above
    // `core 0`, its heaviest loop line right above that, and the
    // library's code that line called right above the line, inside its
    // width. inferno draws each frame as `<title>LABEL (N ps, ...)</title>
    // <rect ... y="Y" ... fg:x="X" fg:w="W"/>`, a frame 16 units above
    // the one it stands on.
    let frames: Vec<(String, i64, u64, u64)> = svg
        .split("<title>")
        .skip(1)
        .filter_map(|t| {
            let (title, rest) = t.split_once("</title>")?;
            let attr = |k: &str| rest.split(&format!("{k}=\"")).nth(1)?.split('"').next();
            let label = title.rsplit_once(" (")?.0.to_owned();
            Some((label, attr(" y")?.parse().ok()?, attr("fg:x")?.parse().ok()?, attr("fg:w")?.parse().ok()?))
        })
        .collect();
    let frame = |label: &str| frames.iter().find(|f| f.0 == label).unwrap_or_else(|| panic!("{op}: no frame `{label}` in the flame graph"));
    let hot = format!("{file}:{}", line_with(&src, loops[0]));
    let (core, kernel, line) = (frame("core 0"), frame(&escaped), frame(&hot));
    assert_eq!((kernel.1, line.1), (core.1 - 16, kernel.1 - 16), "{op}: core 0, {function}, {hot} not stacked in that order");
    assert!(kernel.2 <= line.2 && line.2 + line.3 <= kernel.2 + kernel.3, "{op}: {hot} not within {function}");
    let called: Vec<&String> = frames.iter().filter(|f| f.1 == line.1 - 16 && line.2 <= f.2 && f.2 + f.3 <= line.2 + line.3).map(|f| &f.0).collect();
    assert!(!called.is_empty(), "{op}: nothing drawn above {hot}");
    // The line's width is its time with the library code it called, as
    // profile.json's line has it, and more than its own instructions'.
    let line_json =
        json["lines"].as_array().unwrap().iter().find(|l| l["file"].as_str().unwrap().ends_with(file) && format!("{file}:{}", l["line"]) == hot).unwrap();
    let (n, lib) = (line_json["instructions"].as_u64().unwrap(), line_json["library_instructions"].as_u64().unwrap());
    let ps = line_json["modeled_ns"].as_f64().unwrap() * 1000.0;
    assert!(lib > 0 && (line.3 as f64 / ps - 1.0).abs() < 0.01, "{op}: {hot} is {} ps wide, its line {line_json}", line.3);
    eprintln!("{op}: {hot}: {n} instructions, {lib} of them the library's; above it {called:?}");
}

#[test]
fn a_tcm_relu_and_a_row_softmax_profile_to_the_authors_lines() {
    let x = values(32 * 4096, -2.0, 2.0, 41);
    let want: Vec<f32> = x.iter().map(|v| if *v > 0.0 { *v } else { 0.0 }).collect();
    let xf = npy_file("relu_lines.npy", &f32s(&[32, 4096], &x)).display().to_string();
    let one = built("profile_relus", &["--target", "qemu"]);
    let run = profiled(&one, "relu_tcm", &xf, 1, &want);
    eprintln!("relu_tcm:\n{}", run.1);
    let relu = Authored {
        op: "relu_tcm",
        file: "profile_relus/relu_tcm.cpp",
        loops: &["// loop body"],
        function: "relu_tcm(at::Tensor const&)",
        mangled: "_Z8relu_tcmRKN2at6TensorE",
    };
    reads_as_the_authors(&relu, &run);

    let (rows, cols) = (16, 1024);
    let s = values(rows * cols, -4.0, 4.0, 43);
    let sf = npy_file("softmax_in.npy", &f32s(&[rows as u64, cols as u64], &s)).display().to_string();
    let want: Vec<f32> = s
        .chunks(cols)
        .flat_map(|r| {
            let top = r.iter().copied().fold(f32::MIN, f32::max) as f64;
            let e: Vec<f64> = r.iter().map(|v| (*v as f64 - top).exp()).collect();
            let sum: f64 = e.iter().sum();
            e.into_iter().map(move |v| (v / sum) as f32)
        })
        .collect();
    let dir = built("profile_softmax", &["--target", "qemu"]);
    let out = scratch("out").join("softmax_rows.npy");
    let prof = scratch("prof").join("softmax_rows");
    let _ = std::fs::remove_dir_all(&prof);
    let report = customop_ok(&[
        "run",
        &dir.display().to_string(),
        "softmax_rows",
        &sf,
        "-o",
        &out.display().to_string(),
        "--on",
        "qemu",
        "--profile",
        &prof.display().to_string(),
    ]);
    eprintln!("softmax_rows:\n{report}");
    let got = npy::read(&out).unwrap();
    let got: Vec<f32> = got.data.chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    assert_close(&got, &want, 1e-6, "softmax_rows");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(prof.join("profile.json")).unwrap()).unwrap();
    let softmax = Authored {
        op: "softmax_rows",
        file: "profile_softmax/softmax.cpp",
        loops: &["// exp loop", "// scale loop"],
        function: "softmax_rows(at::Tensor const&)",
        mangled: "_Z12softmax_rowsRKN2at6TensorE",
    };
    reads_as_the_authors(&softmax, &(json, report, prof));
}
