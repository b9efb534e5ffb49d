//! `cargo xtask <cmd>`: the Xtensa side of the build (see `cargo xtask
//! help`; the command line is parsed with clap).
//!
//! Host-only, std-only. Everything Xtensa-specific about invoking cargo,
//! the linker and QEMU lives here so that the workspace's own host builds
//! stay plain `cargo build` / `cargo test`.

mod architecture;
mod lints;
mod main_job;
mod perf;
mod perf_cpp;
mod preflight;
mod qemu;
mod reliability;
mod sim_bench;
mod step_log;
mod target;

use clap::{CommandFactory, Parser, Subcommand};
use neuron_image::{elf, fll_check, layout};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

pub(crate) use qemu::qemu_run;

/// The only toolchain known to build correct Xtensa code (TOOLCHAIN.md).
pub(crate) const TOOLCHAIN: &str = "nightly-2026-10-15";
pub(crate) const LD: &str = "xtensa-lx106-elf-ld";
const SELFTEST_MANIFEST: &str = "board/qemu/selftest/Cargo.toml";
const SELFTEST_LIB: &str = "libq7_qemu_selftest.a";

pub(crate) type Result<T = ()> = std::result::Result<T, String>;

/// The Xtensa side of the build: device builds, images, QEMU, the test command.
///
/// `cargo xtask help <command>` (or `<command> --help`) says more about each.
#[derive(Parser, Debug)]
#[command(name = "xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// THE MAIN JOB: the vendor-style relu on 8 emulated cores and on the simulator.
    ///
    /// A vendor-style C++ kernel (examples/vendor-relu: relu.cpp + its
    /// NEURON_LIBRARY shape.cpp, unchanged) built with `customop build
    /// --target qemu --multicore`, run with `customop run --on both --cores
    /// 8` on an emulated 8-core cluster (QEMU virt) and on the host
    /// simulator; the outputs must be bit-identical and equal the reference.
    RunExample,
    /// The Rust example op (kernels/axpy) on QEMU virt -smp 8.
    ///
    /// The Xtensa staticlib, the nine FLL images checked, the op on QEMU
    /// virt -smp 8; each core prints its part, core 0 checks the whole
    /// output.
    RunExampleRust,
    /// THE TEST COMMAND: every step, with a summary.
    ///
    /// Host `cargo test --workspace`, the Xtensa build of neuron-hal,
    /// neuron-runtime and neuroncustomop, the archive check, qemu-test, the
    /// FLL check and the on-target suite on QEMU. Prints a summary; exits
    /// non-zero on any failure. Also runs `miri` and `fuzz-smoke`.
    Test,
    /// Install what the commands need and this machine lacks (as root).
    ///
    /// The Debian packages (without recommends), nightly-2026-10-15 with
    /// rust-src, llvm-tools, miri, clippy and rustfmt, cargo-fuzz 0.13.2,
    /// the PyPI package ziglang 0.17.1 (the clang front end of the Xtensa
    /// C++ build). `test` and `run-example` check the same list first and
    /// stop, naming what provides each missing piece.
    Setup,
    /// The house-rule steps of `test` alone: rustfmt --check and clippy.
    ///
    /// rustfmt --check, clippy on the host (workspace, fuzz harnesses and
    /// python/) and clippy on Xtensa, warnings denied.
    Lints,
    /// The runtime's pure-logic tests under Miri (nightly-2026-10-15).
    Miri,
    /// Runs each fuzz target (fuzz/) for FUZZ_SECS seconds (default 10).
    ///
    /// On the committed seeds and regression inputs. See
    /// docs/reliability.md.
    FuzzSmoke,
    /// Build libneuroncustomop.a for Xtensa (release), check it and print its path.
    ///
    /// The check: ELF32 Xtensa objects, windowed code, SPEC symbols.
    BuildLib,
    /// Build the kernel images, link the nine FLL images and check them.
    FllCheck,
    /// Ratios ours/native of the Criterion host benchmarks.
    ///
    /// Run `cargo bench -p neuron-bench` first; writes
    /// target/criterion/ratios.md.
    BenchReport,
    /// Instruction counts, footprint and stack use against perf/budgets.toml.
    ///
    /// Instruction counts on the emulated core (kernels/perf-image under
    /// the TCG plugin perf/insn_count.c; the C++ kernels of perf/cpp built
    /// and run by customop, figures cpp_*), the runtime's footprint in the
    /// linked example image and its stack use, against perf/budgets.toml
    /// (fails above budget + 10 %). Also a step of `test`.
    Perf,
    /// Issue 28's figures: the simulator's speed and memory against NumPy.
    ///
    /// `customop run` of vendor-style ReLUs (perf/sim_bench) over a 64 MiB
    /// float32 .npy against a NumPy process doing the same, peak RSS per
    /// input byte, the accessor kernel against a plain C++ loop, and the
    /// Python op call (perf/python_call.py); a numpy venv is made once under
    /// target/sim-bench. Options: --check (against perf/budgets.toml
    /// [sim_bench]), --mib N, --runs N.
    SimBench {
        /// --check, --mib N, --runs N.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// cargo build for Xtensa with the pinned nightly and build-std.
    ///
    /// cargo +nightly-2026-10-15 build -Zbuild-std=core,alloc
    /// -Zbuild-std-features=compiler-builtins-mem -Zjson-target-spec
    /// --target xtensa-target.json --target-dir target/xtensa ARGS. Without
    /// ARGS: --release --manifest-path board/qemu/selftest/Cargo.toml.
    /// --release is added unless --release/--profile is given: at opt-level
    /// 0 LLVM crashes on compiler_builtins for Xtensa. Artifacts:
    /// target/xtensa/xtensa-target/<profile>/. RUSTFLAGS is not passed
    /// through; use XTASK_XTENSA_RUSTFLAGS.
    BuildXtensa {
        /// Passed to cargo build.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "CARGO-BUILD-ARGS")]
        args: Vec<String>,
    },
    /// Write every layout's script to target/xtensa/ld/<layout>.ld.
    LinkerScripts,
    /// Link with xtensa-lx106-elf-ld and a layout's generated script.
    ///
    /// Link staticlibs/objects with --gc-sections and the generated script
    /// for layout L (qemu, fll-cpu0..fll-cpu7, fll-single). Writes OUT and
    /// OUT.map. The entry (layout default or --entry) is also passed as -u
    /// so it is pulled from an archive.
    Link(LinkArgs),
    /// Run an image on qemu-system-xtensa -cpu de212 with semihosting.
    ///
    /// The guest gets the arguments `ELF cpus=N ARG...`. Exits with the
    /// guest's status; 124 on timeout.
    QemuRun(QemuRunArgs),
    /// The board self-test on QEMU, the negative tests and the FLL layouts.
    ///
    /// Build, link and run the board self-test on sim (1 and 4 cores) and
    /// virt (8 cores), the fault/panic/abort/hang negative tests, and check
    /// the FLL layouts by linking and inspecting (not running) images.
    QemuTest,
}

