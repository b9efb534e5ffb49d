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

pub mod loading;
mod op;
use loading::{timeout_of, NO_TIMEOUT_IN_PROCESS};
pub(crate) use op::cores_of;
pub use op::Op;

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
        let (pool, shapes) = (Arc::clone(&self.pool), Arc::clone(&self.shapes));
        Op::new(op.clone(), index, self.api, self.schema.multicore, self.timeout, pool, shapes, (self.on, self.isolate), self.dir.clone())
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

fn on_name(on: On) -> &'static str {
    match on {
        On::Sim => "sim",
        On::Qemu => "qemu",
        On::Both => "both",
    }
}
