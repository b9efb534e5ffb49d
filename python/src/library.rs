//! `load()` and what it returns: a `Library` with one callable `Op` per
//! op of the built library.

use crate::errors::{self, bad_input, usage};
use crate::invoke::{self, Placed};
use crate::report::{self, Report};
use crate::staticlib_path;
use customop::build::{build, BuildOptions};
use customop::compiler::{split_flags, Outcome};
use customop::contained::Bounds;
use customop::progress::{self, Level};
use customop::run::On;
use customop::shape::{OutputSpec, Value};
use customop::shape_cache::ShapeCache;
use customop::sim::SimApi;
use customop::worker::{Call, Finished, Pool};
use customop::{ArgKind, Error, ErrorKind, Op as OpSchema, Schema, Target};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString, PyTuple};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the build did, for `Library.build_log` (the cache's evidence).
#[pyclass(module = "neuroncustomop", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct BuildLog {
    /// The sources compiled by this load.
    pub compiled: Vec<String>,
    /// The sources whose objects were current (not recompiled).
    pub cached: Vec<String>,
    /// Whether the shared object was linked (false: it was current).
    pub linked: bool,
    /// What compiles and links that passed printed (warnings), each as
    /// `"compiling relu.cpp:\n<the compiler's output>"`.
    pub warnings: Vec<String>,
}

#[pymethods]
impl BuildLog {
    fn __repr__(&self) -> String {
        format!("BuildLog(compiled={:?}, cached={:?}, linked={})", self.compiled, self.cached, if self.linked { "True" } else { "False" })
    }
}

/// A built library: `lib.<op>(...)` calls an op.
#[pyclass(module = "neuroncustomop", frozen)]
pub struct Library {
    schema: Schema,
    api: SimApi,
    /// The run process its ops' calls share (forked at the first call).
    pool: Arc<Pool>,
    dir: PathBuf,
    log: BuildLog,
    /// `load(timeout=)`: every op's default time bound.
    timeout: Option<Duration>,
    /// The shape functions' answers for fake tensors (`Op::output_spec`).
    shapes: Arc<Mutex<ShapeCache>>,
    /// `load(on=)`: where its ops run.
    on: On,
    /// `load(isolate=)`: false runs each call in this process.
    isolate: bool,
}

impl Library {
    fn new(schema: Schema, api: SimApi, dir: PathBuf, log: BuildLog, timeout: Option<Duration>, on: On, isolate: bool) -> Self {
        let pool = Arc::new(Pool::new(api, schema.ops.clone()));
        Self { schema, api, pool, dir, log, timeout, shapes: Arc::default(), on, isolate }
    }

    fn op(&self, op: &OpSchema) -> Op {
        let index = self.schema.ops.iter().position(|o| o.name == op.name).unwrap_or(0);
        Op {
            op: op.clone(),
            api: self.api,
            multicore: self.schema.multicore,
            timeout: self.timeout,
            pool: Arc::clone(&self.pool),
            index,
            shapes: Arc::clone(&self.shapes),
            on: self.on,
            isolate: self.isolate,
            dir: self.dir.clone(),
        }
    }
}

#[pymethods]
impl Library {
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Op> {
        match self.schema.op(name) {
            Ok(op) => Ok(self.op(op)),
            // Dunder probes (copy, pickle) get a plain AttributeError; any
            // other name the error listing the ops, which is an
            // AttributeError too (`hasattr`, notebooks' `_repr_html_`).
            Err(e) if name.starts_with("__") => Err(pyo3::exceptions::PyAttributeError::new_err(e.message)),
            Err(e) => Err(errors::unknown_op(py, &e)),
        }
    }

