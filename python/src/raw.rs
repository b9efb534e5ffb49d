//! The two entry points `neuroncustomop.custom_op` (the PyTorch layer)
//! builds its ops on, private to the package:
//!
//! - `_output_spec(op, args)`: the shape function alone, evaluated on the
//!   host (no kernel runs): what a fake tensor needs. A tensor argument is
//!   described as `(dtype_name, shape)`.
//! - `_run_bytes(op, args, cores)`: the kernel run on a fresh simulator.
//!   A tensor argument is `(dtype_name, shape, data)`, `data` a C-ordered
//!   `uint8` ndarray over the tensor's own memory (`t.view(torch.uint8)
//!   .numpy()` shares it): its bytes go straight into the simulated HBM,
//!   with no copy in between. The output comes back as a `uint8` ndarray
//!   that owns the simulator's bytes (`torch.from_numpy` shares it), with
//!   its dtype name, shape and the run's report.
//!
//! Value arguments are Python numbers, checked as the NumPy-facing call
//! checks them (`invoke::place`).

use crate::errors::{self, bad_input};
use crate::invoke;
use crate::library::{cores_of, Op};
use crate::report::{self, Report};
use customop::npy::Dtype;
use customop::run::Placed;
use customop::shape::{self, OutputSpec, Value};
use customop::sim::Sim;
use customop::{ArgKind, Error, ErrorKind, Op as OpSchema};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// The dtype names this layer speaks (torch's and NumPy's spelling).
pub fn dtype_name(d: Dtype) -> &'static str {
    match d {
        Dtype::U8 => "uint8",
        Dtype::I8 => "int8",
        Dtype::I16 => "int16",
        Dtype::I32 => "int32",
        Dtype::I64 => "int64",
        Dtype::F16 => "float16",
        Dtype::Bf16 => "bfloat16",
        Dtype::F32 => "float32",
    }
}

fn dtype_of(name: &str) -> Option<Dtype> {
    [Dtype::U8, Dtype::I8, Dtype::I16, Dtype::I32, Dtype::I64, Dtype::F16, Dtype::Bf16, Dtype::F32].into_iter().find(|d| dtype_name(*d) == name)
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
        let want = shape.iter().product::<u64>() * dtype.size() as u64;
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
    let spec = shape::evaluate(&op.api, &op.op, &shape_values(&described)).map_err(|e| errors::to_py(py, &e))?;
    Ok((dtype_name(spec.dtype), spec.shape))
}

/// A simulator that crosses `Python::detach`.
struct Detached(Sim);

// SAFETY: `Python::detach` runs its closure on the calling thread, so the
// simulator never changes threads; the bound is only there to keep
// GIL-bound objects out of the closure, which a simulator is not (it
// holds no Python object and its handle has no thread affinity).
unsafe impl Send for Detached {}

impl Detached {
    /// Runs op `name` (a method, so that the closure takes the wrapper
    /// whole, not the simulator inside it).
    fn run(&mut self, name: &str, cores: u32) -> (i32, String) {
        self.0.run(name, cores)
    }
}

fn label(a: &Described<'_>) -> String {
    match a {
        Described::Tensor { dtype, shape, .. } => format!("a {} tensor of shape {shape:?}", dtype_name(*dtype)),
        Described::Value(Placed::Value { value: Value::Int(v), .. }) => v.to_string(),
        Described::Value(Placed::Value { value: Value::Float(v), .. }) => v.to_string(),
        Described::Value(_) => "a value".to_owned(),
    }
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
    let OutputSpec { dtype, shape } = shape::evaluate(&op.api, o, &shape_values(&described)).map_err(fail)?;
    let mut sim = Sim::new(op.api).map_err(fail)?;
    // The one copy: the caller's bytes into the simulated HBM (under the
    // GIL, so no Python thread changes them meanwhile).
    for (i, a) in described.iter().enumerate() {
        let what = format!("argument {} of op `{}` ({})", i + 1, o.name, label(a));
        let placed = match a {
            Described::Tensor { dtype, shape, data: Some(d) } => {
                sim.arg_tensor(dtype.code(), shape, d.as_slice().map_err(|e| fail(bad_input(format!("{what}: {e}"))))?, &what)
            }
            Described::Value(Placed::Value { kind, dtype, bytes, .. }) => sim.arg_value(kind.code(), dtype.code(), bytes, &what),
            Described::Value(Placed::Tensor(t)) => sim.arg_tensor(t.dtype.code(), &t.shape, &t.data, &what),
            Described::Tensor { data: None, .. } => Err(bad_input(format!("{what}: the tensor's bytes were not given"))),
        };
        placed.map_err(fail)?;
    }
    sim.set_output(dtype.code(), &shape).map_err(fail)?;
    let mut sim = Detached(sim);
    // The kernel runs on simulator threads of its own; other Python
    // threads (a DataLoader's) go on meanwhile.
    let (rc, text) = py.detach(|| sim.run(&o.name, cores));
    if rc != 0 {
        let error = customop::run::run_failed(&o.name, cores, rc, &op.api.error_message(rc), None, &text);
        let extra = match report::parse(&text) {
            Ok(r) => vec![("report", Py::new(py, r)?.into_any())],
            Err(_) => vec![],
        };
        return Err(errors::to_py_with(py, &error, &extra));
    }
    let numel: u64 = shape.iter().product();
    let data = sim.0.read_output(numel as usize * dtype.size()).map_err(fail)?;
    let rep = report::parse(&text).map_err(|m| fail(Error::new(ErrorKind::Environment, m)))?;
    Ok((PyArray1::from_vec(py, data), dtype_name(dtype), shape, rep))
}
