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

/// A kernel run on the simulator: its status, report text, output bytes
/// (empty unless the status is 0, and when the output went to a file),
/// and where its time went.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimRun {
    /// The run status (0: it passed).
    pub rc: i32,
    /// The report.
    pub report: String,
    /// The output.
    pub data: Vec<u8>,
    /// The run's process's part of the timings.
    pub timings: Timings,
    /// Who wrote the output (`Files::writer_map`): its elements and the
    /// cells of `neuron_sim_writer_map`.
    pub writers: Option<(u64, Vec<u16>)>,
}

/// What `customop run` gives the simulator's run beyond `placed`: its
/// tensors mapped from their `.npy` files (their `Placed::Tensor` data
/// is then empty), and the file the output's `.npy` goes to, straight
/// from the simulated HBM (a temporary the caller renames into place).
#[derive(Default)]
pub struct Files {
    /// Per argument, the mapped file of a tensor given as one.
    pub inputs: Vec<Option<npy::Mapped>>,
    /// The output's file.
    pub output: Option<PathBuf>,
    /// A failed run's output is read back as the kernel left it (into
    /// [`SimRun::data`]) rather than dropped.
    pub keep_failed: bool,
    /// The run keeps who wrote the output ([`SimRun::writers`]), for
    /// `--html`.
    pub writer_map: bool,
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
    /// `--on both`: elements that are NaN on both sides with other bits
    /// (sign or payload), which agree (0 otherwise).
    pub nans_differing: usize,
    /// Where the time went (a run on the simulator alone).
    pub timings: Option<Timings>,
    /// `--profile`: the profile's report (its files are in the directory).
    pub profile: Option<String>,
}

/// One argument, ready to place.
/// One argument of a run, ready to place in the simulated HBM (also the
/// Python package's, which makes them from arrays and numbers).
pub enum Placed {
    /// A tensor.
    Tensor(Array),
    /// A one-element value: its kind, its marshalled dtype and bytes, and
    /// what the shape function sees.
    Value { kind: ArgKind, dtype: Dtype, bytes: Vec<u8>, value: Value },
}