    /// `lib["op"]`: any op, whatever its name (attribute access cannot
    /// reach an op named `name`, `ops` or another attribute of the library).
    fn __getitem__(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Op> {
        let Ok(name) = name.extract::<String>() else {
            let got = name.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            return Err(errors::to_py(py, &usage(format!("lib[...]: give an op name (a str), not {got}"))));
        };
        self.schema.op(&name).map(|op| self.op(op)).map_err(|e| errors::to_py(py, &e))
    }

    fn __contains__(&self, name: &Bound<'_, PyAny>) -> bool {
        name.extract::<String>().is_ok_and(|n| self.schema.ops.iter().any(|o| o.name == n))
    }

    fn __dir__(&self) -> Vec<String> {
        self.schema.ops.iter().map(|o| o.name.clone()).collect()
    }

    fn __repr__(&self) -> String {
        format!("<neuroncustomop.Library {} ops={:?} at {}>", self.schema.name, self.__dir__(), self.dir.display())
    }

    /// The op names, in table order.
    #[getter]
    fn ops(&self) -> Vec<String> {
        self.__dir__()
    }

    /// The library's name.
    #[getter]
    fn name(&self) -> &str {
        &self.schema.name
    }

    /// The `NEURON_LIBRARY` names of the shape sources (`torch.ops.<name>`).
    #[getter]
    fn libraries(&self) -> Vec<String> {
        self.schema.libraries.clone()
    }

    /// Where the ops run: `"sim"`, `"qemu"` or `"both"` (`load(on=)`).
    #[getter]
    fn on(&self) -> &'static str {
        on_name(self.on)
    }

    /// Built with `multicore=True` (ops then default to 8 cores).
    #[getter]
    fn multicore(&self) -> bool {
        self.schema.multicore
    }

    /// The build directory.
    #[getter]
    fn build_directory(&self) -> PathBuf {
        self.dir.clone()
    }

    /// The built shared object.
    #[getter]
    fn library_file(&self) -> PathBuf {
        self.dir.join(&self.schema.library_file)
    }

    /// What this load's build compiled and found cached.
    #[getter]
    fn build_log(&self) -> BuildLog {
        self.log.clone()
    }
}

/// One op: call it with its arguments in the compute function's order.
#[pyclass(module = "neuroncustomop", frozen)]
pub struct Op {
    pub(crate) op: OpSchema,
    pub(crate) api: SimApi,
    pub(crate) multicore: bool,
    /// The time bound of a call without `timeout=` (the library's).
    timeout: Option<Duration>,
    /// The library's run process, and this op's index in its table.
    pub(crate) pool: Arc<Pool>,
    index: usize,
    /// The library's shape answers for fake tensors.
    shapes: Arc<Mutex<ShapeCache>>,
    /// Where it runs (`load(on=)`), and the build directory (an emulated
    /// run reads the image there).
    pub(crate) on: On,
    /// False (`load(isolate=False)`): calls run the kernel in this
    /// process, where a debugger attached to Python stops in it.
    pub(crate) isolate: bool,
    dir: PathBuf,
}

impl Op {
    /// Whether a call goes through `customop run`'s own function (the
    /// emulated cluster, or the simulator in this process) rather than
    /// the library's worker or a contained child.
    pub(crate) fn through_run(&self) -> bool {
        self.on != On::Sim || !self.isolate
    }
}

/// An emulated run's report in the simulator's form, which `Report`
/// reads: with `on="both"`, the simulator's report (the emulated cores
/// agreed with it, or the run failed); with `"qemu"`, each emulated
/// core's status as a core line (their printf lines are dropped).
fn report_of_emulated(text: &str, cores: u32) -> String {
    let (sim, emulated): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| !l.starts_with("qemu core ") && !l.starts_with("  printf: "));
    if sim.first().is_some_and(|l| l.starts_with("run")) {
        return sim.iter().map(|l| format!("{l}\n")).collect();
    }
    let mut out = format!("run: {cores} core(s), ok\n");
    for l in emulated.iter().filter_map(|l| l.strip_prefix("qemu core ")) {
        out.push_str(&format!("core {}\n", l.replacen(": returned ", ": launcher returned ", 1)));
    }
    out
}

fn on_name(on: On) -> &'static str {
    match on {
        On::Sim => "sim",
        On::Qemu => "qemu",
        On::Both => "both",
    }
}

/// Why a call of a library loaded with `isolate=False` takes no time bound.
const NO_TIMEOUT_IN_PROCESS: &str =
    "timeout=: a library loaded with isolate=False runs its kernels in this process, which nothing can stop; drop timeout=, or load with isolate=True (the default)";

