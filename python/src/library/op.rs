//! An op of a loaded library: the call (`lib.op(x, ...)`) with its
//! keywords, on the library's worker, a one-shot child, this process or
//! the emulated cluster, and what a failed call raises.

use super::*;

/// One op: call it with its arguments in the compute function's order,
/// `op(x, ..., cores=None, report=False, timeout=None, profile=None,
/// rtol=0.0, atol=0.0)`. Tensors are anything `numpy.asarray` takes,
/// values an `int` or a `float`; it returns the output array, or
/// `(output, report)` with `report=True`. `cores=1` or `8` (default: 8 for
/// a `multicore=True` build, else 1); `timeout=` seconds (default: the
/// library's); `profile=DIR` profiles the emulated run (`on="qemu"` or
/// `"both"`); `rtol=`, `atol=`: with `on="both"`, the two outputs agree as
/// `torch.testing.assert_close` says (default: bit for bit).
/// `inspect.signature(op)` shows this op's own parameters and defaults.
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
    /// Op `op`, at `index` in its library's table, with what the library
    /// gives every op: its API, multicore build, default time bound,
    /// worker pool, shape answers, where it runs (`on`, `isolate`) and its
    /// build directory.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        op: OpSchema,
        index: usize,
        api: SimApi,
        multicore: bool,
        timeout: Option<Duration>,
        pool: Arc<Pool>,
        shapes: Arc<Mutex<ShapeCache>>,
        (on, isolate): (On, bool),
        dir: PathBuf,
    ) -> Self {
        Self { op, api, multicore, timeout, pool, index, shapes, on, isolate, dir }
    }

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

/// `cores=`, `report=`, `timeout=`, `profile=`, `rtol=` and `atol=` of an op call (`timeout`: the
/// library's default).
/// An op call's keywords.
struct CallKw {
    cores: u32,
    report: bool,
    timeout: Option<Duration>,
    /// `profile=DIR`: profile the emulated run into DIR.
    profile: Option<PathBuf>,
    /// `rtol=`, `atol=`: with `on="both"`, how close the two outputs must
    /// be (`torch.testing.assert_close`'s rule; default bit for bit).
    tolerance: customop::differential::Tolerance,
    /// Whether `rtol=` or `atol=` was given.
    tolerance_given: bool,
}

/// A tolerance keyword's value: a number ≥ 0 (not a bool).
fn tolerance_of(v: &Bound<'_, PyAny>, name: &str) -> customop::Result<f64> {
    let bad = || usage(format!("{name}={}: give a number ≥ 0 (as torch.testing.assert_close takes)", v.repr().map(|r| r.to_string()).unwrap_or_default()));
    if v.is_instance_of::<PyBool>() {
        return Err(bad());
    }
    let x: f64 = v.extract().map_err(|_| bad())?;
    if customop::differential::Tolerance::valid(x) {
        Ok(x)
    } else {
        Err(bad())
    }
}

