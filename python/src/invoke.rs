//! Calling an op: the Python arguments checked against the op's declared
//! kinds, the shape function evaluated, the kernel run on a fresh
//! simulator (with the GIL released), the output read back: through the
//! functions `customop run` uses (`customop::run`), with arrays and
//! numbers instead of `.npy` paths and text.

use crate::arrays;
use crate::errors::bad_input;
use customop::contained::Bounds;
use customop::npy::{descr, Array, Dtype};
pub use customop::run::Placed;
use customop::shape::{OutputSpec, Value};
use customop::sim::SimApi;
use customop::worker::{Call, Finished};
use customop::{ArgKind, Error, Op, Result};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat};
use std::time::Duration;

/// A number as the shape function and the marshalling see it.
enum Number {
    Int(i64),
    Float(f64),
}

/// A Python int or float (NumPy scalars too); bools are refused, so that
/// `True` is not silently 1.
fn number(obj: &Bound<'_, PyAny>) -> Option<Number> {
    if obj.is_instance_of::<PyBool>() || obj.get_type().name().is_ok_and(|n| n == "bool" || n == "bool_") {
        return None;
    }
    if obj.is_instance_of::<PyFloat>() {
        return obj.extract::<f64>().ok().map(Number::Float);
    }
    // `__index__`: Python ints and NumPy integers (not floats).
    if let Ok(i) = obj.extract::<i64>() {
        return Some(Number::Int(i));
    }
    let np_floating = obj.py().import("numpy").and_then(|np| np.getattr("floating")).ok()?;
    if obj.is_instance(&np_floating).unwrap_or(false) {
        return obj.extract::<f64>().ok().map(Number::Float);
    }
    None
}

fn value(kind: ArgKind, dtype: Dtype, bytes: Vec<u8>, value: Value) -> Placed {
    Placed::Value { kind, dtype, bytes, value }
}

/// Argument `i` of `op` from `obj`.
pub fn place(op: &Op, i: usize, obj: &Bound<'_, PyAny>) -> PyResult<Result<Placed>> {
    let p = &op.params[i];
    let what = format!("argument {} of op `{}` ({})", i + 1, op.name, p.cpp_type);
    if p.kind == ArgKind::Tensor {
        if number(obj).is_some() {
            return Ok(Err(bad_input(format!("{what} is a tensor: give an array, not a number"))));
        }
        return Ok(arrays::from_python(obj, &what)?.map(Placed::Tensor));
    }
    let type_name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    let Some(n) = number(obj) else {
        // An integer past 64 bits (2**63): an int, but not one that fits.
        if obj.hasattr("__index__").unwrap_or(false) && !obj.is_instance_of::<PyBool>() {
            let text = obj.str().map(|s| s.to_string()).unwrap_or_default();
            return Ok(Err(bad_input(format!("{what}: {text} is outside the 64-bit integer range [{}, {}]", i64::MIN, i64::MAX))));
        }
        return Ok(Err(bad_input(format!("{what} is a value argument: give a Python int or float, not {type_name}"))));
    };
    Ok(Ok(match (p.kind, n) {
        // As `customop run`: an integral Scalar marshals as int64, a
        // floating one as float32.
        (ArgKind::Scalar, Number::Int(v)) => value(p.kind, Dtype::Int64, v.to_le_bytes().to_vec(), Value::Int(v)),
        (ArgKind::Scalar, Number::Float(v)) => match customop::run::marshal_float(&what, p.kind, v) {
            Ok(f) => value(p.kind, Dtype::Fp32, f.to_le_bytes().to_vec(), Value::Float(v)),
            Err(e) => return Ok(Err(e)),
        },
        (ArgKind::Int, Number::Int(v)) => match i32::try_from(v) {
            Ok(v) => value(p.kind, Dtype::Int32, v.to_le_bytes().to_vec(), Value::Int(v.into())),
            Err(_) => return Ok(Err(bad_input(format!("{what} is an int: {v} does not fit in 32 bits")))),
        },
        (ArgKind::LongLong, Number::Int(v)) => value(p.kind, Dtype::Int64, v.to_le_bytes().to_vec(), Value::Int(v)),
        (ArgKind::Int | ArgKind::LongLong, Number::Float(v)) => {
            return Ok(Err(bad_input(format!("{what} is an integer: {v} is a float (pass int(...) if you mean to truncate)"))));
        }
        // No dtype wider than f32 marshals: a double travels as f32.
        (ArgKind::Float | ArgKind::Double, n) => {
            let v = match n {
                Number::Int(i) => i as f64,
                Number::Float(f) => f,
            };
            match customop::run::marshal_float(&what, p.kind, v) {
                Ok(f) => value(p.kind, Dtype::Fp32, f.to_le_bytes().to_vec(), Value::Float(v)),
                Err(e) => return Ok(Err(e)),
            }
        }
        (ArgKind::Tensor, _) => unreachable!("tensors are placed above"),
    }))
}

