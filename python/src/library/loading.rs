//! `load()` and `load_built()`: the build (unchanged sources are not
//! rebuilt) and the library they return, with their keywords checked.

use super::*;

/// Why a call of a library loaded with `isolate=False` takes no time bound.
pub(super) const NO_TIMEOUT_IN_PROCESS: &str =
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
pub(super) fn timeout_of(obj: &Bound<'_, PyAny>) -> customop::Result<Option<Duration>> {
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

/// The default build directory: `NAME` in the user's cache
/// (`$XDG_CACHE_HOME/neuroncustomop/`, else `~/.cache/neuroncustomop/`),
/// as torch's extension loader caches under the user's cache; never a
/// shared directory ([`customop::cache_home`]). The build checks `name`
/// (a C identifier) before anything is made there.
pub(crate) fn default_dir(name: &str) -> customop::Result<PathBuf> {
    Ok(customop::cache_home::base()?.join(name))
}

/// `load_inline`'s default build directory (`NAME` in the user's cache,
/// as `load`'s), for the package's Python side.
#[pyfunction]
pub fn _default_build_directory(py: Python<'_>, name: &str) -> PyResult<PathBuf> {
    default_dir(name).map_err(|e| errors::to_py(py, &e))
}

/// Creates `path` 0700 when missing and refuses it when another user owns
/// it or can write it ([`customop::owned_dir`]), before `load_inline`
/// writes its sources there.
#[pyfunction]
pub fn _own_build_directory(py: Python<'_>, path: PathBuf) -> PyResult<()> {
    customop::owned_dir::create(&path).map_err(|e| errors::to_py(py, &e))
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
        None => default_dir(&name).map_err(fail)?,
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
