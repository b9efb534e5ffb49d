//! The command line: `customop build ...`, `customop run ...` and
//! `customop ops DIR`, parsed with clap; a usage error exits with status 2
//! ([`ErrorKind::Usage`]).

use crate::build::{build, BuildOptions};
use crate::compiler::{split_flags, Outcome};
use crate::error::{Error, ErrorKind, Result};
use crate::progress::{self, Level};
use crate::run::RunOptions;
use crate::schema::Target;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

/// What the exit statuses mean and the environment the tool reads (shown
/// under `--help`; a test checks the statuses against [`ErrorKind::ALL`]).
const EXIT_STATUS: &str = "\
EXIT STATUS:
  0 ok, 2 usage, 3 refused source, 4 compile/link error, 5 I/O, 6 bad run input, 7 kernel failed,
  8 shape function failed, 10 environment, 11 the simulator and the emulated device disagree
  (--on both), 12 the kernel or shape function crashed, 13 --timeout passed, 14 a directory another
  user owns or can write (see NEURONCUSTOMOP_TRUST_DIR), 130 interrupted (Ctrl-C)

ENVIRONMENT:
  CXX                        the host C++ compiler [default: g++]
  NEURON_INCLUDE             the headers' directory [default: the repository's include/]
  NEURON_STATICLIB           the host libneuroncustomop.a to link [default: the one built with customop]
  NEURON_SIM_HBM_GIB         the simulated HBM's size in GiB [default: 64]
  NEURON_SIM_SANITIZE=0      turn off the simulator's element checks (unwritten, cross-core, overlaps)
  NEURON_QEMU_CHECK=0        turn off the emulated cores' check of every load and store (--on qemu|both)
  CUSTOMOP_QEMU_TIMEOUT      seconds an emulated run may take without --timeout [default: 120]
  CUSTOMOP_QEMU_PLUGIN       a TCG plugin for emulated runs (lib.so,arg=...), with CUSTOMOP_QEMU_PLUGIN_LOG its log file (QEMU then runs unconfined)
  CUSTOMOP_QEMU_ARGS         more qemu-system-xtensa arguments for emulated runs (e.g. -d exec -D FILE; QEMU then runs unconfined)
  CUSTOMOP_XTENSA_LIBS       a directory with prebuilt device runtimes (else cargo builds them)
  PYTHON                     the Python with ziglang, for device builds [default: python3]
  OBJCOPY                    objcopy, for device builds [default: objcopy]
  NEURONCUSTOMOP_TRUST_DIR   directories to use although another user owns them or can write them
                             (colon-separated, each with what is inside it; * for any): a build
                             directory is code, so one that is not yours is refused (status 14)
  NEURONCUSTOMOP_LOCK_TIMEOUT  seconds to wait for another build of the same directory [default: 600]";

/// A value among `names`, parsed by `parse` (whose message a bad value
/// gets); `--help` lists the names as `[possible values: ...]`.
#[derive(Clone)]
struct Choices<T> {
    names: &'static [(&'static str, &'static str)],
    parse: fn(&str) -> Result<T>,
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Choices<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &std::ffi::OsStr) -> std::result::Result<T, clap::Error> {
        let s = value.to_string_lossy();
        (self.parse)(&s).map_err(|e| {
            let arg = arg.map_or_else(String::new, |a| format!(" for '{a}'"));
            clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("invalid value '{s}'{arg}: {}\n", e.message)).with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.names.iter().map(|(n, help)| PossibleValue::new(*n).help(*help))))
    }
}

const TARGETS: Choices<Target> = Choices {
    names: &[
        ("sim", "the host simulator"),
        ("qemu", "the emulated Xtensa cluster and the host simulator"),
        ("q7", "the device's FLL images (not runnable here)"),
    ],
    parse: Target::parse,
};