/// An `isolate=` value (default True). False runs each call's shape
/// function and kernel in this process, for a debugger: only on the
/// simulator, and with no time bound.
fn isolate_of(obj: Option<&Bound<'_, PyAny>>, on: On, timeout: Option<Duration>) -> customop::Result<bool> {
    let Some(o) = obj.filter(|o| !o.is_none()) else { return Ok(true) };
    if !o.is_instance_of::<PyBool>() {
        return Err(usage(format!("isolate={}: give True or False", o.repr().map(|r| r.to_string()).unwrap_or_default())));
    }
    let isolate = o.is_truthy().unwrap_or(true);
    if !isolate && on != On::Sim {
        return Err(usage(format!(
            "isolate=False runs the simulator in this process; on=\"{}\" runs the emulated cores in QEMU, which is always a process of its own: use on=\"sim\"",
            on_name(on)
        )));
    }
    if !isolate && timeout.is_some() {
        return Err(usage(NO_TIMEOUT_IN_PROCESS));
    }
    Ok(isolate)
}

/// An `on=` value: `"sim"`, `"qemu"` or `"both"`.
fn on_of(obj: Option<&Bound<'_, PyAny>>) -> customop::Result<On> {
    let Some(o) = obj.filter(|o| !o.is_none()) else { return Ok(On::Sim) };
    let bad = || usage(format!("on={}: give \"sim\", \"qemu\" or \"both\"", o.repr().map(|r| r.to_string()).unwrap_or_default()));
    let s: String = o.extract().map_err(|_| bad())?;
    On::parse(&s).map_err(|_| bad())
}

/// A `timeout=` value: None (no bound) or a number of seconds above 0.
fn timeout_of(obj: &Bound<'_, PyAny>) -> customop::Result<Option<Duration>> {
    if obj.is_none() {
        return Ok(None);
    }
    let bad = || usage(format!("timeout={}: give a number of seconds above 0, or None", obj.repr().map(|r| r.to_string()).unwrap_or_default()));
    if obj.is_instance_of::<PyBool>() {
        return Err(bad());
    }
    let s: f64 = obj.extract().map_err(|_| bad())?;
    customop::contained::parse_timeout(&s.to_string(), "timeout=").map(Some).map_err(|_| bad())
}

pub(crate) fn cores_of(obj: Option<&Bound<'_, PyAny>>, multicore: bool, name: &str) -> customop::Result<u32> {
    let requested = match obj.filter(|o| !o.is_none()) {
        None => None,
        Some(o) => match o.extract::<u32>() {
            Ok(c) if !o.is_instance_of::<PyBool>() => Some(c),
            _ => return Err(usage(format!("cores={}: an op runs on 1 core or on all 8 GPSIMD cores", o.repr().map(|r| r.to_string()).unwrap_or_default()))),
        },
    };
    customop::run::cores_for(requested, multicore, name, "cores=", "multicore=True")
}

/// `cores=`, `report=` and `timeout=` of an op call (`timeout`: the
/// library's default).
/// An op call's keywords.
struct CallKw {
    cores: u32,
    report: bool,
    timeout: Option<Duration>,
    /// `profile=DIR`: profile the emulated run into DIR.
    profile: Option<PathBuf>,
}

fn keywords(kwargs: Option<&Bound<'_, PyDict>>, multicore: bool, op: &str, mut timeout: Option<Duration>) -> customop::Result<CallKw> {
    let (mut cores, mut report, mut profile) = (None, false, None);
    for (k, v) in kwargs.into_iter().flat_map(|d| d.iter()) {
        match k.extract::<String>().unwrap_or_default().as_str() {
            "cores" => cores = Some(v),
            "report" if v.is_instance_of::<PyBool>() => report = v.is_truthy().unwrap_or(false),
            "report" => return Err(usage("report=: give True or False")),
            "timeout" => timeout = timeout_of(&v)?,
            "profile" if v.is_none() => profile = None,
            "profile" => profile = Some(v.extract::<PathBuf>().map_err(|_| usage("profile=: give a directory (a str or a path)"))?),
            other => return Err(usage(format!("unexpected keyword `{other}` (an op takes cores=, report=, timeout= and profile=)"))),
        }
    }
    Ok(CallKw { cores: cores_of(cores.as_ref(), multicore, op)?, report, timeout, profile })
}

