//! `cargo xtask sim-bench [--check] [--mib N] [--runs N]`: the figures of
//! issue 28, each a ratio measured in one run on this machine.
//!
//! `customop run` of the vendor-style ReLUs (`perf/sim_bench`: the TCM
//! kernel on 1 and 8 cores, the element accessor on 1) over a float32
//! `.npy` (64 MiB by default) is timed against NumPy doing the same job
//! as a command does it: a Python process that loads the `.npy`, takes
//! `numpy.maximum(a, 0)` and saves it. Both are whole processes (start,
//! load, compute, write), each the fastest of `--runs`; the peak RSS of
//! each `customop run` (wait4: the tool and its run's process) is divided
//! by the input's bytes. The kernel's own time per element (`customop run
//! --timings`: the busiest core) of the element-accessor kernel is divided
//! by a plain C++ loop's over an array on the host (`plain_relu.cpp`,
//! compiled by the command the kernel build's compile_commands.json
//! records: the same compiler and flags). The
//! Python call figures come from `perf/python_call.py` when it exists.
//!
//! NumPy: the system python has none, so a venv under
//! `target/sim-bench/venv` is made once (`pip install numpy`) and reused.
//! `--check` compares each ratio with `[sim_bench]` of `perf/budgets.toml`.

use crate::{root, run, xtask_target_base, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The table of budgets in `perf/budgets.toml`.
const TABLE: &str = "[sim_bench]";

struct Options {
    check: bool,
    mib: usize,
    runs: usize,
}

fn options(args: &[String]) -> Result<Options> {
    let mut o = Options { check: false, mib: 64, runs: 3 };
    let mut i = 0;
    while i < args.len() {
        let num = |i: usize| -> Result<usize> {
            args.get(i + 1).and_then(|v| v.parse().ok()).filter(|&v| v > 0).ok_or_else(|| format!("sim-bench: {} needs a positive number", args[i]))
        };
        match args[i].as_str() {
            "--check" => o.check = true,
            "--mib" => {
                o.mib = num(i)?;
                i += 1;
            }
            "--runs" => {
                o.runs = num(i)?;
                i += 1;
            }
            a => return Err(format!("sim-bench: unknown argument `{a}` (--check, --mib N, --runs N)")),
        }
        i += 1;
    }
    Ok(o)
}

fn work() -> PathBuf {
    xtask_target_base().join("sim-bench")
}

/// The venv's python with numpy, made on first use.
fn numpy_python() -> Result<PathBuf> {
    let venv = work().join("venv");
    let py = venv.join("bin/python");
    let has_numpy = |py: &Path| Command::new(py).args(["-c", "import numpy"]).status().is_ok_and(|s| s.success());
    if has_numpy(&py) {
        return Ok(py);
    }
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))
        .map_err(|e| format!("{e}\nsim-bench makes a venv with NumPy under {}: it needs python3's venv module (Debian: python3-venv)", venv.display()))?;
    run(Command::new(&py).args(["-m", "pip", "install", "--quiet", "numpy"]))
        .map_err(|e| format!("{e}\nsim-bench installs NumPy from PyPI into {} once: it needs the network the first time", venv.display()))?;
    if !has_numpy(&py) {
        return Err(format!("{}: numpy does not import after `pip install numpy`", py.display()));
    }
    Ok(py)
}

fn customop_bin() -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo).current_dir(root()).args(["build", "--release", "-p", "customop"]))?;
    Ok(xtask_target_base().join("release/customop"))
}

/// `customop build` of `perf/sim_bench` (single-core or `--multicore`).
fn build(bin: &Path, multicore: bool) -> Result<PathBuf> {
    let src = root().join("perf/sim_bench");
    let dir = work().join(if multicore { "multi" } else { "single" });
    let mut c = Command::new(bin);
    c.args(["build", "--name", "sim_bench"]);
    if multicore {
        c.arg("--multicore");
    }
    c.arg("--compute").arg(src.join("relu.cpp")).arg("--shape").arg(src.join("shape.cpp")).arg("--out").arg(&dir);
    run(&mut c)?;
    Ok(dir)
}

