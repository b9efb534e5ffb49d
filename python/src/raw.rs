//! The two entry points `neuroncustomop.custom_op` (the PyTorch layer)
//! builds its ops on, private to the package:
//!
//! - `_output_spec(op, args)`: the shape function alone (no kernel runs),
//!   in a child process as every op call, its answers kept per op, dtypes
//!   and shapes: what a fake tensor needs. A tensor argument is described
//!   as `(dtype_name, shape)`.
//! - `_run_bytes(op, args, cores)`: the kernel run on a fresh simulator,
//!   in a child process as every op call (a crash, a timeout or Ctrl-C
//!   ends the child, not the interpreter). A tensor argument is
//!   `(dtype_name, shape, data)`, `data` a C-ordered `uint8` ndarray over
//!   the tensor's own memory (`t.view(torch.uint8).numpy()` shares it):
//!   its bytes are copied once, into the run's arguments. The output comes
//!   back as a `uint8` ndarray that owns the run's bytes
//!   (`torch.from_numpy` shares it), with its dtype name, shape and the
//!   run's report.
//!
//! Value arguments are Python numbers, checked as the NumPy-facing call
//! checks them (`invoke::place`).

use crate::errors::{self, bad_input};
use crate::invoke;
use crate::library::{cores_of, Op};
use crate::report::{self, Report};
use customop::npy::{Array, Dtype};
use customop::run::Placed;
use customop::shape::Value;
use customop::{ArgKind, Error, ErrorKind, Op as OpSchema};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// The dtype names this layer speaks (torch's and NumPy's spelling, the
/// runtime's `Dtype::user_name`); a dtype that does not marshal has none.
pub fn dtype_name(d: Dtype) -> PyResult<&'static str> {
    if d.marshals() {
        Ok(d.user_name())
    } else {
        Err(PyValueError::new_err(format!("dtype {} (code {}) does not marshal", d.name(), d.code())))
    }
}

fn dtype_of(name: &str) -> Option<Dtype> {
    Dtype::ALL.into_iter().find(|d| dtype_name(*d).ok() == Some(name))
}

/// One argument as described by the Python layer.
enum Described<'py> {
    Tensor { dtype: Dtype, shape: Vec<u64>, data: Option<PyReadonlyArray1<'py, u8>> },
    Value(Placed),
}

/// Argument `i` of `op`: a tensor description (with its bytes when
/// `with_data`), or a number.
fn describe<'py>(op: &OpSchema, i: usize, obj: &Bound<'py, PyAny>, with_data: bool) -> PyResult<customop::Result<Described<'py>>> {
    let p = &op.params[i];
    if p.kind != ArgKind::Tensor {
        return Ok(invoke::place(op, i, obj)?.map(Described::Value));
    }
    let what = format!("argument {} of op `{}` ({})", i + 1, op.name, p.cpp_type);
    let Ok(t) = obj.cast::<PyTuple>() else {
        return Ok(Err(bad_input(format!("{what} is a tensor: give a tensor"))));
    };
    let (name, shape): (String, Vec<u64>) = (t.get_item(0)?.extract()?, t.get_item(1)?.extract()?);
    let Some(dtype) = dtype_of(&name) else {
        return Ok(Err(bad_input(format!("{what}: dtype {name} does not marshal (accepted: {})", crate::arrays::ACCEPTED))));
    };
    if shape.is_empty() {
        return Ok(Err(bad_input(format!("{what}: a 0-d tensor is not a tensor argument (pass a Python number for a value argument)"))));
    }
    if shape.len() > 8 || shape.contains(&0) {
        return Ok(Err(bad_input(format!("{what}: shape {shape:?}: a tensor has 1 to 8 dimensions, none of them 0"))));
    }
    let data = if with_data {
        let a: PyReadonlyArray1<'py, u8> = t.get_item(2)?.extract()?;
        let want = shape.iter().product::<u64>() * u64::from(dtype.elem_size());
        if a.len()? as u64 != want {
            return Ok(Err(bad_input(format!("{what}: {} contiguous bytes expected for shape {shape:?} of {name}", want))));
        }
        Some(a)
    } else {
        None
    };
    Ok(Ok(Described::Tensor { dtype, shape, data }))
}

fn describe_all<'py>(py: Python<'py>, op: &OpSchema, args: &Bound<'py, PyTuple>, with_data: bool) -> PyResult<Vec<Described<'py>>> {
    if args.len() != op.params.len() {
        let kinds: Vec<&str> = op.params.iter().map(|p| p.cpp_type.as_str()).collect();
        let e = bad_input(format!("op `{}` takes {} argument(s) ({}), {} given", op.name, op.params.len(), kinds.join(", "), args.len()));
        return Err(errors::to_py(py, &e));
    }
    let mut out = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        out.push(describe(op, i, &a, with_data)?.map_err(|e| errors::to_py(py, &e))?);
    }
    Ok(out)
}