/// What a successful run gave.
pub struct Ran {
    /// The output.
    pub output: Array,
    /// The report text.
    pub report: String,
    /// Who wrote the output (elements, writer map cells), when asked.
    pub writers: Option<(u64, Vec<u16>)>,
}

/// A failed run: the error and the report text (if the kernel ran).
pub struct Failed {
    /// The error.
    pub error: Error,
    /// The report of the failed run.
    pub report: Option<String>,
    /// The output as the kernel left it, for a run whose kernels ran and
    /// failed the verdict (what `customop run --keep-output` writes).
    pub output: Option<Array>,
}

impl From<Error> for Failed {
    fn from(error: Error) -> Self {
        Self { error, report: None, output: None }
    }
}

/// How an argument is named in messages: its dtype and shape, or its value.
fn label(p: &Placed) -> String {
    match p {
        Placed::Tensor(a) => format!("a {} array of shape {:?}", descr(a.dtype).unwrap_or(a.dtype.name()), a.shape),
        Placed::Value { value: Value::Int(v), .. } => v.to_string(),
        Placed::Value { value: Value::Float(v), .. } => v.to_string(),
        Placed::Value { .. } => "a value".to_owned(),
    }
}

/// Evaluates the shape function, runs the kernel on `cores` cores on a
/// fresh simulator (`customop::run::run_sim`, as `customop run` does),
/// reads the output; in a child process (`customop::contained`), so a
/// crash raises instead of killing the interpreter, and `timeout` or
/// `interrupted` (Ctrl-C) stops the run. Needs no Python: the caller
/// releases the GIL around it.
pub fn run(
    api: SimApi,
    op: &Op,
    placed: &[Placed],
    cores: u32,
    timeout: Option<Duration>,
    writer_map: bool,
    interrupted: &mut dyn FnMut() -> bool,
) -> std::result::Result<Ran, Failed> {
    let labels: Vec<String> = placed.iter().map(label).collect();
    let bounds = Bounds { timeout, option: "timeout=", interrupted };
    // A failed run's output comes back as the kernel left it.
    let files = customop::run::Files { keep_failed: true, writer_map, ..Default::default() };
    let (spec, sim) = customop::contained::shape_and_run(api, op, &labels, placed, &files, Some(cores), bounds)?;
    let customop::run::SimRun { rc, report, data, writers, .. } =
        sim.ok_or_else(|| Error::new(customop::ErrorKind::Environment, "the run's process sent no kernel result"))?;
    if rc != 0 {
        let error = customop::run::run_failed(&op.name, cores, rc, &api.error_message(rc), None, &report);
        let want = spec.shape.iter().product::<u64>() * u64::from(spec.dtype.elem_size());
        let output = (data.len() as u64 == want).then(|| Array { dtype: spec.dtype, shape: spec.shape.clone(), data });
        return Err(Failed { error, report: Some(report), output });
    }
    let OutputSpec { dtype, shape } = spec;
    Ok(Ran { output: Array { dtype, shape, data }, report, writers })
}