/// Writes a deterministic float32 input of `n` elements, about half of
/// them negative, a piece at a time: this process holds no tensor, since
/// Linux counts in a child's peak RSS its parent's from before its exec.
fn write_input(path: &Path, n: usize) -> Result {
    use std::io::Write;
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let header = customop_npy::render_header(customop_npy::Dtype::Fp32, &[n as u64])?;
    customop_outpath::write_with(path, |f| {
        let mut w = std::io::BufWriter::new(f);
        w.write_all(&header)?;
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..n {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let v = ((s >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 8.0;
            w.write_all(&v.to_le_bytes())?;
        }
        w.flush()
    })
    .map_err(err)
}

/// Checks that `out` holds the ReLU of `x`, bit for bit, reading both a
/// piece at a time.
fn check_relu(x: &Path, out: &Path) -> Result {
    use std::io::{Read, Seek};
    let open = |p: &Path| -> Result<(std::io::BufReader<std::fs::File>, customop_npy::Layout)> {
        let err = |e: std::io::Error| format!("{}: {e}", p.display());
        let mut f = std::fs::File::open(p).map_err(err)?;
        let mut head = vec![0u8; 4096];
        let k = f.read(&mut head).map_err(err)?;
        let l = customop_npy::parse_header(&head[..k]).map_err(|e| format!("{}: {e}", p.display()))?;
        f.seek(std::io::SeekFrom::Start(l.offset as u64)).map_err(err)?;
        Ok((std::io::BufReader::new(f), l))
    };
    let ((mut a, la), (mut b, lb)) = (open(x)?, open(out)?);
    if la.shape != lb.shape || lb.dtype != customop_npy::Dtype::Fp32 {
        return Err(format!("{}: {} {:?}, expected {} {:?}", out.display(), lb.dtype.name(), lb.shape, customop_npy::Dtype::Fp32.name(), la.shape));
    }
    let (mut pa, mut pb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    let (mut left, mut at) = (la.bytes as usize, 0);
    while left > 0 {
        let k = left.min(pa.len());
        a.read_exact(&mut pa[..k]).map_err(|e| format!("{}: {e}", x.display()))?;
        b.read_exact(&mut pb[..k]).map_err(|e| format!("{}: {e}", out.display()))?;
        for (i, (u, v)) in pa[..k].as_chunks::<4>().0.iter().zip(pb[..k].as_chunks::<4>().0).enumerate() {
            let u = f32::from_le_bytes(*u);
            let want = if u > 0.0 { u } else { 0.0 };
            if want.to_bits() != u32::from_le_bytes(*v) {
                return Err(format!("{}: element {} is not relu({u})", out.display(), at + i));
            }
        }
        at += k / 4;
        left -= k;
    }
    Ok(())
}

/// Runs `c` to its end: wall time and the peak RSS in bytes of it and
/// every process it waited for (wait4's `ru_maxrss`), and its output.
/// Linux counts a child's memory before its exec too (the fork's copy of
/// this process), so this process holds no tensor while it spawns.
fn timed(c: &mut Command) -> Result<(Duration, u64, String)> {
    let t = Instant::now();
    let child = c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().map_err(|e| format!("{:?}: {e}", c.get_program()))?;
    let pid = child.id() as libc::pid_t;
    // Read its output on threads: a full pipe would stall it.
    let read = |p: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut p) = p {
                let _ = p.read_to_string(&mut s);
            }
            s
        })
    };
    let out = read(child.stdout.map(|p| Box::new(p) as _));
    let err = read(child.stderr.map(|p| Box::new(p) as _));
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet waited for; status and ru are
    // writable locals.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let dt = t.elapsed();
    let (out, err) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    if r != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("{c:?} failed (wait status {status}):\n{out}{err}"));
    }
    Ok((dt, ru.ru_maxrss as u64 * 1024, format!("{out}{err}")))
}