fn shape_values(args: &[Described<'_>]) -> Vec<Value> {
    args.iter()
        .map(|a| match a {
            Described::Tensor { dtype, shape, .. } => Value::Tensor(*dtype, shape.clone()),
            Described::Value(Placed::Value { value, .. }) => value.clone(),
            Described::Value(Placed::Tensor(a)) => Value::Tensor(a.dtype, a.shape.clone()),
        })
        .collect()
}

/// The output's dtype name and shape, from the op's shape function.
#[pyfunction]
pub fn _output_spec(py: Python<'_>, op: &Op, args: &Bound<'_, PyTuple>) -> PyResult<(&'static str, Vec<u64>)> {
    let described = describe_all(py, &op.op, args, false)?;
    let spec = op.output_spec(py, &shape_values(&described))?;
    Ok((dtype_name(spec.dtype)?, spec.shape))
}

/// What `_run_bytes` returns: the output's bytes, dtype name and shape,
/// and the run's report.
type Ran<'py> = (Bound<'py, PyArray1<u8>>, &'static str, Vec<u64>, Report);

/// Runs the op: `(output bytes, dtype name, shape, report)`.
#[pyfunction]
#[pyo3(signature = (op, args, cores = None))]
pub fn _run_bytes<'py>(py: Python<'py>, op: &Op, args: &Bound<'py, PyTuple>, cores: Option<&Bound<'py, PyAny>>) -> PyResult<Ran<'py>> {
    let fail = |e: Error| errors::to_py(py, &e);
    let o = &op.op;
    let cores = cores_of(cores, op.multicore, &o.name).map_err(fail)?;
    let described = describe_all(py, o, args, true)?;
    // The library's worker: each tensor's bytes copied once into its
    // memory (under the GIL), the output once out of it.
    if let Some(mut call) = op.pool.try_call().filter(|_| !op.through_run()) {
        let mut labels = Vec::with_capacity(described.len());
        for (i, a) in described.into_iter().enumerate() {
            let what = format!("argument {} of op `{}`", i + 1, o.name);
            match a {
                Described::Tensor { dtype, shape, data: Some(d) } => {
                    let bytes = d.as_slice().map_err(|e| fail(bad_input(format!("{what}: {e}"))))?;
                    labels.push(format!("a {} tensor of shape {:?}", dtype_name(dtype)?, shape));
                    call.tensor(dtype, shape, bytes).map_err(fail)?;
                }
                Described::Tensor { data: None, .. } => return Err(fail(bad_input(format!("{what}: the tensor's bytes were not given")))),
                Described::Value(Placed::Value { kind, dtype, bytes, value }) => {
                    labels.push(match &value {
                        Value::Int(v) => v.to_string(),
                        Value::Float(v) => v.to_string(),
                        Value::Tensor(..) => "a value".to_owned(),
                    });
                    call.value(kind, dtype, bytes, value);
                }
                Described::Value(Placed::Tensor(_)) => return Err(fail(bad_input(format!("{what}: a tensor where a value was expected")))),
            }
        }
        let mut done = op.finish_in_worker(py, call, &labels, cores, None)?;
        let rep = report::parse(&done.run.take().map(|r| r.1).unwrap_or_default()).map_err(|m| fail(Error::new(ErrorKind::Environment, m)))?;
        let (dtype, shape) = (done.spec.dtype, done.spec.shape.clone());
        return Ok((PyArray1::from_slice(py, done.output()), dtype_name(dtype)?, shape, rep));
    }
    // The tensor's bytes are copied once into the run's arguments (the run
    // is a child process: a crash, a timeout or Ctrl-C ends it, not the
    // interpreter), under the GIL, so no Python thread changes them meanwhile.
    let mut placed = Vec::with_capacity(described.len());
    for (i, a) in described.into_iter().enumerate() {
        let what = format!("argument {} of op `{}`", i + 1, o.name);
        placed.push(match a {
            Described::Tensor { dtype, shape, data: Some(d) } => {
                let data = d.as_slice().map_err(|e| fail(bad_input(format!("{what}: {e}"))))?.to_vec();
                Placed::Tensor(Array { dtype, shape, data })
            }
            Described::Tensor { data: None, .. } => return Err(fail(bad_input(format!("{what}: the tensor's bytes were not given")))),
            Described::Value(v) => v,
        });
    }
    if op.through_run() {
        let (Array { dtype, shape, data }, report, _) = op.run_emulated(py, &placed, cores, None, None, Default::default())?;
        let rep = report::parse(&report).map_err(|m| fail(Error::new(ErrorKind::Environment, m)))?;
        return Ok((PyArray1::from_vec(py, data), dtype_name(dtype)?, shape, rep));
    }
    let ran = op.run_contained(py, &placed, cores, None, false)?;
    let rep = report::parse(&ran.report).map_err(|m| fail(Error::new(ErrorKind::Environment, m)))?;
    let Array { dtype, shape, data } = ran.output;
    Ok((PyArray1::from_vec(py, data), dtype_name(dtype)?, shape, rep))
}