#[derive(clap::Args, Debug)]
struct LinkArgs {
    /// qemu, fll-cpu0..fll-cpu7 or fll-single.
    #[arg(long, value_name = "L")]
    layout: String,
    /// The image to write.
    #[arg(short = 'o', value_name = "OUT")]
    out: PathBuf,
    /// The entry symbol [default: the layout's].
    #[arg(short = 'e', long, value_name = "SYM")]
    entry: Option<String>,
    /// A symbol to pull from the archives (repeatable).
    #[arg(short = 'u', long = "undefined", value_name = "SYM")]
    undefined: Vec<String>,
    /// Staticlibs and objects.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct QemuRunArgs {
    /// The image.
    elf: PathBuf,
    /// sim or virt.
    #[arg(short = 'M', long, default_value = "sim")]
    machine: String,
    /// Cores.
    #[arg(long, default_value_t = 1, value_name = "N")]
    smp: u32,
    /// Seconds before the run is stopped (exit 124).
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    timeout: u64,
    /// The guest's arguments (after `--`).
    #[arg(last = true, value_name = "ARG")]
    extra: Vec<String>,
}

fn main() -> ExitCode {
    // Help and usage errors: clap prints them and exits (0, or 2).
    let cli = Cli::parse();
    let r = match cli.command {
        Some(Cmd::BuildXtensa { args }) => build_xtensa(&args).map(|_| 0),
        Some(Cmd::LinkerScripts) => linker_scripts().map(|_| 0),
        Some(Cmd::Link(a)) => cmd_link(a).map(|_| 0),
        Some(Cmd::QemuRun(a)) => cmd_qemu_run(a),
        Some(Cmd::QemuTest) => qemu_test().map(|_| 0),
        Some(Cmd::BuildLib) => target::build_lib().map(|p| {
            println!("{}", p.display());
            0
        }),
        Some(Cmd::RunExample) => main_job::run_example(),
        Some(Cmd::RunExampleRust) => target::run_example(),
        Some(Cmd::Setup) => preflight::setup().map(|_| 0),
        Some(Cmd::FuzzSmoke) => reliability::fuzz_smoke().map(|_| 0),
        Some(Cmd::Miri) => reliability::miri().map(|_| 0),
        Some(Cmd::Lints) => lints::fmt().and_then(|_| lints::clippy_host()).and_then(|_| lints::clippy_xtensa()).map(|_| 0),
        Some(Cmd::FllCheck) => target::build_images().and_then(|_| target::fll_images()).and_then(|p| {
            for l in &p {
                println!("FLL: {l}");
            }
            if p.is_empty() {
                println!("FLL: 9 images, every section in its window, no overlap, vector pages identical");
                Ok(0)
            } else {
                Err(format!("{} FLL problem(s)", p.len()))
            }
        }),
        Some(Cmd::Test) => target::test().map(|_| 0),
        Some(Cmd::BenchReport) => perf::bench_report().map(|_| 0),
        Some(Cmd::Perf) => perf::check().map(|_| 0),
        Some(Cmd::SimBench { args }) => sim_bench::main(&args).map(|_| 0),
        None => {
            let _ = Cli::command().print_help();
            Ok(0)
        }
    };
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------- paths

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask is in the workspace root").to_path_buf()
}

