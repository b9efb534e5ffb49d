//! `customop run DIR OP ARG... -o OUT.npy [--on sim|qemu|both]`: the op's
//! shape function gives the output's shape and dtype (on the host, as the
//! vendor's framework does), the kernel runs on the simulator, on the
//! emulated cluster (a `--target qemu` build), or on both with the outputs
//! compared bit for bit; the output is written as `.npy`.

use crate::error::{Error, ErrorKind, Result};
use crate::npy::{self, Array, Dtype};
use crate::schema::{ArgKind, Op, Schema, Target};
use crate::shape::{OutputSpec, Value};
use crate::sim::{Sim, SimApi};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod args;
mod qemu;
mod sim_run;
use args::parse_arg;
pub use args::{marshal_float, shape_values, Placed};
use qemu::run_qemu;
pub use sim_run::{run_sim, Files, SimRun};

/// What to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The build directory.
    pub dir: PathBuf,
    /// The op.
    pub op: String,
    /// One per argument: a `.npy` path (tensor) or a number.
    pub args: Vec<String>,
    /// Where the output goes (`None`: not written).
    pub out: Option<PathBuf>,
    /// Cores (default: 8 for a `--multicore` build, else 1).
    pub cores: Option<u32>,
    /// Where the kernel runs.
    pub on: On,
    /// How long the shape function and the simulator's run may take
    /// (`--timeout`; None: no bound).
    pub timeout: Option<std::time::Duration>,
    /// Where the simulator's output goes as the kernel left it, also when
    /// the run fails (`--keep-output`; None: not kept).
    pub keep_output: Option<PathBuf>,
    /// Run the shape function and the kernel in this process, not in a
    /// child (`--no-fork`: for a debugger; no isolation, no time bound).
    pub no_fork: bool,
    /// Where the run's report page goes (`--html`; None: not written),
    /// also when the run fails.
    pub html: Option<PathBuf>,
    /// `--on both`: how close the two outputs must be (`--rtol`,
    /// `--atol`; default: bit for bit).
    pub tolerance: crate::differential::Tolerance,
}

/// Where a `customop run` on the simulator spent its time (`--timings`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    /// Reading the inputs' headers and mapping them (this process).
    pub inputs: Duration,
    /// The run's process: the simulator made and the ops registered.
    pub setup: Duration,
    /// The run's process: the inputs copied into the simulated HBM.
    pub copy_in: Duration,
    /// Each core's kernel, in core order.
    pub kernel: Vec<Duration>,
    /// The run outside the kernels: the output's sentinel fill and
    /// element states, every check of the verdict (the kernels' first raw
    /// pointer's input hashes are in the kernel's time).
    pub verdict: Duration,
    /// The output copied out of the simulated HBM into its file (or
    /// returned), and the file put in place.
    pub copy_out: Duration,
    /// The whole run, from the arguments to the output in place.
    pub total: Duration,
}

impl std::fmt::Display for Timings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: &Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
        let kernel: Vec<String> = self.kernel.iter().map(ms).collect();
        write!(
            f,
            "timings: inputs {} ms, setup {} ms, copy-in {} ms, kernel per core [{}] ms, verdict {} ms, copy-out {} ms, total {} ms",
            ms(&self.inputs),
            ms(&self.setup),
            ms(&self.copy_in),
            kernel.join(", "),
            ms(&self.verdict),
            ms(&self.copy_out),
            ms(&self.total)
        )
    }
}

/// Where `run` runs the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum On {
    /// The host simulator.
    #[default]
    Sim,
    /// The emulated cluster (QEMU), a `--target qemu` build.
    Qemu,
    /// Both, outputs and run status compared.
    Both,
}

impl On {
    /// Parses `sim`, `qemu`, `both`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "sim" => Ok(Self::Sim),
            "qemu" => Ok(Self::Qemu),
            "both" => Ok(Self::Both),
            _ => Err(Error::new(ErrorKind::Usage, format!("--on {s}: expected sim, qemu or both"))),
        }
    }
}

/// What a run gave.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// The output tensor.
    pub output: Array,
    /// The per-core report.
    pub report: String,
    /// The cores it ran on.
    pub cores: u32,
    /// `--on both`: how the two outputs agreed (NaNs with other bits,
    /// elements within the tolerance, the largest difference).
    pub agreement: crate::differential::Agreement,
    /// Where the time went (a run on the simulator alone).
    pub timings: Option<Timings>,
    /// `--profile`: the profile's report (its files are in the directory).
    pub profile: Option<String>,
}