/// The Python error of a failed run, its report attached.
fn failed_to_py(py: Python<'_>, f: invoke::Failed) -> PyErr {
    let mut extra = match f.report.as_deref().map(report::parse) {
        Some(Ok(r)) => match Py::new(py, r) {
            Ok(r) => vec![("report", r.into_any())],
            Err(e) => return e,
        },
        _ => vec![],
    };
    if let Some(a) = f.output {
        match crate::arrays::to_python(py, a) {
            Ok(o) => extra.push(("output", o.unbind())),
            Err(e) => return e,
        }
    }
    errors::to_py_with(py, &f.error, &extra)
}

impl Op {
    /// The output's spec from the shape function alone, as a fake tensor
    /// needs it: answered from the library's cache, else evaluated in a
    /// child process (a crash or a hang there is the eager call's error,
    /// within the library's `timeout=`; the interpreter lives on), with
    /// the GIL released and Ctrl-C watched as `run_contained` does.
    pub(crate) fn output_spec(&self, py: Python<'_>, values: &[Value]) -> PyResult<OutputSpec> {
        let lock = || self.shapes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(spec) = lock().get(self.index, values) {
            return Ok(spec);
        }
        let mut stop: Option<PyErr> = None;
        let spec = py.detach(|| {
            let mut interrupted = || match Python::attach(|py| py.check_signals()) {
                Ok(()) => false,
                Err(e) => {
                    stop = Some(e);
                    true
                }
            };
            let bounds = Bounds { timeout: self.timeout, option: "timeout=", interrupted: &mut interrupted };
            customop::contained::shape_only(self.api, &self.op, values, bounds)
        });
        if let Some(e) = stop {
            return Err(e);
        }
        py.check_signals()?;
        let spec = spec.map_err(|e| errors::to_py(py, &e))?;
        lock().insert(self.index, values, spec.clone());
        Ok(spec)
    }

    /// Runs the op on the emulated cluster (`on="qemu"`) or on it and the
    /// simulator (`"both"`), or on the simulator in this process
    /// (`isolate=False`): through `customop run`'s own function, the
    /// tensors handed over as `.npy` files in a private directory. Returns
    /// the output and the report's text.
    pub(crate) fn run_emulated(
        &self,
        py: Python<'_>,
        placed: &[Placed],
        cores: u32,
        timeout: Option<Duration>,
        profile: Option<&std::path::Path>,
    ) -> PyResult<(customop::npy::Array, String, Option<String>)> {
        static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = std::env::temp_dir().join(format!("neuroncustomop-{}-{n}", std::process::id()));
        let (op, dir, on, timeout) = (&self.op, &self.dir, self.on, timeout.or(self.timeout));
        let ran = py.detach(|| {
            std::fs::create_dir_all(&tmp).map_err(|e| Error::io("create", &tmp, e))?;
            let mut args = Vec::with_capacity(placed.len());
            for (i, p) in placed.iter().enumerate() {
                args.push(match p {
                    Placed::Tensor(a) => {
                        let f = tmp.join(format!("arg{i}.npy"));
                        customop::npy::write(&f, a)?;
                        f.display().to_string()
                    }
                    Placed::Value { value: customop::shape::Value::Int(v), .. } => v.to_string(),
                    Placed::Value { value: customop::shape::Value::Float(v), .. } => format!("{v:?}"),
                    Placed::Value { .. } => return Err(bad_input(format!("argument {} of op `{}`: not a number", i + 1, op.name))),
                });
            }
            let o = customop::run::RunOptions {
                dir: dir.clone(),
                op: op.name.clone(),
                args,
                out: None,
                cores: Some(cores),
                on,
                timeout,
                keep_output: None,
                no_fork: !self.isolate,
                html: None,
            };
            customop::run::run_profiled(&o, profile)
        });
        let _ = std::fs::remove_dir_all(&tmp);
        py.check_signals()?;
        let r = ran.map_err(|e| errors::to_py(py, &e))?;
        Ok((r.output, report_of_emulated(&r.report, cores), r.profile))
    }