const PLACES: Choices<crate::run::On> = Choices {
    names: &[
        ("sim", "the host simulator"),
        ("qemu", "the emulated Xtensa cluster (a --target qemu build)"),
        ("both", "both, outputs compared (bit for bit, or within --rtol/--atol)"),
    ],
    parse: crate::run::On::parse,
};

/// Builds vendor-style custom-op kernels and runs them on the host
/// simulator or the emulated cluster.
#[derive(Parser, Debug)]
#[command(name = "customop", version, after_help = EXIT_STATUS, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Build(BuildArgs),
    Run(RunArgs),
    Ops(OpsArgs),
    Env(EnvArgs),
}

/// Show what this machine has for building and running kernels.
///
/// Where each part was found (the headers, the host runtime, the
/// compilers, QEMU and its plugin API, the Xtensa toolchain, the device
/// runtimes) and, for what is missing, the one command that installs it.
/// Exit status 10 when the host simulator lacks a part; the emulated
/// cores' parts are reported, not required.
#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_STATUS)]
struct EnvArgs {}

/// List a built library's ops with their signatures.
///
/// Reads DIR's schema (written by `customop build`): each op, the compute
/// function's parameter types, its shape function and where
/// NEURON_LIBRARY declares it.
#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_STATUS)]
struct OpsArgs {
    /// The build directory.
    dir: PathBuf,
}

/// Build a library of ops from compute and shape sources.
///
/// Reads the ops from the shape sources' NEURON_LIBRARY blocks, generates
/// the wrappers (DIR/customop-build/ops.cpp, shapes.cpp), compiles and
/// links DIR/libNAME.so; it replaces only files it wrote
/// (DIR/customop-build/manifest).
#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_STATUS)]
struct BuildArgs {
    /// The library's name (libNAME.so).
    #[arg(long)]
    name: String,
    /// A compute source (repeatable).
    #[arg(long, value_name = "A.cpp", required = true)]
    compute: Vec<PathBuf>,
    /// A shape source with NEURON_LIBRARY (repeatable).
    #[arg(long, value_name = "S.cpp", required = true)]
    shape: Vec<PathBuf>,
    /// Build the kernel for the 8 cores.
    #[arg(long)]
    multicore: bool,
    /// What to build for.
    #[arg(long, default_value = "sim", value_parser = TARGETS)]
    target: Target,
    /// The build directory, where libNAME.so goes [default: build/NAME].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print each compile and link command and everything it prints
    /// (warnings too; without -v, warnings are summarised at the end).
    #[arg(short, long)]
    verbose: bool,
    /// Extra compiler flags, split as a shell would (repeatable).
    #[arg(long, value_name = "\"...\"", allow_hyphen_values = true)]
    cflags: Vec<String>,
    /// Extra linker flags for libNAME.so (-L, -l, ...), split as a shell would (repeatable).
    #[arg(long, value_name = "\"...\"", allow_hyphen_values = true)]
    ldflags: Vec<String>,
    /// The host library to link [default: the one built with this tool].
    #[arg(long, value_name = "libneuroncustomop.a")]
    staticlib: Option<PathBuf>,
    /// The headers' directory [default: NEURON_INCLUDE, else the repository's include/].
    #[arg(long, value_name = "DIR")]
    include: Option<PathBuf>,
}