/// The error of a run that failed with status `rc`: the op, the cores, the
/// code and its `msg`, where it failed (`on`, if that needs saying), then
/// the report.
pub fn run_failed(op: &str, cores: u32, rc: i32, msg: &str, on: Option<&str>, report: &str) -> Error {
    let on = on.map(|o| format!(" ({o})")).unwrap_or_default();
    Error::new(ErrorKind::RunFailed, format!("op `{op}` failed on {cores} core(s): error {rc}: {msg}{on}\n{report}")).with_runtime_error(rc)
}

fn bad(msg: String) -> Error {
    Error::new(ErrorKind::BadInput, msg)
}

/// Loads the build directory's library and its simulator API (under the
/// directory's read lock: the schema and the library of one build).
pub fn load(dir: &Path) -> Result<(Schema, SimApi)> {
    let _hold = crate::workdir::read_lock(dir)?;
    let schema = Schema::load(dir)?;
    if schema.target == Target::Q7 {
        return Err(bad(format!(
            "{} was built for target q7: its FLL images run on the device's loader, not here; \
             build with --target sim (the simulator) or --target qemu (the emulated cluster and the simulator)",
            dir.display()
        )));
    }
    let api = crate::loaded::api(&dir.join(&schema.library_file), schema.library_size, &schema.library_hash)?;
    Ok((schema, api))
}

/// Runs an op.
pub fn run(o: &RunOptions) -> Result<RunOutcome> {
    run_profiled(o, None)
}

