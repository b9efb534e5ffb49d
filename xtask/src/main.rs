//! `cargo xtask <cmd>`: the Xtensa side of the build (see `cargo xtask
//! help`; the command line is parsed with clap).
//!
//! Host-only, std-only. Everything Xtensa-specific about invoking cargo,
//! the linker and QEMU lives here so that the workspace's own host builds
//! stay plain `cargo build` / `cargo test`.

mod apt;
mod architecture;
mod build;
mod cli;
mod link;
mod lints;
mod main_job;
mod perf;
mod perf_cpp;
mod preflight;
mod python_env;
mod qemu;
mod qemu_test;
mod reliability;
mod second_qemu;
mod sim_bench;
mod step_log;
mod target;

use clap::{CommandFactory, Parser, Subcommand};
use neuron_image::{elf, fll_check, layout};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

pub(crate) use build::{build_xtensa, nightly_cargo, xtensa_cargo};
use cli::{Cli, Cmd, LinkArgs, QemuRunArgs};
pub(crate) use link::link;
use link::{cmd_link, linker_scripts};
pub(crate) use qemu::qemu_run;
pub(crate) use qemu_test::{qemu_test, windowed_code_check};

/// The only toolchain known to build correct Xtensa code (TOOLCHAIN.md).
pub(crate) const TOOLCHAIN: &str = "nightly-2026-10-15";
pub(crate) const LD: &str = "xtensa-lx106-elf-ld";
const SELFTEST_MANIFEST: &str = "board/qemu/selftest/Cargo.toml";
const SELFTEST_LIB: &str = "libq7_qemu_selftest.a";

pub(crate) type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    // Help and usage errors: clap prints them and exits (0, or 2).
    let cli = Cli::parse();
    // The tools it runs take their Python (ziglang's) from the project's
    // virtualenv once setup has made it.
    python_env::export();
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

/// `$CARGO_TARGET_DIR` (relative to the working directory, as cargo
/// reads it) or `<root>/target`: customop-emulator's one rule.
pub(crate) fn xtask_target_base() -> PathBuf {
    customop_emulator::target_dir::of(&root(), &std::env::current_dir().unwrap_or_else(|_| root()))
}

/// The target directory's device builds folder (`xtensa/`).
pub(crate) fn xtensa_dir() -> PathBuf {
    customop_emulator::target_dir::xtensa(&xtask_target_base())
}

pub(crate) fn artifact_dir(release: bool) -> PathBuf {
    customop_emulator::target_dir::device_artifacts(&xtask_target_base(), release)
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