/// Run an op of a built library.
///
/// Each ARG is a .npy file (a tensor argument) or a number (a scalar
/// argument); the op's shape function gives the output's shape and dtype;
/// the output goes to OUT.npy. --on qemu runs a --target qemu build on the
/// emulated cluster (per-core status and printf shown); --on both runs it
/// on the simulator and on QEMU and compares the outputs bit for bit. The
/// shape function and the simulator's run go in a child process: a crash
/// is reported (core, op, signal, address); --timeout stops any run after
/// SECONDS. --timings prints where a run on the simulator spent its time.
#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_STATUS)]
struct RunArgs {
    /// The build directory.
    dir: PathBuf,
    /// The op.
    op: String,
    /// The op's arguments: .npy files and numbers (negative ones too).
    #[arg(value_name = "ARG")]
    args: Vec<String>,
    /// The output file (a .npy file; `build --out` is a directory).
    #[arg(short = 'o', long = "out", value_name = "OUT.npy")]
    out: PathBuf,
    /// 1 or 8 [default: 8 for a --multicore build, else 1].
    #[arg(long, value_name = "1|8", value_parser = |v: &str| v.parse::<u32>().map_err(|_| format!("--cores {v}: expected a number of cores, 1 or 8")))]
    cores: Option<u32>,
    /// Print the run's report.
    #[arg(long)]
    report: bool,
    /// Where the kernel runs.
    #[arg(long, default_value = "sim", value_parser = PLACES)]
    on: crate::run::On,
    /// Stop the shape function and the run after SECONDS, on the simulator
    /// and on the emulated cluster alike (exit status 13).
    #[arg(long, value_name = "SECONDS", value_parser = |v: &str| crate::contained::parse_timeout(v, "--timeout").map_err(|e| e.message))]
    timeout: Option<Duration>,
    /// Print where a run on the simulator spent its time (inputs, setup,
    /// copy-in, kernel per core, verdict, copy-out).
    #[arg(long)]
    timings: bool,
    /// With --on both: the outputs agree where |device - simulator| <=
    /// ATOL + RTOL * |simulator| (torch.testing.assert_close's rule)
    /// [default: 0, bit for bit].
    #[arg(long, value_name = "RTOL", value_parser = |v: &str| crate::differential::Tolerance::parse(v, "--rtol"))]
    rtol: Option<f64>,
    /// With --on both: the absolute part of the tolerance (see --rtol)
    /// [default: 0].
    #[arg(long, value_name = "ATOL", value_parser = |v: &str| crate::differential::Tolerance::parse(v, "--atol"))]
    atol: Option<f64>,
    /// Profile the emulated run (--on qemu or both) into DIR: the top
    /// lines with a modeled device time, DIR/profile.json,
    /// DIR/flamegraph.svg, DIR/trace.json (docs/profiling.md).
    #[arg(long, value_name = "DIR")]
    profile: Option<PathBuf>,
    /// Also write the simulator's output to PATH as the kernel left it,
    /// even when the run fails (a file other than -o).
    #[arg(long, value_name = "PATH")]
    keep_output: Option<PathBuf>,
    /// Run the kernel in this process rather than a child, so a debugger
    /// (gdb --args customop run ...) stops in it; a crash ends the tool.
    #[arg(long)]
    no_fork: bool,
    /// Also write the run's report as one self-contained HTML page to
    /// FILE: the output coloured by the core that wrote each element, the
    /// findings, per-core counters (docs/debugging.md).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

impl BuildArgs {
    fn options(self) -> Result<(BuildOptions, bool)> {
        let mut cflags = Vec::new();
        for c in &self.cflags {
            cflags.extend(split_flags(c)?);
        }
        let out = self.out.unwrap_or_else(|| PathBuf::from("build").join(&self.name));
        let mut ldflags = Vec::new();
        for l in &self.ldflags {
            ldflags.extend(split_flags(l)?);
        }
        let verbose = self.verbose;
        Ok((
            BuildOptions {
                name: self.name,
                compute: self.compute,
                shape: self.shape,
                multicore: self.multicore,
                target: self.target,
                out,
                cflags,
                ldflags,
                staticlib: self.staticlib,
                include: self.include,
            },
            verbose,
        ))
    }
}

impl RunArgs {
    /// The options, and whether `--report` and `--timings` were given.
    fn options(self) -> (RunOptions, bool, bool, Option<PathBuf>) {
        let args = self.args.into_iter().map(|a| a.strip_prefix(NUMBER_MARK).map_or_else(|| a.clone(), str::to_owned)).collect();
        let o = RunOptions {
            dir: self.dir,
            op: self.op,
            args,
            out: Some(self.out),
            cores: self.cores,
            on: self.on,
            timeout: self.timeout,
            keep_output: self.keep_output,
            no_fork: self.no_fork,
            html: self.html,
            tolerance: crate::differential::Tolerance { rtol: self.rtol.unwrap_or(0.0), atol: self.atol.unwrap_or(0.0) },
        };
        (o, self.report, self.timings, self.profile)
    }
}

/// What the command line asks for: a command, or text to print (help,
/// version) with its exit status. A usage error is an [`ErrorKind::Usage`]
/// error carrying clap's message (what is wrong, the usage line).
enum Parsed {
    /// The options, `-v`.
    Build(BuildOptions, bool),
    /// `customop ops DIR`.
    Ops(PathBuf),
    /// `customop env`.
    Env,
    /// The options, `--report`, `--timings`, `--profile`.
    Run(RunOptions, bool, bool, Option<PathBuf>),
    Print(String),
}

/// Marks a negative number among `run`'s arguments as a value. clap takes
/// `-1.5` and `-2e3` for values but not every number a scalar argument may
/// be (`-1e-5`, `-.5`, `-inf`), and no clap setting accepts those without
/// also swallowing the options after them; the mark is removed after
/// parsing.
const NUMBER_MARK: &str = "\u{1}";

/// `args` with `run`'s negative numbers marked (not an option's value).
fn mark_numbers(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let option_value = i > 0 && matches!(args[i - 1].as_str(), "-o" | "--out" | "--cores" | "--on" | "--timeout" | "--profile" | "--rtol" | "--atol");
        let number = a.starts_with('-') && a.parse::<f64>().is_ok();
        out.push(if args.first().is_some_and(|c| c == "run") && number && !option_value { format!("{NUMBER_MARK}{a}") } else { a.clone() });
    }
    out
}