/// [`run`], with `--on qemu|both` profiled into directory `profile`
/// ([`crate::profile`]).
pub fn run_profiled(o: &RunOptions, profile: Option<&Path>) -> Result<RunOutcome> {
    if profile.is_some() && o.on == On::Sim {
        return Err(bad("--profile profiles the emulated device: add --on qemu or --on both (the simulator's host times say nothing of the device's)".into()));
    }
    let mut profiled = None;
    let started = Instant::now();
    let (schema, api) = load(&o.dir)?;
    let op = schema.op(&o.op)?;
    if o.args.len() != op.params.len() {
        let kinds: Vec<&str> = op.params.iter().map(|p| p.cpp_type.as_str()).collect();
        return Err(bad(format!("op `{}` takes {} argument(s) ({}), {} given", op.name, op.params.len(), kinds.join(", "), o.args.len())));
    }
    let cores = cores_for(o.cores, schema.multicore, &o.dir.display().to_string(), "--cores ", "--multicore")?;
    check_debug_options(o)?;
    // On the simulator alone, the inputs are mapped and copied once, into
    // the simulated HBM, and the output goes from there to its file: the
    // run's process writes it under a temporary name, renamed into place
    // here once the run passed.
    let direct = o.on == On::Sim;
    let mut files = Files::default();
    files.inputs.resize_with(o.args.len(), || None);
    let placed =
        o.args.iter().zip(files.inputs.iter_mut()).enumerate().map(|(i, (a, m))| parse_arg(op, i, a, direct.then_some(m))).collect::<Result<Vec<_>>>()?;
    let inputs_done = started.elapsed();
    // Where the output goes is settled before anything runs: a directory
    // is refused with nothing done; a device or FIFO gets no temporary
    // (the bytes come back and are written into it).
    let temp = match &o.out {
        Some(out) => {
            let t = crate::atomic::temp_for(out)?;
            t.filter(|_| direct)
        }
        None => None,
    };
    files.output = temp.as_ref().map(|t| t.to_path_buf());
    files.keep_failed = o.keep_output.is_some();
    files.writer_map = o.html.is_some();
    if o.on != On::Sim && (schema.target != Target::Qemu || schema.images.is_empty()) {
        return Err(bad(format!(
            "{} was built for target {}: --on {} needs a --target qemu build (the emulated cluster's image)",
            o.dir.display(),
            schema.target.name(),
            if o.on == On::Qemu { "qemu" } else { "both" }
        )));
    }
    // The shape function and the simulator's run go in a child process
    // (`contained`): a crash, a timeout or Ctrl-C ends it, not this one.
    let sim_cores = (o.on != On::Qemu).then_some(cores);
    let (spec, mut sim) = match o.no_fork {
        true => crate::contained::shape_and_run_here(api, op, &o.args, &placed, &files, sim_cores)?,
        false => {
            let bounds = crate::contained::Bounds { timeout: o.timeout, option: "--timeout", interrupted: &mut || false };
            crate::contained::shape_and_run(api, op, &o.args, &placed, &files, sim_cores, bounds)?
        }
    };
    let mut sim_run = || sim.take().ok_or_else(|| Error::new(ErrorKind::Environment, format!("op `{}`: the run's process sent no kernel result", op.name)));
    let OutputSpec { dtype, ref shape } = spec;
    // A failed run's output, kept where --keep-output says: the error
    // names the file (or why it could not be written).
    let kept = |data: &[u8]| match &o.keep_output {
        Some(k) if !data.is_empty() => match npy::write(k, &Array { dtype: spec.dtype, shape: spec.shape.clone(), data: data.to_vec() }) {
            Ok(()) => format!("\nthe output as the kernel left it (elements it never wrote hold the simulator's fill) is in {}", k.display()),
            Err(e) => format!("\n--keep-output: {}", e.message),
        },
        Some(_) => "\n--keep-output: the run left no output to keep".to_owned(),
        None => String::new(),
    };
    let failed = |on: &str, rc: i32, msg: &str, report: &str| run_failed(&op.name, cores, rc, msg, Some(on), report);
    // The report page, written whatever the verdict: a failed run's error
    // names it.
    let page = |report: &str, writers: &Option<(u64, Vec<u16>)>| -> Result<String> {
        let Some(path) = &o.html else { return Ok(String::new()) };
        let input = crate::report_page::PageInput { op: &op.name, shape: &spec.shape, report, writers: writers.as_ref().map(|(e, c)| (*e, &c[..])) };
        crate::atomic::write(path, crate::report_page::page(&input).as_bytes())?;
        Ok(format!("\nthe report page is in {}", path.display()))
    };
    let mut agreement = crate::differential::Agreement::default();
    let mut timings = None;
    let (data, report) = match o.on {
        On::Sim => {
            let SimRun { rc, report, data, timings: t, writers } = sim_run()?;
            let paged = page(&report, &writers)?;
            if rc != 0 {
                return Err(failed("on the simulator", rc, &api.error_message(rc), &format!("{report}{}{paged}", kept(&data))));
            }
            timings = Some(t);
            (data, report)
        }
        On::Qemu => {
            let q = run_qemu(&o.dir, &schema, op, &placed, &spec, cores, o.timeout, profile, &mut profiled)?;
            if q.code() != 0 {
                return Err(failed("on the emulated cluster", q.code(), &api.error_message(q.code()), &q.report()));
            }
            (q.output.clone(), q.report())
        }
        On::Both => {
            let SimRun { rc, report: sim_report, data, writers, .. } = sim_run()?;
            let paged = page(&sim_report, &writers)?;
            let q = run_qemu(&o.dir, &schema, op, &placed, &spec, cores, o.timeout, profile, &mut profiled)?;
            let report = format!("{sim_report}{}", q.report());
            let report = if rc != 0 { format!("{report}{}{paged}", kept(&data)) } else { report };
            // Checks only the simulator can make (which elements were
            // written, by which core): a failure there with a passing
            // device is the simulator's finding, not a disagreement.
            if q.code() == 0 && sim_only_verdict(rc) {
                return Err(failed("on the simulator; the emulated cluster cannot check this", rc, &api.error_message(rc), &report));
            }
            // A finding of the emulated cores' check explains the
            // disagreement it causes (garbage read from memory nothing
            // wrote, say): the finding is the verdict.
            if q.check.is_some() && rc != q.code() {
                return Err(failed("on the emulated cluster (its check explains how the two runs differ)", q.code(), &api.error_message(q.code()), &report));
            }
            if rc != q.code() {
                return Err(Error::new(
                    ErrorKind::Mismatch,
                    format!(
                        "op `{}` on {cores} core(s): the simulator's run status is {rc} ({}), the emulated device's {} ({})\n{report}",
                        op.name,
                        api.error_message(rc),
                        q.code(),
                        api.error_message(q.code())
                    ),
                ));
            }
            if rc != 0 {
                return Err(failed("on both the simulator and the emulated cluster", rc, &api.error_message(rc), &report));
            }
            agreement = crate::differential::compare(dtype, shape, &data, &q.output, o.tolerance)
                .map_err(|diff| Error::new(ErrorKind::Mismatch, format!("op `{}` on {cores} core(s): {diff}", op.name)))?;
            (data, report)
        }
    };
    let shape = shape.clone();
    let output = Array { dtype, shape, data };
    let persisting = Instant::now();
    match (&o.out, temp) {
        (Some(out), Some(t)) => crate::atomic::persist_output(t, out)?,
        (Some(out), None) => npy::write(out, &output)?,
        _ => {}
    }
    // A passing run's output is the kernel's too: kept as well, so the
    // file never holds an earlier run's.
    if let Some(k) = &o.keep_output {
        match (&o.out, output.data.is_empty()) {
            (Some(out), true) => {
                let bytes = std::fs::read(out).map_err(|e| Error::io("read", out, e))?;
                crate::atomic::write(k, &bytes)?;
            }
            _ => npy::write(k, &output)?,
        }
    }
    let timings = timings.map(|mut t| {
        t.inputs = inputs_done;
        t.copy_out += persisting.elapsed();
        t.total = started.elapsed();
        t
    });
    Ok(RunOutcome { output, report, cores, agreement, timings, profile: profiled })
}