/// What the shape function is given for `placed`.
pub fn shape_values(placed: &[Placed]) -> Vec<Value> {
    placed
        .iter()
        .map(|p| match p {
            Placed::Tensor(a) => Value::Tensor(a.dtype, a.shape.clone()),
            Placed::Value { value, .. } => value.clone(),
        })
        .collect()
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

/// Why `text` is not an integer argument of range `[lo, hi]`: an integer
/// outside it, or not an integer at all.
fn not_in(what: &str, kind: &str, text: &str, lo: i128, hi: i128) -> String {
    match integer_text(text) {
        true => format!("{what} is {kind}: `{text}` is outside its range [{lo}, {hi}]"),
        false => format!("{what} is {kind}: `{text}` is not an integer"),
    }
}

/// The f32 a floating value travels as (no dtype wider than f32
/// marshals), refused where that would change it beyond rounding: a
/// finite value that overflows to infinity, a non-zero one that underflows
/// to 0, and for a `Scalar` one whose integer view (`.to<int64_t>()`, what
/// the shape function sees as its int) would saturate. One rule for
/// `customop run` and the Python ops.
pub fn marshal_float(what: &str, kind: ArgKind, v: f64) -> Result<f32> {
    let f = v as f32;
    if v.is_finite() && f.is_infinite() {
        return Err(bad(format!("{what}: {v:e} overflows float32 (largest finite: {:e}); it would arrive as infinity", f32::MAX)));
    }
    if v != 0.0 && f == 0.0 {
        return Err(bad(format!("{what}: {v:e} underflows float32 (smallest non-zero: {:e}); it would arrive as 0", f32::from_bits(1))));
    }
    // 2^63: the first value past int64's range.
    if kind == ArgKind::Scalar && v.is_finite() && v.abs() >= 9_223_372_036_854_775_808.0 {
        return Err(bad(format!("{what}: {v:e} is outside the 64-bit integer range a Scalar's integer value has (|v| < 2^63)")));
    }
    Ok(f)
}

/// Whether `text` is written as an integer (sign and digits).
fn integer_text(text: &str) -> bool {
    let t = text.strip_prefix(['-', '+']).unwrap_or(text);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

/// Parses argument `i` (1-based in messages) of `op` for its declared kind;
/// a tensor is read whole, or with `mapped` only mapped (its data is
/// there, the `Placed` has none).
fn parse_arg(op: &Op, i: usize, text: &str, mapped: Option<&mut Option<npy::Mapped>>) -> Result<Placed> {
    let p = &op.params[i];
    let what = format!("argument {} of op `{}` ({})", i + 1, op.name, p.cpp_type);
    let int = || text.parse::<i64>().ok();
    let float = || text.parse::<f64>().ok().filter(|_| !text.is_empty());
    Ok(match p.kind {
        ArgKind::Tensor => {
            if float().is_some() {
                return Err(bad(format!("{what} is a tensor: give a .npy file, not the number {text}")));
            }
            match mapped {
                Some(m) => {
                    let f = npy::map(Path::new(text))?;
                    let a = Array { dtype: f.layout.dtype, shape: f.layout.shape.clone(), data: Vec::new() };
                    *m = Some(f);
                    Placed::Tensor(a)
                }
                None => Placed::Tensor(npy::read(Path::new(text))?),
            }
        }
        ArgKind::Scalar => match (int(), float()) {
            (Some(v), _) => Placed::Value { kind: p.kind, dtype: Dtype::Int64, bytes: v.to_le_bytes().to_vec(), value: Value::Int(v) },
            (None, _) if integer_text(text) => return Err(bad(not_in(&what, "a Scalar", text, i64::MIN.into(), i64::MAX.into()))),
            (None, Some(v)) => {
                let f = marshal_float(&what, p.kind, v)?;
                Placed::Value { kind: p.kind, dtype: Dtype::Fp32, bytes: f.to_le_bytes().to_vec(), value: Value::Float(v) }
            }
            _ => return Err(bad(format!("{what} is a scalar: give a number, not `{text}`"))),
        },
        ArgKind::Int => {
            let v = int().and_then(|v| i32::try_from(v).ok()).ok_or_else(|| bad(not_in(&what, "an int", text, i32::MIN.into(), i32::MAX.into())))?;
            Placed::Value { kind: p.kind, dtype: Dtype::Int32, bytes: v.to_le_bytes().to_vec(), value: Value::Int(v.into()) }
        }
        ArgKind::LongLong => {
            let v = int().ok_or_else(|| bad(not_in(&what, "a 64-bit integer", text, i64::MIN.into(), i64::MAX.into())))?;
            Placed::Value { kind: p.kind, dtype: Dtype::Int64, bytes: v.to_le_bytes().to_vec(), value: Value::Int(v) }
        }
        // No dtype wider than f32 marshals: a double travels as f32.
        ArgKind::Float | ArgKind::Double => {
            let v = float().ok_or_else(|| bad(format!("{what} is a floating-point number: `{text}` is not a number")))?;
            let f = marshal_float(&what, p.kind, v)?;
            Placed::Value { kind: p.kind, dtype: Dtype::Fp32, bytes: f.to_le_bytes().to_vec(), value: Value::Float(v) }
        }
    })
}

/// Loads the build directory's library and its simulator API (under the
/// directory's read lock: the schema and the library of one build).
pub fn load(dir: &Path) -> Result<(Schema, SimApi)> {
    let _hold = crate::workdir::read_lock(dir);
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
    let mut nans_differing = 0;
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
            nans_differing = crate::differential::compare(dtype, shape, &data, &q.output)
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
    Ok(RunOutcome { output, report, cores, nans_differing, timings, profile: profiled })
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

/// Runs the op on a fresh simulator: the run status, the report, the
/// output (empty unless the status is 0, and when it went to
/// `files.output`), the timings. `labels` describe the arguments in
/// messages (the text they were given as); a tensor with a mapped file in
/// `files.inputs` is copied from there.
pub fn run_sim(api: SimApi, op: &Op, labels: &[String], placed: &[Placed], files: &Files, spec: &OutputSpec, cores: u32) -> Result<SimRun> {
    let OutputSpec { dtype, shape } = spec;
    let mut t = Timings::default();
    let clock = Instant::now();
    let mut sim = Sim::new(api)?;
    t.setup = clock.elapsed();
    let clock = Instant::now();
    for (i, p) in placed.iter().enumerate() {
        let what = format!("argument {} of op `{}` ({})", i + 1, op.name, labels[i]);
        match p {
            Placed::Tensor(a) => {
                let mapped = files.inputs.get(i).and_then(Option::as_ref);
                sim.arg_tensor(a.dtype.code(), &a.shape, mapped.map_or(&a.data[..], npy::Mapped::data), &what)?;
                if let Some(m) = mapped {
                    m.release();
                }
            }
            Placed::Value { kind, dtype, bytes, .. } => sim.arg_value(kind.code(), dtype.code(), bytes, &what)?,
        }
    }
    sim.set_output(dtype.code(), shape)?;
    // The output file, its header written: the simulator writes the data
    // into it as the kernels end, while the verdict runs.
    let sunk = match &files.output {
        Some(path) => output_sink(&mut sim, *dtype, shape, path)?,
        None => None,
    };
    t.copy_in = clock.elapsed();
    let mapped = files.writer_map && sim.keep_writer_map();
    let (rc, report) = sim.run(&op.name, cores);
    let writers = if mapped { sim.writer_map() } else { None };
    if let Some((verdict, kernel)) = sim.timings().split_first() {
        t.verdict = Duration::from_nanos(*verdict);
        t.kernel = kernel.iter().map(|&n| Duration::from_nanos(n)).collect();
    }
    let numel: u64 = shape.iter().product();
    let bytes = numel * u64::from(dtype.elem_size());
    if rc != 0 {
        // The output as the kernel left it, when asked (none if the
        // library cannot say).
        let data = if files.keep_failed { sim.inspect_output(bytes as usize).unwrap_or_default() } else { Vec::new() };
        return Ok(SimRun { rc, report, data, timings: t, writers });
    }
    let clock = Instant::now();
    let data = match &files.output {
        Some(path) => {
            let f = match sunk {
                Some(f) => {
                    sim.output_sink_result().map_err(|e| Error::io("write", path, e))?;
                    f
                }
                None => write_output(&mut sim, *dtype, shape, bytes, path)?,
            };
            // The flush to the disk and the simulator's teardown (its
            // memory unmapped and given back: ~20 ms for a 64 MiB run,
            // which the caller would otherwise wait for as this process
            // ends) run at the same time.
            let syncing = std::thread::Builder::new().name("flush".into()).spawn(move || f.sync_data());
            drop(sim);
            let synced = match syncing {
                Ok(h) => h.join().unwrap_or_else(|_| Err(std::io::Error::other("the flushing thread panicked"))),
                Err(e) => Err(e),
            };
            synced.map_err(|e| Error::io("write", path, e))?;
            Vec::new()
        }
        None => sim.read_output(bytes as usize)?,
    };
    t.copy_out = clock.elapsed();
    Ok(SimRun { rc: 0, report, data, timings: t, writers })
}

/// Opens `path` (the caller's temporary), writes the `.npy` header and
/// makes it the simulator's output sink: the file, or None when the
/// library predates sinks (the output is then copied out after the run).
fn output_sink(sim: &mut Sim, dtype: Dtype, shape: &[u64], path: &Path) -> Result<Option<std::fs::File>> {
    use std::io::Write;
    if sim.api().output_sink.is_none() {
        return Ok(None);
    }
    let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(path).map_err(|e| Error::io("write", path, e))?;
    let header = npy::header(path, dtype, shape)?;
    f.write_all(&header).map_err(|e| Error::io("write", path, e))?;
    Ok(sim.set_output_sink(&f, header.len() as u64)?.then_some(f))
}

/// Writes the output's `.npy` to `path` (the caller's temporary, which
/// it renames into place): the header, then the data straight from the
/// simulated HBM; the caller flushes the file it returns to the disk (as
/// `atomic::write` does) before the rename. The disk writes start as the
/// pieces arrive ([`EarlyWriteback`]), so the flush waits for the last
/// pieces, not the whole file.
fn write_output(sim: &mut Sim, dtype: Dtype, shape: &[u64], bytes: u64, path: &Path) -> Result<std::fs::File> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(path).map_err(|e| Error::io("write", path, e))?;
    let header = npy::header(path, dtype, shape)?;
    f.write_all(&header).map_err(|e| Error::io("write", path, e))?;
    let mut w = EarlyWriteback { f: &f, at: header.len() as u64, started: 0 };
    sim.write_output(bytes, &mut w, path)?;
    Ok(f)
}

/// A file written front to back whose disk writes are started (not
/// waited for) every [`EarlyWriteback::STEP`] bytes: the disk works while
/// the rest is copied. Durability is unchanged: the caller still flushes
/// the file (`sync_data`) before it is renamed into place.
struct EarlyWriteback<'a> {
    f: &'a std::fs::File,
    /// The file's length so far (this writer appends).
    at: u64,
    /// The bytes `[0, started)` have had their writeback started.
    started: u64,
}

impl EarlyWriteback<'_> {
    const STEP: u64 = 8 << 20;
}