    /// Runs a call staged in the library's worker (`invoke::finish`),
    /// with the GIL released and Ctrl-C watched as `run_contained` does.
    pub(crate) fn finish_in_worker<'a>(
        &self,
        py: Python<'_>,
        call: Call<'a>,
        labels: &[String],
        cores: u32,
        timeout: Option<Duration>,
    ) -> PyResult<Finished<'a>> {
        let (api, op, index, timeout) = (self.api, &self.op, self.index, timeout.or(self.timeout));
        let mut stop: Option<PyErr> = None;
        let done = py.detach(|| {
            let mut interrupted = || match Python::attach(|py| py.check_signals()) {
                Ok(()) => false,
                Err(e) => {
                    stop = Some(e);
                    true
                }
            };
            invoke::finish(api, call, index, op, labels, cores, timeout, &mut interrupted)
        });
        if let Some(e) = stop {
            return Err(e);
        }
        py.check_signals()?;
        done.map_err(|f| failed_to_py(py, f))
    }

    /// Runs the op on `placed` in a child process (`invoke::run`): nothing
    /// in it touches Python, so other Python threads run meanwhile. Every
    /// tick the wait takes the GIL to run Python's signal handlers: Ctrl-C
    /// raises KeyboardInterrupt here, and the child is killed. A failed run
    /// is a `neuroncustomop.Error` with its report attached. `timeout`
    /// None is the library's.
    pub(crate) fn run_contained(&self, py: Python<'_>, placed: &[Placed], cores: u32, timeout: Option<Duration>, writer_map: bool) -> PyResult<invoke::Ran> {
        let (api, op, timeout) = (self.api, &self.op, timeout.or(self.timeout));
        let mut stop: Option<PyErr> = None;
        // The library's worker when it is free (another thread's call may
        // hold it: then a one-shot child, as before there was a worker).
        let pool = &self.pool;
        let ran = py.detach(|| {
            let mut interrupted = || match Python::attach(|py| py.check_signals()) {
                Ok(()) => false,
                Err(e) => {
                    stop = Some(e);
                    true
                }
            };
            match pool.try_call() {
                Some(call) => invoke::run_in_worker(api, call, self.index, op, placed, cores, timeout, writer_map, &mut interrupted),
                None => invoke::run(api, op, placed, cores, timeout, writer_map, &mut interrupted),
            }
        });
        if let Some(e) = stop {
            return Err(e);
        }
        // A Ctrl-C that ended the child before the wait saw it.
        py.check_signals()?;
        ran.map_err(|f| failed_to_py(py, f))
    }
}