/// Refuses the debugging options where they cannot work: `--keep-output`
/// on the emulated cluster alone (it keeps the simulator's output) or at
/// the `-o` path; `--no-fork` with a time bound (nothing could stop the
/// run in this process).
fn check_debug_options(o: &RunOptions) -> Result<()> {
    let usage = |m: &str| Err(Error::new(ErrorKind::Usage, m.to_owned()));
    if let Some(k) = &o.keep_output {
        if o.on == On::Qemu {
            return usage("--keep-output keeps the simulator's output: use it with --on sim or --on both");
        }
        let same = |a: &Path, b: &Path| a == b || a.canonicalize().ok().is_some_and(|a| b.canonicalize().ok() == Some(a));
        if o.out.as_deref().is_some_and(|out| same(out, k)) {
            return usage(&format!("--keep-output {}: name a file other than the -o output (a failed run must not leave its output there)", k.display()));
        }
    }
    if o.html.is_some() && o.on == On::Qemu {
        return usage("--html draws the simulator's run (who wrote each output element): use it with --on sim or --on both");
    }
    if o.no_fork && o.timeout.is_some() {
        return usage("--no-fork runs the kernel in this process, which nothing can stop: drop --timeout");
    }
    Ok(())
}

/// The cores an op built with (or without) `multicore` runs on when
/// `requested` (None: the build's default, 8 if multicore, else 1);
/// `build` names the build; the message spells the option `option` (with
/// its separator: `"--cores "`, `"cores="`) and the multicore flag `flag`.
pub fn cores_for(requested: Option<u32>, multicore: bool, build: &str, option: &str, flag: &str) -> Result<u32> {
    let cores = requested.unwrap_or(if multicore { 8 } else { 1 });
    if cores != 1 && cores != 8 {
        return Err(Error::new(ErrorKind::Usage, format!("{option}{cores}: an op runs on 1 core or on all 8 GPSIMD cores")));
    }
    // The vendor's model: an op built without multicore runs on one core.
    // On eight, every core would compute and return the whole output (the
    // simulator reports that as overlapping cores); refuse it up front.
    if cores == 8 && !multicore {
        return Err(Error::new(
            ErrorKind::Usage,
            format!(
                "{option}8: `{build}` was built without {flag}: a single-core op runs on 1 core \
                 (rebuild with {flag} for a kernel that slices its work by get_cpu_id())"
            ),
        ));
    }
    Ok(cores)
}

/// A run status that comes from the simulator's own bookkeeping (the
/// output's coverage, per-core writes, the sanitizer, the stack and
/// multicore-accessor rules), which the device does not keep: there it is
/// a wrong result or a crash, not a status.
fn sim_only_verdict(rc: i32) -> bool {
    use neuroncustomop::runtime::Error;
    [
        Error::OutputNotCovered,
        Error::CoreWritesOverlap,
        Error::StackExceeded,
        Error::MulticoreAccessor,
        Error::InputWritten,
        Error::UninitialisedRead,
        Error::CrossCoreRead,
    ]
    .iter()
    .any(|e| e.code() == rc)
}