/// `$CARGO_TARGET_DIR` (or `<root>/target`).
pub(crate) fn xtask_target_base() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) if !d.is_empty() => {
            let d = PathBuf::from(d);
            if d.is_absolute() {
                d
            } else {
                std::env::current_dir().unwrap_or_else(|_| root()).join(d)
            }
        }
        _ => root().join("target"),
    }
}

/// `$CARGO_TARGET_DIR` (or `<root>/target`) + `/xtensa`.
pub(crate) fn xtensa_dir() -> PathBuf {
    xtask_target_base().join("xtensa")
}

pub(crate) fn artifact_dir(release: bool) -> PathBuf {
    xtensa_dir().join("xtensa-target").join(if release { "release" } else { "debug" })
}

pub(crate) fn llvm_bin(tool: &str) -> Result<PathBuf> {
    let out = Command::new("rustup").args(["run", TOOLCHAIN, "rustc", "--print", "sysroot"]).output().map_err(|e| format!("rustup: {e}"))?;
    if !out.status.success() {
        return Err(format!("cannot find the {TOOLCHAIN} sysroot (is it installed?)"));
    }
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok(Path::new(&sysroot).join("lib/rustlib/x86_64-unknown-linux-gnu/bin").join(tool))
}

pub(crate) fn run(cmd: &mut Command) -> Result {
    eprintln!("xtask: running {cmd:?}");
    let st = cmd.status().map_err(|e| format!("{:?}: {e}", cmd.get_program()))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("{:?} failed: {st}", cmd.get_program()))
    }
}