/// The fastest of `runs` runs of `make()`: its time, the largest peak
/// RSS, the fastest run's output.
fn best(runs: usize, mut make: impl FnMut() -> Command, mut after: impl FnMut() -> Result) -> Result<(Duration, u64, String)> {
    let mut best: Option<(Duration, u64, String)> = None;
    let mut rss = 0;
    for _ in 0..runs {
        let r = timed(&mut make())?;
        after()?;
        rss = rss.max(r.1);
        if best.as_ref().is_none_or(|b| r.0 < b.0) {
            best = Some(r);
        }
    }
    let (t, _, out) = best.ok_or("no run")?;
    Ok((t, rss, out))
}

/// The busiest core's kernel time in the `timings:` line of `customop
/// run --timings` (`kernel per core [a, b, ...] ms`), in ns.
fn kernel_ns(out: &str) -> Result<f64> {
    let line = out.lines().find(|l| l.starts_with("timings:")).ok_or_else(|| format!("no timings line in:\n{out}"))?;
    let list = line.split("kernel per core [").nth(1).and_then(|r| r.split(']').next()).ok_or_else(|| format!("no kernel times in `{line}`"))?;
    let max = list.split(',').filter_map(|v| v.trim().parse::<f64>().ok()).fold(0.0f64, f64::max);
    Ok(max * 1e6)
}