fn keywords(kwargs: Option<&Bound<'_, PyDict>>, multicore: bool, op: &str, mut timeout: Option<Duration>) -> customop::Result<CallKw> {
    let (mut cores, mut report, mut profile) = (None, false, None);
    let (mut tolerance, mut tolerance_given) = (customop::differential::Tolerance::default(), false);
    for (k, v) in kwargs.into_iter().flat_map(|d| d.iter()) {
        match k.extract::<String>().unwrap_or_default().as_str() {
            "cores" => cores = Some(v),
            "report" if v.is_instance_of::<PyBool>() => report = v.is_truthy().unwrap_or(false),
            "report" => return Err(usage("report=: give True or False")),
            "timeout" => timeout = timeout_of(&v)?,
            "profile" if v.is_none() => profile = None,
            "profile" => profile = Some(v.extract::<PathBuf>().map_err(|_| usage("profile=: give a directory (a str or a path)"))?),
            "rtol" => (tolerance.rtol, tolerance_given) = (tolerance_of(&v, "rtol")?, true),
            "atol" => (tolerance.atol, tolerance_given) = (tolerance_of(&v, "atol")?, true),
            other => return Err(usage(format!("unexpected keyword `{other}` (an op takes cores=, report=, timeout=, profile=, rtol= and atol=)"))),
        }
    }
    Ok(CallKw { cores: cores_of(cores.as_ref(), multicore, op)?, report, timeout, profile, tolerance, tolerance_given })
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
        tolerance: customop::differential::Tolerance,
    ) -> PyResult<(customop::npy::Array, String, Option<String>)> {
        let (op, dir, on, timeout) = (&self.op, &self.dir, self.on, timeout.or(self.timeout));
        let ran = py.detach(|| {
            // A fresh directory of a random name, made exclusively and
            // 0700 (another user cannot have made it first, nor read or
            // swap what is staged in it), removed when the call returns;
            // each file in it made exclusively, 0600.
            let base = std::env::temp_dir();
            let tmp = tempfile::Builder::new().prefix("neuroncustomop-").tempdir_in(&base).map_err(|e| Error::io("create a private directory in", &base, e))?;
            let mut args = Vec::with_capacity(placed.len());
            for (i, p) in placed.iter().enumerate() {
                args.push(match p {
                    Placed::Tensor(a) => {
                        let f = tmp.path().join(format!("arg{i}.npy"));
                        customop::npy::write_new(&f, a)?;
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
                tolerance,
            };
            customop::run::run_profiled(&o, profile)
        });
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
    /// Runs the op (see the class's documentation for the keywords).
    // Keywords parsed here rather than by PyO3, so that a misspelt or
    // mistyped one is a neuroncustomop.Error like every other bad call.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>, kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyAny>> {
        let op = &self.op;
        let CallKw { cores, report, timeout, profile, tolerance, tolerance_given } =
            keywords(kwargs, self.multicore, &op.name, self.timeout).map_err(|e| errors::to_py(py, &e))?;
        if tolerance_given && self.on != On::Both {
            let e = usage("rtol=/atol= say how close the simulator's and the emulated device's outputs must be: load the library with on=\"both\"");
            return Err(errors::to_py(py, &e));
        }
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
                    let (output, report, summary) = self.run_emulated(py, &placed, cores, timeout, profile.as_deref(), tolerance)?;
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

    /// This op's call as `inspect.signature` and `help()` show it: one
    /// positional parameter per compute-function parameter (named by its
    /// kind and annotated with its C++ type), then the keywords.
    #[getter]
    fn __signature__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inspect = py.import("inspect")?;
        let parameter = inspect.getattr("Parameter")?;
        let (positional, keyword) = (parameter.getattr("POSITIONAL_ONLY")?, parameter.getattr("KEYWORD_ONLY")?);
        let mut params = Vec::new();
        for (i, (p, kind)) in self.op.params.iter().zip(self.kinds()).enumerate() {
            let kw = PyDict::new(py);
            kw.set_item("annotation", &p.cpp_type)?;
            params.push(parameter.call((format!("{kind}{i}"), &positional), Some(&kw))?);
        }
        let cores: u32 = if self.multicore { 8 } else { 1 };
        let none = py.None();
        let defaults: [(&str, Bound<'py, PyAny>); 6] = [
            ("cores", cores.into_pyobject(py)?.into_any()),
            ("report", false.into_pyobject(py)?.to_owned().into_any()),
            ("timeout", none.bind(py).clone()),
            ("profile", none.bind(py).clone()),
            ("rtol", 0.0f64.into_pyobject(py)?.into_any()),
            ("atol", 0.0f64.into_pyobject(py)?.into_any()),
        ];
        for (name, default) in defaults {
            let kw = PyDict::new(py);
            kw.set_item("default", default)?;
            params.push(parameter.call((name, &keyword), Some(&kw))?);
        }
        inspect.getattr("Signature")?.call1((params,))
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