fn parse(args: &[String]) -> Result<Parsed> {
    let args = mark_numbers(args);
    let argv = std::iter::once("customop").chain(args.iter().map(String::as_str));
    match Cli::try_parse_from(argv) {
        Ok(Cli { command: Command::Build(b) }) => b.options().map(|(o, v)| Parsed::Build(o, v)),
        Ok(Cli { command: Command::Ops(o) }) => Ok(Parsed::Ops(o.dir)),
        Ok(Cli { command: Command::Env(EnvArgs {}) }) => Ok(Parsed::Env),
        Ok(Cli { command: Command::Run(r) }) => {
            if (r.rtol.is_some() || r.atol.is_some()) && r.on != crate::run::On::Both {
                return Err(Error::new(
                    ErrorKind::Usage,
                    "--rtol and --atol say how close the simulator's and the emulated device's outputs must be: use them with --on both".to_owned(),
                ));
            }
            let (o, report, timings, profile) = r.options();
            Ok(Parsed::Run(o, report, timings, profile))
        }
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => Ok(Parsed::Print(e.render().to_string())),
        Err(e) => {
            let text = e.render().to_string();
            Err(Error::new(ErrorKind::Usage, text.strip_prefix("error: ").unwrap_or(&text).trim_end().to_owned()))
        }
    }
}

