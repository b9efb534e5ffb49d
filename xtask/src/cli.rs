//! The command line of `cargo xtask` (clap), one subcommand per job.

use crate::*;
/// The Xtensa side of the build: device builds, images, QEMU, the test command.
///
/// `cargo xtask help <command>` (or `<command> --help`) says more about each.
#[derive(Parser, Debug)]
#[command(name = "xtask", bin_name = "cargo xtask")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Cmd {
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
    /// the TCG plugin perf/profile.c, the instrument of `customop run
    /// --profile`; the C++ kernels of perf/cpp built
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
pub(crate) struct LinkArgs {
    /// qemu, fll-cpu0..fll-cpu7 or fll-single.
    #[arg(long, value_name = "L")]
    pub(crate) layout: String,
    /// The image to write.
    #[arg(short = 'o', value_name = "OUT")]
    pub(crate) out: PathBuf,
    /// The entry symbol [default: the layout's].
    #[arg(short = 'e', long, value_name = "SYM")]
    pub(crate) entry: Option<String>,
    /// A symbol to pull from the archives (repeatable).
    #[arg(short = 'u', long = "undefined", value_name = "SYM")]
    pub(crate) undefined: Vec<String>,
    /// Staticlibs and objects.
    #[arg(required = true, value_name = "INPUT")]
    pub(crate) inputs: Vec<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub(crate) struct QemuRunArgs {
    /// The image.
    pub(crate) elf: PathBuf,
    /// sim or virt.
    #[arg(short = 'M', long, default_value = "sim")]
    pub(crate) machine: String,
    /// Cores.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub(crate) smp: u32,
    /// Seconds before the run is stopped (exit 124).
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub(crate) timeout: u64,
    /// The guest's arguments (after `--`).
    #[arg(last = true, value_name = "ARG")]
    pub(crate) extra: Vec<String>,
}