#[pymethods]
impl Op {
    /// Runs the op: returns the output array, or `(output, report)` with
    /// `report=True`.
    // Keywords parsed here rather than by PyO3, so that a misspelt or
    // mistyped one is a neuroncustomop.Error like every other bad call.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>, kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyAny>> {
        let op = &self.op;
        let CallKw { cores, report, timeout, profile } = keywords(kwargs, self.multicore, &op.name, self.timeout).map_err(|e| errors::to_py(py, &e))?;
        if profile.is_some() && self.on == On::Sim {
            let e = usage("profile=: profiles the emulated device's run (its instructions and memory accesses, and a modeled device time): load the library with on=\"qemu\" or on=\"both\"");
            return Err(errors::to_py(py, &e));
        }
        if args.len() != op.params.len() {
            let kinds: Vec<&str> = op.params.iter().map(|p| p.cpp_type.as_str()).collect();
            let e = bad_input(format!("op `{}` takes {} argument(s) ({}), {} given", op.name, op.params.len(), kinds.join(", "), args.len()));
            return Err(errors::to_py(py, &e));
        }
        if !self.isolate && timeout.is_some() {
            return Err(errors::to_py(py, &usage(NO_TIMEOUT_IN_PROCESS)));
        }
        let through_run = self.through_run();
        let mut profiled: Option<String> = None;
        // report=True: the run keeps who wrote each output element, for the
        // report page's map (a copy of the output's states: only then).
        let mut writers: Option<(u64, Vec<u16>)> = None;
        let (out, report_text) = match self.pool.try_call().filter(|_| !through_run) {
            // The library's worker: arguments copied once into its memory,
            // the output once out of it.
            Some(mut call) => {
                if report {
                    call.keep_writer_map();
                }
                let mut labels = Vec::with_capacity(args.len());
                for (i, a) in args.iter().enumerate() {
                    labels.push(invoke::stage(&mut call, op, i, &a)?.map_err(|e| errors::to_py(py, &e))?);
                }
                let mut done = self.finish_in_worker(py, call, &labels, cores, timeout)?;
                let out = match done.take_early() {
                    // Copied out while the verdict ran: handed over as is.
                    Some(data) => crate::arrays::to_python(py, customop::npy::Array { dtype: done.spec.dtype, shape: done.spec.shape.clone(), data })?,
                    None => crate::arrays::copy_to_python(py, done.spec.dtype, &done.spec.shape.clone(), done.output())?,
                };
                writers = done.take_writers();
                (out, done.run.take().map(|r| r.1).unwrap_or_default())
            }
            // Another thread's call holds it (a one-shot child), or the
            // run is on the emulated cluster or in this process.
            None => {
                let mut placed: Vec<Placed> = Vec::with_capacity(args.len());
                for (i, a) in args.iter().enumerate() {
                    placed.push(invoke::place(op, i, &a)?.map_err(|e| errors::to_py(py, &e))?);
                }
                if through_run {
                    let (output, report, summary) = self.run_emulated(py, &placed, cores, timeout, profile.as_deref())?;
                    profiled = summary;
                    (crate::arrays::to_python(py, output)?, report)
                } else {
                    let ran = self.run_contained(py, &placed, cores, timeout, report)?;
                    writers = ran.writers;
                    (crate::arrays::to_python(py, ran.output)?, ran.report)
                }
            }
        };
        if !report {
            return Ok(out);
        }
        let mut rep: Report = report::parse(&report_text).map_err(|m| errors::to_py(py, &Error::new(ErrorKind::Environment, m)))?;
        if let Some(dir) = profile.filter(|_| profiled.is_some()) {
            rep.profile_dir = Some(dir.display().to_string());
            rep.profile_summary = profiled;
        }
        if let Some((elements, cells)) = writers {
            let shape = out.getattr("shape").and_then(|s| s.extract::<Vec<u64>>()).unwrap_or_default();
            rep.writer_map = Some(report::WriterMap { op: op.name.clone(), shape, elements, cells });
        }
        Ok(PyTuple::new(py, [out, Bound::new(py, rep)?.into_any()])?.into_any())
    }

    fn __repr__(&self) -> String {
        let kinds: Vec<&str> = self.op.params.iter().map(|p| p.cpp_type.as_str()).collect();
        format!("<neuroncustomop op {}({})>", self.op.name, kinds.join(", "))
    }

    /// The op's name.
    #[getter]
    fn name(&self) -> &str {
        &self.op.name
    }

    /// The compute function's parameter kinds, in order: `tensor`,
    /// `scalar`, `int`, `long_long`, `float`, `double`.
    #[getter]
    fn kinds(&self) -> Vec<&'static str> {
        self.op
            .params
            .iter()
            .map(|p| match p.kind {
                ArgKind::Tensor => "tensor",
                ArgKind::Scalar => "scalar",
                ArgKind::Int => "int",
                ArgKind::LongLong => "long_long",
                ArgKind::Float => "float",
                ArgKind::Double => "double",
            })
            .collect()
    }

    /// The compute function's parameter types, in order.
    #[getter]
    fn params(&self) -> Vec<String> {
        self.op.params.iter().map(|p| p.cpp_type.clone()).collect()
    }
}