fn dispatch(args: &[String]) -> Result<()> {
    match parse(args)? {
        Parsed::Ops(dir) => {
            print!("{}", crate::ops_list::describe(&dir)?);
            Ok(())
        }
        Parsed::Env => {
            let (text, ok) = crate::environment::report(&crate::environment::parts());
            print!("{text}");
            if ok {
                Ok(())
            } else {
                Err(Error::new(ErrorKind::Environment, "the host simulator lacks a part listed above as missing".to_owned()))
            }
        }
        Parsed::Build(o, verbose) => {
            let (b, warnings) = progress::scoped(if verbose { Level::Verbose } else { Level::Steps }, || build(&o));
            show_warnings(&warnings, verbose);
            let b = b?;
            let compiled = b.objects.iter().filter(|(_, o)| *o == Outcome::Compiled).count();
            let ops: Vec<&str> = b.schema.ops.iter().map(|o| o.name.as_str()).collect();
            println!(
                "built {} ({} op(s): {}; {compiled} source(s) compiled, {} cached{})",
                b.library.display(),
                ops.len(),
                ops.join(", "),
                b.objects.len() - compiled,
                if b.linked { "" } else { ", not relinked" }
            );
            if !b.device_objects.is_empty() {
                let dc = b.device_objects.iter().filter(|(_, o)| *o == Outcome::Compiled).count();
                println!("xtensa: {dc} source(s) compiled, {} cached; image(s):", b.device_objects.len() - dc);
                for (img, stripped) in &b.images {
                    match stripped {
                        Some(s) => println!("  {} (stripped: {})", img.display(), s.display()),
                        None => println!("  {}", img.display()),
                    }
                }
            }
            let dir = b.library.parent().unwrap_or(std::path::Path::new("."));
            let work = dir.join(crate::workdir::WORK_DIR);
            println!(
                "generated {} (kernel side) and {} (host side); schema {}",
                work.join(crate::codegen::OPS_SOURCE).display(),
                work.join(crate::codegen::SHAPES_SOURCE).display(),
                dir.join(crate::schema::SCHEMA_FILE).display()
            );
            Ok(())
        }
        Parsed::Run(o, report, timings, profile) => {
            let r = crate::run::run_profiled(&o, profile.as_deref())?;
            // The emulated run's report is its only status: always shown.
            if report || o.on != crate::run::On::Sim {
                print!("{}", r.report);
            }
            match (&r.timings, timings) {
                (Some(t), true) => println!("{t}"),
                (None, true) => println!("timings: only for a run on the simulator alone (--on sim)"),
                _ => {}
            }
            if let Some(p) = &r.profile {
                print!("{p}");
            }
            let a = &r.agreement;
            let mut agreement = match (a.within, a.nans) {
                (0, 0) => String::from(": outputs bit-identical"),
                (0, n) => format!(
                    ": outputs bit-identical but for {n} NaN(s) whose sign or payload differs (the host's default NaN is negative, the device's positive)"
                ),
                (w, _) => format!(": outputs agree within --rtol {} --atol {} ({w} element(s) differ", o.tolerance.rtol, o.tolerance.atol),
            };
            if a.within > 0 {
                if let Some(l) = &a.largest {
                    agreement.push_str(&format!("; the largest difference is {l}"));
                }
                agreement.push(')');
            }
            println!(
                "ran {} on {} core(s){}: output {:?} {:?} written to {}",
                o.op,
                r.cores,
                match o.on {
                    crate::run::On::Sim => String::new(),
                    crate::run::On::Qemu => String::from(" of the emulated cluster"),
                    crate::run::On::Both => format!(" of the simulator and of the emulated cluster{agreement}"),
                },
                r.output.dtype,
                r.output.shape,
                o.out.as_ref().map_or_else(String::new, |p| p.display().to_string())
            );
            Ok(())
        }
        Parsed::Print(text) => {
            print!("{text}");
            Ok(())
        }
    }
}

/// The warnings of compiles that passed, on stderr: with `-v` they were
/// streamed already, so only counted; without it, each diagnostic line.
fn show_warnings(warnings: &[progress::Warning], verbose: bool) {
    for w in warnings {
        let lines = w.headlines();
        if verbose {
            eprintln!("customop: {}: {} line(s) of warnings (above)", w.what, lines.len());
            continue;
        }
        eprintln!("customop: {} printed:", w.what);
        for l in lines {
            eprintln!("  {l}");
        }
    }
    if !warnings.is_empty() && !verbose {
        eprintln!("customop: -v shows each command and its full output");
    }
}

/// Runs the command line; returns the exit status (messages on stderr).
pub fn main(args: &[String]) -> i32 {
    match dispatch(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("customop: {e}");
            e.kind.exit_code()
        }
    }
}

#[cfg(test)]
mod tests;