// ---------------------------------------------------------------- build

/// A `cargo` of the pinned nightly, with nothing of the outer (host)
/// cargo's environment (whatever the outer cargo set must not leak into a
/// nested nightly build).
pub(crate) fn nightly_cargo() -> Command {
    let mut cmd = Command::new("rustup");
    cmd.args(["run", TOOLCHAIN, "cargo"]);
    // cargo finds `cargo-miri`, `cargo-clippy` and `cargo-fmt` on PATH;
    // rustup's proxies for them are not on every machine (a hand-made or
    // minimal rustup install lacks them), the toolchain's own bin is.
    if let Some(bin) = preflight::toolchain_bin() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let joined = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path)));
        if let Ok(p) = joined {
            cmd.env("PATH", p);
        }
    }
    for v in [
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTDOC",
        "RUSTUP_TOOLCHAIN",
        "CARGO",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
    ] {
        cmd.env_remove(v);
    }
    cmd
}

pub(crate) fn build_xtensa(args: &[String]) -> Result {
    let root = root();
    let default = ["--release".to_string(), "--manifest-path".into(), root.join(SELFTEST_MANIFEST).display().to_string()];
    let mut args: Vec<String> = if args.is_empty() { default.to_vec() } else { args.to_vec() };
    // At opt-level 0 this LLVM crashes on compiler_builtins for Xtensa
    // ("Cannot scavenge register without an emergency spill slot"), so
    // an unoptimised build is never attempted.
    if !args.iter().any(|a| a == "--release" || a == "-r" || a.starts_with("--profile")) {
        eprintln!("xtask: note: adding --release (opt-level 0 crashes LLVM's Xtensa backend on compiler_builtins)");
        args.push("--release".into());
    }
    run(&mut xtensa_cargo("build", &args))
}

/// Device builds' optimisation: for size (the runtime footprint budget).
const DEVICE_OPT_LEVEL: &str = "s";

/// `cargo +nightly SUB` for the Xtensa target (`build`, `clippy`), with
/// `args` after the target selection.
pub(crate) fn xtensa_cargo(sub: &str, args: &[String]) -> Command {
    let root = root();
    let mut cmd = nightly_cargo();
    cmd.current_dir(&root)
        .arg(sub)
        .args(["-Zbuild-std=core,alloc", "-Zbuild-std-features=compiler-builtins-mem", "-Zjson-target-spec"])
        .arg("--target")
        .arg(root.join("xtensa-target.json"))
        .arg("--target-dir")
        .arg(xtensa_dir())
        // The device image is sized, not the host's (Cargo.toml's release
        // profile is the host's, opt-level 3).
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", DEVICE_OPT_LEVEL)
        .args(args);
    if let Ok(f) = std::env::var("XTASK_XTENSA_RUSTFLAGS") {
        cmd.env("RUSTFLAGS", f);
    }
    cmd
}

// ---------------------------------------------------------------- link