/// The compiler and flags `customop build` compiled `relu.cpp` with in
/// `dir`, from its `customop-build/compile_commands.json` (without the
/// `-c SRC -o OBJ` and the shared-object `-fPIC`).
fn kernel_compile(dir: &Path) -> Result<Vec<String>> {
    let path = dir.join("customop-build/compile_commands.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let db: Vec<serde_json::Value> = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let entry =
        db.iter().find(|e| e["file"].as_str().is_some_and(|f| f.ends_with("relu.cpp"))).ok_or_else(|| format!("{}: no entry for relu.cpp", path.display()))?;
    let args = entry["arguments"].as_array().ok_or_else(|| format!("{}: an entry without arguments", path.display()))?;
    let args: Vec<String> = args.iter().filter_map(|a| a.as_str().map(str::to_owned)).collect();
    let c = args.iter().position(|a| a == "-c").ok_or_else(|| format!("{}: no -c in {args:?}", path.display()))?;
    Ok(args[..c].iter().filter(|a| *a != "-fPIC").cloned().collect())
}

/// ns per element of the plain C++ loop (`plain_relu.cpp`) over `n`,
/// compiled exactly as the build in `dir` compiled the kernels, then
/// `extra` (`-fno-tree-vectorize`: one element at a time, a bare load each).
fn plain_loop_ns(dir: &Path, n: usize, extra: &[&str]) -> Result<f64> {
    let exe = work().join("plain_relu");
    let src = root().join("perf/sim_bench/plain_relu.cpp");
    let cc = kernel_compile(dir)?;
    run(Command::new(&cc[0]).args(&cc[1..]).args(extra).arg(&src).arg("-o").arg(&exe))?;
    let out = Command::new(&exe).arg(n.to_string()).output().map_err(|e| format!("{}: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim().parse().map_err(|_| format!("{}: expected ns per element, got {text:?}", exe.display()))
}

/// `perf/python_call.py`'s figures (`call16_ratio`, `call1m_ratio`), if
/// the script exists and runs.
fn python_call(py: &Path) -> Result<Option<BTreeMap<String, f64>>> {
    let script = root().join("perf/python_call.py");
    if !script.exists() {
        return Ok(None);
    }
    // The package as a user installs it (pip builds it with maturin; cargo's
    // cache in python/target serves a rebuild), into the benchmark's venv,
    // every time: the figures are of this tree's code, not a stale install.
    run(Command::new(py).args(["-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall"]).arg(root().join("python")))
        .map_err(|e| format!("{e}\nsim-bench installs the Python package (python/) into {} to measure an op call", py.display()))?;
    let out = Command::new(py).arg(&script).current_dir(root()).output().map_err(|e| format!("{}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} failed:\n{}", script.display(), String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let json = text.lines().rev().find(|l| l.trim_start().starts_with('{')).ok_or_else(|| format!("{}: no JSON object in {text:?}", script.display()))?;
    let mut m = BTreeMap::new();
    for key in ["call16_ratio", "call1m_ratio"] {
        let v = json
            .split(&format!("\"{key}\""))
            .nth(1)
            .and_then(|r| r.trim_start().strip_prefix(':'))
            .and_then(|r| r.split([',', '}']).next())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .ok_or_else(|| format!("{}: no number `{key}` in {json}", script.display()))?;
        m.insert(key.to_owned(), v);
    }
    Ok(Some(m))
}

/// `[sim_bench]` of `perf/budgets.toml`: the ratios and the tolerances
/// (time figures, peak-RSS figures).
fn budgets() -> Result<(BTreeMap<String, f64>, f64, f64)> {
    let p = root().join("perf/budgets.toml");
    let s = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut inside = false;
    let mut b = BTreeMap::new();
    for l in s.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty()) {
        if l.starts_with('[') {
            inside = l == TABLE;
            continue;
        }
        if inside {
            let (k, v) = l.split_once('=').ok_or_else(|| format!("{}: bad line {l:?}", p.display()))?;
            b.insert(k.trim().to_owned(), v.trim().parse::<f64>().map_err(|e| format!("{}: {k}: {e}", p.display()))?);
        }
    }
    let tol = b.remove("tolerance").ok_or_else(|| format!("{}: {TABLE} has no `tolerance`", p.display()))?;
    let rss_tol = b.remove("rss_tolerance").ok_or_else(|| format!("{}: {TABLE} has no `rss_tolerance`", p.display()))?;
    Ok((b, tol, rss_tol))
}

/// The command.
pub fn main(args: &[String]) -> Result {
    let o = options(args)?;
    let py = numpy_python()?;
    let bin = customop_bin()?;
    let single = build(&bin, false)?;
    let multi = build(&bin, true)?;
    let n = o.mib * (1 << 20) / 4;
    let dir = work();
    let x_path = dir.join("x.npy");
    let out = dir.join("out.npy");
    let np_out = dir.join("np_out.npy");
    write_input(&x_path, n)?;
    // Every output must be the input's ReLU, bit for bit.
    let in_bytes = (n * 4) as f64;
    eprintln!("sim-bench: {} MiB float32 relu, best of {} run(s) each", o.mib, o.runs);

    let check_out = |p: &Path| check_relu(&x_path, p);
    let script =
        format!("import numpy as np\na = np.load({:?})\nnp.save({:?}, np.maximum(a, 0))\n", x_path.display().to_string(), np_out.display().to_string());
    let (t_np, rss_np, _) = best(
        o.runs,
        || {
            let mut c = Command::new(&py);
            c.args(["-c", &script]);
            c
        },
        || check_out(&np_out),
    )?;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    eprintln!("  numpy (python process: start, import, np.load, np.maximum, np.save): {:.1} ms, peak RSS {:.2}x input", ms(t_np), rss_np as f64 / in_bytes);

    let mut figures: BTreeMap<String, f64> = BTreeMap::new();
    let mut kernel_acc_ns = 0.0;
    for (name, dir, op, cores) in [("tcm1", &single, "relu_tcm", 1), ("acc1", &single, "relu_acc", 1), ("tcm8", &multi, "relu_tcm", 8)] {
        let (t, rss, text) = best(
            o.runs,
            || {
                let mut c = Command::new(&bin);
                c.arg("run").arg(dir).arg(op).arg(&x_path).arg("-o").arg(&out).args(["--cores", &cores.to_string(), "--timings"]);
                c
            },
            || check_out(&out),
        )?;
        let timings = text.lines().find(|l| l.starts_with("timings:")).unwrap_or("(no timings line)");
        eprintln!("  customop run {op} on {cores} core(s): {:.1} ms, peak RSS {:.2}x input\n    {timings}", ms(t), rss as f64 / in_bytes);
        figures.insert(format!("run_{name}_ratio"), t.as_secs_f64() / t_np.as_secs_f64());
        figures.insert(format!("rss_{name}_ratio"), rss as f64 / in_bytes);
        if name == "acc1" {
            kernel_acc_ns = kernel_ns(&text)?;
        }
    }
    let plain = plain_loop_ns(&single, n, &[])?;
    // The accessor's per-element checks keep its loop scalar; against the
    // same loop kept scalar, the figure is the cost of an access over a
    // bare load.
    let scalar = plain_loop_ns(&single, n, &["-fno-tree-vectorize"])?;
    let acc = kernel_acc_ns / n as f64;
    eprintln!("  element accessor kernel: {acc:.2} ns per element; plain C++ loop: {plain:.3} ns per element ({scalar:.3} not vectorised)");
    figures.insert("kernel_acc_per_elem_ratio".into(), acc / plain);
    figures.insert("kernel_acc_per_scalar_elem_ratio".into(), acc / scalar);
    match python_call(&py)? {
        Some(m) => figures.extend(m),
        None => eprintln!("  perf/python_call.py: not there (the Python call figures are not measured)"),
    }

    let (budgets, time_tol, rss_tol) = budgets()?;
    println!("| figure | measured | budget |\n|---|---:|---:|");
    let mut over = Vec::new();
    for (k, v) in &figures {
        let b = budgets.get(k);
        println!("| {k} | {v:.2} | {} |", b.map_or("-".into(), |b| format!("{b}")));
        let tol = if k.starts_with("rss_") { rss_tol } else { time_tol };
        if let Some(&b) = b {
            if *v > b * (1.0 + tol) {
                over.push(format!("{k} = {v:.2} > {b} + {:.0} %", tol * 100.0));
            }
        }
    }
    if !o.check {
        return Ok(());
    }
    let missing: Vec<_> = budgets.keys().filter(|k| !figures.contains_key(*k) && !k.starts_with("call")).collect();
    if !missing.is_empty() {
        return Err(format!("sim-bench: budgets without a measurement: {missing:?}"));
    }
    if over.is_empty() {
        Ok(())
    } else {
        Err(format!("sim-bench: over budget: {}", over.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busiest_core_is_read_from_the_timings_line() {
        let out = "ran relu_tcm on 8 core(s)\ntimings: inputs 1.0 ms, setup 0.1 ms, copy-in 2.0 ms, kernel per core [3.5, 12.25, 4.0] ms, verdict 1.0 ms, copy-out 1.0 ms, total 30.0 ms\n";
        assert_eq!(kernel_ns(out).unwrap(), 12.25e6);
        assert!(kernel_ns("ran relu_tcm on 1 core(s)\n").is_err());
    }

    #[test]
    fn budgets_toml_holds_both_tables_apart() {
        let (b, tol, rss_tol) = budgets().unwrap();
        for k in ["run_tcm1_ratio", "run_acc1_ratio", "run_tcm8_ratio", "rss_tcm1_ratio", "kernel_acc_per_elem_ratio", "kernel_acc_per_scalar_elem_ratio"] {
            assert!(b.contains_key(k), "{k}");
        }
        assert!(tol > 0.0 && rss_tol > 0.0);
        // `cargo xtask perf` reads its own table only (integers).
        let perf = crate::perf::budgets().unwrap();
        assert!(perf.contains_key("runtime_footprint") && !perf.contains_key("run_tcm1_ratio") && !perf.contains_key("tolerance"));
    }
}