/// Paths from a str, an `os.PathLike`, or a sequence of them.
fn paths(obj: &Bound<'_, PyAny>, what: &str) -> customop::Result<Vec<PathBuf>> {
    if obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__").unwrap_or(false) {
        return obj.extract::<PathBuf>().map(|p| vec![p]).map_err(|e| usage(format!("{what}: {e}")));
    }
    let items: Vec<Bound<'_, PyAny>> = match obj.try_iter() {
        Ok(it) => it.collect::<PyResult<_>>().map_err(|e| usage(format!("{what}: {e}")))?,
        Err(_) => return Err(usage(format!("{what}: give a path or a list of paths"))),
    };
    items
        .iter()
        .map(|i| i.extract::<PathBuf>().map_err(|_| usage(format!("{what}: {} is not a path", i.repr().map(|r| r.to_string()).unwrap_or_default()))))
        .collect()
}

/// `extra_cflags` / `extra_ldflags` (`what`): a list of strings, or one
/// string split as a shell would.
fn flags_of(obj: Option<&Bound<'_, PyAny>>, what: &str) -> customop::Result<Vec<String>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(Vec::new()) };
    if let Ok(s) = obj.extract::<String>() {
        return split_flags(&s);
    }
    obj.extract::<Vec<String>>().map_err(|_| usage(format!("{what}: give a list of strings")))
}

/// The default build directory: `$XDG_CACHE_HOME/neuroncustomop/NAME`
/// (else `~/.cache/...`), as torch's extension loader caches under the
/// user's cache.
fn default_dir(name: &str) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("neuroncustomop").join(name)
}

/// Builds (unchanged sources are not rebuilt) and loads a library.
#[pyfunction]
// The vendor's `custom_op.load` keywords, one parameter each.
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (name, compute_srcs, shape_srcs, build_directory = None, multicore = None, extra_cflags = None, verbose = None, timeout = None, extra_ldflags = None, on = None, isolate = None))]
pub fn load(
    py: Python<'_>,
    name: &Bound<'_, PyAny>,
    compute_srcs: &Bound<'_, PyAny>,
    shape_srcs: &Bound<'_, PyAny>,
    build_directory: Option<&Bound<'_, PyAny>>,
    multicore: Option<&Bound<'_, PyAny>>,
    extra_cflags: Option<&Bound<'_, PyAny>>,
    verbose: Option<&Bound<'_, PyAny>>,
    timeout: Option<&Bound<'_, PyAny>>,
    extra_ldflags: Option<&Bound<'_, PyAny>>,
    on: Option<&Bound<'_, PyAny>>,
    isolate: Option<&Bound<'_, PyAny>>,
) -> PyResult<Library> {
    let fail = |e: Error| errors::to_py(py, &e);
    let on = on_of(on).map_err(fail)?;
    let timeout = timeout.map(timeout_of).transpose().map_err(fail)?.flatten();
    let isolate = isolate_of(isolate, on, timeout).map_err(fail)?;
    // Taken as objects and checked here: a wrong type is a
    // neuroncustomop.Error naming the keyword, not PyO3's bare TypeError.
    let flag = |o: Option<&Bound<'_, PyAny>>, what: &str| -> PyResult<bool> {
        let Some(o) = o.filter(|o| !o.is_none()) else { return Ok(false) };
        if o.is_instance_of::<PyBool>() {
            Ok(o.is_truthy()?)
        } else {
            Err(fail(usage(format!("{what}={}: give True or False", o.repr().map(|r| r.to_string()).unwrap_or_default()))))
        }
    };
    let (multicore, verbose) = (flag(multicore, "multicore")?, flag(verbose, "verbose")?);
    let name: String = name.extract().map_err(|_| fail(usage("name: give a string")))?;
    let compute = paths(compute_srcs, "compute_srcs").map_err(fail)?;
    let shape = paths(shape_srcs, "shape_srcs").map_err(fail)?;
    let out = match build_directory.filter(|o| !o.is_none()) {
        Some(d) => d.extract::<PathBuf>().map_err(|_| fail(usage("build_directory: give a path")))?,
        None => default_dir(&name),
    };
    let cflags = flags_of(extra_cflags, "extra_cflags").map_err(fail)?;
    let ldflags = flags_of(extra_ldflags, "extra_ldflags").map_err(fail)?;
    // The emulated cluster runs a --target qemu build (which also builds
    // the simulator's library).
    let target = if on == On::Sim { Target::Sim } else { Target::Qemu };
    let staticlib = staticlib_path::find(py)?;
    let opts = BuildOptions { name, compute, shape, multicore, target, out: out.clone(), cflags, ldflags, staticlib: Some(staticlib), include: None };
    // The compiler runs for seconds: other Python threads go on meanwhile.
    // verbose=True: each compile command and its output (warnings too) on
    // stderr as it runs; the warnings are kept in build_log either way.
    let level = if verbose { Level::Verbose } else { Level::Quiet };
    let (built, warnings) =
        py.detach(|| progress::scoped(level, || build(&opts).and_then(|b| customop::run::load(&out).map(|(schema, api)| (b, schema, api)))));
    let (b, schema, api) = built.map_err(fail)?;
    let show = |p: &PathBuf| p.display().to_string();
    let log = BuildLog {
        compiled: b.objects.iter().filter(|(_, o)| *o == Outcome::Compiled).map(|(p, _)| show(p)).collect(),
        cached: b.objects.iter().filter(|(_, o)| *o == Outcome::Cached).map(|(p, _)| show(p)).collect(),
        linked: b.linked,
        warnings: warnings.iter().map(|w| format!("{}:\n{}", w.what, w.output.trim_end())).collect(),
    };
    if verbose {
        let ops: Vec<&str> = b.schema.ops.iter().map(|o| o.name.as_str()).collect();
        let line = format!(
            "neuroncustomop: built {} ({} op(s): {}; {} source(s) compiled, {} cached{})",
            b.library.display(),
            ops.len(),
            ops.join(", "),
            log.compiled.len(),
            log.cached.len(),
            if b.linked { "" } else { ", not relinked" }
        );
        // Through Python's print, so that sys.stdout redirection (pytest's
        // capture, notebooks) sees it.
        let builtins = py.import("builtins")?;
        builtins.call_method1("print", (line,))?;
        for s in &log.compiled {
            builtins.call_method1("print", (format!("neuroncustomop:   compiled {s}"),))?;
        }
    }
    Ok(Library::new(schema, api, out, log, timeout, on, isolate))
}