fn script_path(l: &layout::Layout) -> Result<PathBuf> {
    let dir = xtensa_dir().join("ld");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let p = dir.join(format!("{}.ld", l.name));
    let text = layout::script(l);
    // Rewrite only on change, so that timestamps stay meaningful.
    if std::fs::read_to_string(&p).ok().as_deref() != Some(text.as_str()) {
        customop_outpath::write(&p, text.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(p)
}

fn linker_scripts() -> Result {
    for l in layout::layouts() {
        println!("{:<11} {}  ({})", l.name, script_path(&l)?.display(), l.what);
    }
    Ok(())
}

/// Link `inputs` into `out` for `layout_name`. Returns the parsed image.
pub fn link(layout_name: &str, out: &Path, entry: Option<&str>, undefined: &[String], inputs: &[PathBuf]) -> Result<elf::Elf> {
    let l = layout::layout(layout_name).ok_or_else(|| format!("unknown layout `{layout_name}`"))?;
    let script = script_path(&l)?;
    let entry = entry.or(l.entry).ok_or_else(|| format!("layout `{layout_name}` has no default entry: pass --entry SYM"))?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut map = out.as_os_str().to_owned();
    map.push(".map");
    let mut cmd = Command::new(LD);
    cmd.arg("-T")
        .arg(&script)
        .args(["--gc-sections", "--orphan-handling=error", "--no-warn-rwx-segments"])
        .arg("-Map")
        .arg(&map)
        .arg("-o")
        .arg(out)
        .args(["-e", entry, "-u", entry]);
    for u in undefined {
        cmd.args(["-u", u]);
    }
    cmd.arg("--start-group").args(inputs).arg("--end-group");
    run(&mut cmd)?;
    let img = elf::Elf::parse(&std::fs::read(out).map_err(|e| format!("{}: {e}", out.display()))?)?;
    if img.machine != elf::EM_XTENSA {
        return Err(format!("{}: e_machine {} is not Xtensa ({})", out.display(), img.machine, elf::EM_XTENSA));
    }
    Ok(img)
}

fn cmd_link(a: LinkArgs) -> Result {
    let img = link(&a.layout, &a.out, a.entry.as_deref(), &a.undefined, &a.inputs)?;
    print_sections(&img);
    Ok(())
}

fn print_sections(img: &elf::Elf) {
    println!("entry 0x{:08x}", img.entry);
    for s in img.sections.iter().filter(|s| s.alloc && s.size > 0) {
        println!("  {:<10} 0x{:08x} .. 0x{:08x} ({} bytes)", s.name, s.addr, s.addr as u64 + s.size as u64, s.size);
    }
}

// ---------------------------------------------------------------- qemu

fn cmd_qemu_run(a: QemuRunArgs) -> Result<u8> {
    let o = qemu_run(&a.elf, &a.machine, a.smp, Duration::from_secs(a.timeout), &a.extra)?;
    match o.status {
        Some(s) => {
            eprintln!("xtask: guest exit status {s}");
            Ok(s as u8)
        }
        None if o.timed_out => Ok(124),
        None => Err("QEMU was killed by a signal".into()),
    }
}

// ---------------------------------------------------------------- qemu-test

struct Check {
    name: String,
    ok: bool,
    why: String,
}

pub(crate) fn qemu_test() -> Result {
    build_xtensa(&[])?;
    let lib = artifact_dir(true).join(SELFTEST_LIB);
    let images = xtensa_dir().join("images");
    let mut checks = Vec::new();
    let mut check = |name: &str, ok: bool, why: String| {
        eprintln!("xtask: [{}] {name}{}", if ok { "PASS" } else { "FAIL" }, if ok { String::new() } else { format!(": {why}") });
        checks.push(Check { name: name.into(), ok, why });
    };

    // --- the QEMU image
    let elf = images.join("selftest-qemu.elf");
    let img = link("qemu", &elf, None, &[], std::slice::from_ref(&lib))?;
    let sym = |n: &str| img.symbols.get(n).copied();
    check(
        "qemu image: reset stub at 0x5000_0000, VECBASE 0x6000_0000",
        sym("_ResetVector") == Some(layout::QEMU_ROM) && sym("_vector_table") == Some(layout::QEMU_RAM),
        format!("_ResetVector {:x?}, _vector_table {:x?}", sym("_ResetVector"), sym("_vector_table")),
    );
    let slots_ok = [
        ("_WindowOverflow4", 0x0),
        ("_WindowUnderflow12", 0x140),
        ("_KernelExceptionVector", 0x300),
        ("_UserExceptionVector", 0x340),
        ("_DoubleExceptionVector", 0x3c0),
    ]
    .iter()
    .all(|(n, off)| sym(n) == Some(layout::QEMU_RAM + off));
    check("qemu image: vectors at their VECBASE offsets", slots_ok, "see the .map file".into());
    match windowed_code_check(&elf) {
        Ok(()) => check("qemu image: ELF32 Xtensa, windowed code (entry/callx8/retw)", true, String::new()),
        Err(e) => check("qemu image: ELF32 Xtensa, windowed code (entry/callx8/retw)", false, e),
    }

    // --- positive runs
    let t = Duration::from_secs(20);
    for (machine, smp) in [("sim", 1u32), ("sim", 4), ("virt", 8)] {
        let name = format!("{machine} -smp {smp}: every core prints PRID, deep recursion ok, exit 0");
        let o = qemu_run(&elf, machine, smp, t, &[])?;
        let mut why = Vec::new();
        if o.status != Some(0) {
            why.push(format!("exit status {:?}{}", o.status, if o.timed_out { " (timeout)" } else { "" }));
        }
        for c in 0..smp {
            if !o.stdout.contains(&format!("selftest: cpu {c} PRID={c} of {smp}\n")) {
                why.push(format!("no PRID line for cpu {c}"));
            }
            if !o.stdout.contains(&format!("selftest: cpu {c} ok fib(20)=6765")) {
                why.push(format!("no ok line for cpu {c}"));
            }
        }
        if !o.stdout.contains(&format!("q7-qemu-board: {smp} core(s) done, 0 failed, exit 0")) {
            why.push("no summary line".into());
        }
        check(&name, why.is_empty(), why.join("; "));
    }

    // --- negative runs: (machine, smp, args, expected status, expected stderr text)
    type Negative<'a> = (&'a str, u32, &'a [&'a str], Option<i32>, &'a str);
    let neg: &[Negative] = &[
        ("sim", 1, &["fault=load"], Some(102), "user exception on cpu 0: EXCCAUSE="),
        ("sim", 1, &["fault=ill"], Some(102), "EXCCAUSE=0 (IllegalInstruction)"),
        ("virt", 8, &["fault=ill", "fault_cpu=5"], Some(102), "exception on cpu 5: EXCCAUSE=0 (IllegalInstruction) EPC1=0x6"),
        ("virt", 8, &["fault=load", "fault_cpu=7"], Some(102), "exception on cpu 7: EXCCAUSE="),
        ("sim", 1, &["fault=stack"], Some(102), "double exception on cpu 0: EXCCAUSE=15 (LoadStorePIFAddrError) DEPC=0x6000"),
        ("sim", 1, &["fault=panic"], Some(101), "panic on cpu 0: "),
        ("sim", 1, &["fault=abort"], Some(103), "abort() on cpu 0"),
        ("virt", 8, &["fault=fail", "fault_cpu=3"], Some(1), "cpu 3 returned 1"),
        ("sim", 1, &["fault=hang"], None, ""),
    ];
    for (machine, smp, args, want, text) in neg {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let name = format!("{machine} -smp {smp} {}: expect {}", args.join(" "), want.map_or("timeout".to_string(), |s| format!("exit {s}")));
        let timeout = if want.is_none() { Duration::from_secs(3) } else { t };
        let o = qemu_run(&elf, machine, *smp, timeout, &args)?;
        let ok_status = match want {
            Some(s) => o.status == Some(*s),
            None => o.timed_out,
        };
        let ok_text = o.stdout.contains(text) || o.stderr.contains(text);
        check(&name, ok_status && ok_text, format!("status {:?}, timed out {}, output has {text:?}: {ok_text}", o.status, o.timed_out));
    }

    // --- Q7 FLL layouts: link and inspect only (they cannot run on QEMU).
    for (lname, lo, hi) in [
        ("fll-cpu0", 0x8400_0000u32, 0x8420_0000u32),
        ("fll-cpu3", 0x8460_0000, 0x8480_0000),
        ("fll-cpu7", 0x84e0_0000, 0x8500_0000),
        ("fll-single", 0x8400_0000, 0x8600_0000),
    ] {
        let out = images.join(format!("selftest-{lname}.elf"));
        let name = format!("{lname}: code/data in [0x{lo:08x}, 0x{hi:08x}), vectors at 0");
        match link(lname, &out, Some("q7_board_main"), &[], std::slice::from_ref(&lib)) {
            Ok(img) => {
                let mut why = Vec::new();
                for s in img.sections.iter().filter(|s| s.alloc && s.size > 0) {
                    let inside =
                        if s.name == ".vectors" { s.addr == 0 && s.size <= 0x1000 } else { s.addr >= lo && (s.addr as u64 + s.size as u64) <= hi as u64 };
                    if !inside {
                        why.push(format!("{} at 0x{:08x}+0x{:x}", s.name, s.addr, s.size));
                    }
                }
                if img.section(".text").is_none_or(|s| s.addr != lo) {
                    why.push(".text does not start the code window".into());
                }
                check(&name, why.is_empty(), why.join("; "));
            }
            Err(e) => check(&name, false, e),
        }
    }

    let failed: Vec<&Check> = checks.iter().filter(|c| !c.ok).collect();
    eprintln!("\nxtask: qemu-test summary: {} checks, {} failed", checks.len(), failed.len());
    for c in &failed {
        eprintln!("  FAIL {}: {}", c.name, c.why);
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} qemu-test check(s) failed", failed.len()))
    }
}