/// Stages argument `i` of `op` from `obj` into `call` (a tensor's bytes
/// copied once, from the array's own memory where it is laid out so);
/// how messages name it.
pub fn stage(call: &mut Call<'_>, op: &Op, i: usize, obj: &Bound<'_, PyAny>) -> PyResult<Result<String>> {
    let p = &op.params[i];
    if p.kind != ArgKind::Tensor {
        return Ok(place(op, i, obj)?.map(|placed| {
            let l = label(&placed);
            if let Placed::Value { kind, dtype, bytes, value } = placed {
                call.value(kind, dtype, bytes, value);
            }
            l
        }));
    }
    // An ndarray (the usual argument) is no number: not asked (`number`
    // imports numpy to look for a NumPy float).
    if obj.cast_exact::<numpy::PyUntypedArray>().is_err() && number(obj).is_some() {
        return Ok(Err(bad_input(format!("argument {} of op `{}` ({}) is a tensor: give an array, not a number", i + 1, op.name, p.cpp_type))));
    }
    let what = format!("argument {} of op `{}` ({})", i + 1, op.name, p.cpp_type);
    arrays::with_bytes(obj, &what, |dtype, shape, bytes| {
        let l = format!("a {} array of shape {:?}", descr(dtype).unwrap_or(dtype.name()), shape);
        call.tensor(dtype, shape, bytes)?;
        Ok(l)
    })
}

/// Runs the staged call in the library's worker (`customop::worker`):
/// the kernel on its reset simulator; the same errors and report as
/// [`run`]. The output stays in the worker's memory until read.
#[allow(clippy::too_many_arguments)]
pub fn finish<'a>(
    api: SimApi,
    call: Call<'a>,
    index: usize,
    op: &Op,
    labels: &[String],
    cores: u32,
    timeout: Option<Duration>,
    interrupted: &mut dyn FnMut() -> bool,
) -> std::result::Result<Finished<'a>, Failed> {
    let mut done = call.run(index, labels, cores, timeout, "timeout=", interrupted)?;
    match done.run.clone() {
        Some((0, _)) => Ok(done),
        Some((rc, report)) => {
            let error = customop::run::run_failed(&op.name, cores, rc, &api.error_message(rc), None, &report);
            // The worker's output region holds what the kernels wrote
            // (the fill where they did not) until the next call.
            let want = done.spec.shape.iter().product::<u64>() * u64::from(done.spec.dtype.elem_size());
            let data = done.take_kept();
            let output = (data.len() as u64 == want).then(|| Array { dtype: done.spec.dtype, shape: done.spec.shape.clone(), data });
            Err(Failed { error, report: Some(report), output })
        }
        None => Err(Error::new(customop::ErrorKind::Environment, "the run's worker sent no kernel result").into()),
    }
}

/// [`run`] of `placed`, in the library's worker.
#[allow(clippy::too_many_arguments)]
pub fn run_in_worker(
    api: SimApi,
    mut call: Call<'_>,
    index: usize,
    op: &Op,
    placed: &[Placed],
    cores: u32,
    timeout: Option<Duration>,
    writer_map: bool,
    interrupted: &mut dyn FnMut() -> bool,
) -> std::result::Result<Ran, Failed> {
    let labels: Vec<String> = placed.iter().map(label).collect();
    if writer_map {
        call.keep_writer_map();
    }
    for p in placed {
        match p {
            Placed::Tensor(a) => call.tensor(a.dtype, a.shape.clone(), &a.data)?,
            Placed::Value { kind, dtype, bytes, value } => call.value(*kind, *dtype, bytes.clone(), value.clone()),
        }
    }
    let mut done = finish(api, call, index, op, &labels, cores, timeout, interrupted)?;
    let report = done.run.take().map(|r| r.1).unwrap_or_default();
    let data = done.take_early().unwrap_or_else(|| done.output().to_vec());
    let writers = done.take_writers();
    let OutputSpec { dtype, shape } = done.spec.clone();
    Ok(Ran { output: Array { dtype, shape, data }, report, writers })
}