/// A library built before (by `load`, here or in another process, or by
/// `customop build`): its build directory, or the shared object in it.
/// `timeout=` and `on=` as for `load` (`on` other than `"sim"` needs a
/// `--target qemu` build).
#[pyfunction]
#[pyo3(signature = (path, timeout = None, on = None, isolate = None))]
pub fn load_built(
    py: Python<'_>,
    path: PathBuf,
    timeout: Option<&Bound<'_, PyAny>>,
    on: Option<&Bound<'_, PyAny>>,
    isolate: Option<&Bound<'_, PyAny>>,
) -> PyResult<Library> {
    let fail = |e: Error| errors::to_py(py, &e);
    let timeout = timeout.map(timeout_of).transpose().map_err(fail)?.flatten();
    let on = on_of(on).map_err(fail)?;
    let isolate = isolate_of(isolate, on, timeout).map_err(fail)?;
    let dir = if path.is_dir() { path.clone() } else { path.parent().map(PathBuf::from).unwrap_or_default() };
    if !path.exists() {
        return Err(fail(Error::new(ErrorKind::Io, format!("{}: no such file or directory (give a build directory or the lib*.so in it)", path.display()))));
    }
    let (schema, api) = py.detach(|| customop::run::load(&dir)).map_err(fail)?;
    if !path.is_dir() && path.file_name() != std::path::Path::new(&schema.library_file).file_name() {
        return Err(fail(bad_input(format!(
            "{} is not the library of its build directory {} (that is {})",
            path.display(),
            dir.display(),
            schema.library_file
        ))));
    }
    Ok(Library::new(schema, api, dir, BuildLog { compiled: Vec::new(), cached: Vec::new(), linked: false, warnings: Vec::new() }, timeout, on, isolate))
}