/// Disassemble with the nightly's llvm-objdump and look for the windowed
/// ABI's `entry`, `callx8`/`call8` and `retw`. Its text is read by hand:
/// no maintained crate disassembles Xtensa.
pub(crate) fn windowed_code_check(elf: &Path) -> Result {
    let objdump = llvm_bin("llvm-objdump")?;
    let out = Command::new(&objdump).args(["--mattr=+windowed,+density", "-d"]).arg(elf).output().map_err(|e| format!("{}: {e}", objdump.display()))?;
    if !out.status.success() {
        return Err(format!("llvm-objdump failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    if !text.contains("file format elf32-xtensa") {
        return Err("llvm-objdump does not report elf32-xtensa".into());
    }
    let has = |ms: &[&str]| text.lines().any(|l| l.split_whitespace().any(|w| ms.contains(&w)));
    for ms in [&["entry"][..], &["retw", "retw.n"], &["call8", "callx8"]] {
        if !has(ms) {
            return Err(format!("no {} instruction in the image", ms.join("/")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> std::result::Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("xtask").chain(args.iter().copied()))
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn link_and_qemu_run_take_their_options_either_way() {
        let Ok(Cli { command: Some(Cmd::Link(l)) }) = parse(&["link", "--layout=qemu", "-o", "x.elf", "-u", "a", "--undefined=b", "lib.a"]) else { panic!() };
        assert_eq!(
            (l.layout.as_str(), l.out, l.undefined, l.inputs),
            ("qemu", PathBuf::from("x.elf"), vec!["a".to_string(), "b".into()], vec![PathBuf::from("lib.a")])
        );
        assert!(parse(&["link", "--layout", "qemu", "-o", "x.elf"]).is_err(), "inputs are required");
        let Ok(Cli { command: Some(Cmd::QemuRun(q)) }) = parse(&["qemu-run", "x.elf", "--smp=8", "--", "run=suite", "--x"]) else { panic!() };
        assert_eq!((q.machine.as_str(), q.smp, q.timeout, q.extra), ("sim", 8, 10, vec!["run=suite".to_string(), "--x".into()]));
        let Ok(Cli { command: Some(Cmd::BuildXtensa { args }) }) = parse(&["build-xtensa", "--release", "-p", "neuron-hal"]) else { panic!() };
        assert_eq!(args, ["--release", "-p", "neuron-hal"]);
        assert!(parse(&["frobnicate"]).is_err());
    }
}