impl std::io::Write for EarlyWriteback<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        let n = (&mut &*self.f).write(buf)?;
        self.at += n as u64;
        if self.at - self.started >= Self::STEP {
            let (from, len) = (self.started as libc::off64_t, (self.at - self.started) as libc::off64_t);
            // SAFETY: sync_file_range on a descriptor this writer borrows
            // open; it only starts writeback of the range (no pointer).
            // Best effort: a failure shows again in the final sync_data.
            let _ = unsafe { libc::sync_file_range(self.f.as_raw_fd(), from, len, libc::SYNC_FILE_RANGE_WRITE) };
            self.started = self.at;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        (&mut &*self.f).flush()
    }
}

/// Runs the op on the emulated cluster (the build's image).
#[allow(clippy::too_many_arguments)] // one private call site pair; a struct would only rename them
fn run_qemu(
    dir: &Path,
    schema: &Schema,
    op: &Op,
    placed: &[Placed],
    spec: &OutputSpec,
    cores: u32,
    timeout: Option<Duration>,
    profile: Option<&Path>,
    profiled: &mut Option<String>,
) -> Result<crate::qemu_run::QemuRun> {
    let args: Vec<crate::qemu_blob::Arg> = placed
        .iter()
        .map(|p| match p {
            Placed::Tensor(a) => crate::qemu_blob::Arg { kind: ArgKind::Tensor.code(), dtype: a.dtype.code(), shape: &a.shape, data: &a.data },
            Placed::Value { kind, dtype, bytes, .. } => crate::qemu_blob::Arg { kind: kind.code(), dtype: dtype.code(), shape: &[1], data: bytes },
        })
        .collect();
    let blob = crate::qemu_blob::build(&op.name, &args, spec.dtype.code(), &spec.shape, usize::from(spec.dtype.elem_size()))?;
    let image = dir.join(&schema.images[0]);
    // One file per run, also for concurrent runs in one process.
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = dir.join(format!("invocation-{}-{n}.bin", std::process::id()));
    let work = dir.join(crate::workdir::WORK_DIR);
    let session = profile.map(|_| crate::profile::start(&work, &image)).transpose()?;
    // The check rides on the profile's plugin (one instrument); a plugin
    // the environment asks for (`cargo xtask perf`'s counts) runs alone.
    let check = (crate::device_check::enabled() && std::env::var_os(crate::qemu_run::PLUGIN_ENV).is_none())
        .then(|| crate::device_check::start(&work, &blob))
        .transpose()?;
    let plugin = match (&session, &check) {
        (Some(s), Some(c)) => Some(format!("{},{}", s.plugin_arg, c.args)),
        (Some(s), None) => Some(s.plugin_arg.clone()),
        // Without a C compiler to build the plugin the run goes on
        // unchecked, as before the check existed, and says so.
        (None, Some(c)) => match crate::profile::plugin::built(&work) {
            Ok(so) => Some(format!("{},{}", so.display(), c.args)),
            Err(e) => {
                eprintln!("customop: warning: the emulated cores' check is off for this run: {}", e.message);
                None
            }
        },
        (None, None) => None,
    };
    let findings = check.as_ref().filter(|_| plugin.is_some()).map(|c| (c.findings.as_ref(), op.name.as_str()));
    let r = crate::qemu_run::run(&image, &blob, &file, cores, timeout.map(|t| (t, "--timeout")), plugin.as_deref(), findings);
    let _ = std::fs::remove_file(&file);
    let r = r?;
    if let (Some(s), Some(out)) = (session, profile) {
        if r.code() == 0 {
            *profiled = Some(crate::profile::finish(s, &image, cores, out)?);
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Param;

    fn op(kind: ArgKind, cpp: &str) -> Op {
        Op { name: "k".into(), compute_fn: "k".into(), shape_fn: "s".into(), params: vec![Param { kind, cpp_type: cpp.into() }], declared_at: "s.cpp:1".into() }
    }

    fn refused(kind: ArgKind, cpp: &str, text: &str) -> String {
        match parse_arg(&op(kind, cpp), 0, text, None) {
            Ok(_) => panic!("{text} accepted for {cpp}"),
            Err(e) => {
                assert_eq!(e.kind, ErrorKind::BadInput);
                e.message
            }
        }
    }

    #[test]
    fn values_out_of_range_for_their_kind_are_refused() {
        let m = refused(ArgKind::Scalar, "const torch::Scalar&", "9223372036854775808");
        assert!(m.contains("`9223372036854775808` is outside its range [-9223372036854775808, 9223372036854775807]"), "{m}");
        assert!(refused(ArgKind::Scalar, "const torch::Scalar&", "1e20").contains("outside the 64-bit integer range a Scalar's integer value has"));
        assert!(refused(ArgKind::LongLong, "int64_t", "-9223372036854775809").contains("outside its range"));
        assert!(refused(ArgKind::LongLong, "int64_t", "99999999999999999999999999999999999999999").contains("outside its range"));
        assert!(refused(ArgKind::Float, "float", "1e39").contains("1e39 overflows float32"));
        assert!(refused(ArgKind::Double, "double", "1e39").contains("overflows float32"));
        assert!(refused(ArgKind::Float, "float", "1e-50").contains("1e-50 underflows float32"));
        assert!(refused(ArgKind::Scalar, "const torch::Scalar&", "-1e-50").contains("underflows"));
        // The edges that do fit, and values given as infinity on purpose.
        for (kind, text) in [
            (ArgKind::Scalar, "9223372036854775807"),
            (ArgKind::Scalar, "1e18"),
            (ArgKind::Float, "3.4e38"),
            (ArgKind::Float, "1e-45"),
            (ArgKind::Double, "inf"),
            (ArgKind::Float, "0.0"),
        ] {
            assert!(parse_arg(&op(kind, "x"), 0, text, None).is_ok(), "{text}");
        }
    }
}
