//! `neuroncustomop.Error`: every expected failure (a bad call, a build
//! that does not compile, a kernel that fails) raises it, with
//! `.exit_code` (the `customop` exit status of that kind, documented in
//! `docs/kernel-guide.md`; `.code` is the same number, its older name),
//! `.kind` (its name), `.error` (a failed kernel's runtime error code,
//! `docs/errors.md`, else None) and `.message`.

use customop::Error as ToolError;
use customop::ErrorKind;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

pyo3::create_exception!(
    neuroncustomop,
    Error,
    pyo3::exceptions::PyException,
    "A failure of neuroncustomop. `.exit_code`: the customop exit status of its kind (2 usage, 4 compile, 6 bad input, \
     7 kernel failed, 12 crashed, 13 timed out, ...; `.code` is the same number). `.kind`: its name. `.error`: when the \
     kernel failed, the runtime's error code (docs/errors.md; not an exit status), else None. `.message`: what happened."
);

pyo3::create_exception!(
    neuroncustomop,
    KernelCrashed,
    Error,
    "The kernel or the shape function crashed (a bad pointer, abort(), a stack overflow, an integer division by zero): \
     `.message` holds the crash report (core, op, signal, address). The run was in a child process: this one goes on."
);

/// `neuroncustomop.RunTimedOut`: a run passed its `timeout=` and was
/// stopped; a `neuroncustomop.Error` (code 13) that is also a
/// `TimeoutError`.
static TIMED_OUT: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The `RunTimedOut` class (made once, as `UnknownOpError` is).
pub fn timed_out_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    TIMED_OUT
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [py.get_type::<Error>().into_any(), py.get_type::<pyo3::exceptions::PyTimeoutError>().into_any()])?;
            let ns = PyDict::new(py);
            ns.set_item("__module__", "neuroncustomop")?;
            ns.set_item("__doc__", "A run passed its timeout= and was stopped: a neuroncustomop.Error that is also a TimeoutError.")?;
            let t = py.get_type::<PyType>().call1(("RunTimedOut", bases, ns))?;
            Ok::<_, PyErr>(t.cast_into::<PyType>()?.unbind())
        })
        .map(|t| t.bind(py))
}

/// `neuroncustomop.UnknownOpError`: a library has no op of that name. A
/// `neuroncustomop.Error` (code 6, the message lists the ops) that is
/// also an `AttributeError`, so `hasattr`, `getattr(lib, name, default)`
/// and a notebook's attribute probes (`_repr_html_`) see a missing
/// attribute, as on any Python object.
static UNKNOWN_OP: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The `UnknownOpError` class (made once: `type(name, (Error,
/// AttributeError), {})`, as Python cannot derive one class from two
/// exception bases declared in Rust).
pub fn unknown_op_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    UNKNOWN_OP
        .get_or_try_init(py, || {
            let bases = PyTuple::new(py, [py.get_type::<Error>().into_any(), py.get_type::<pyo3::exceptions::PyAttributeError>().into_any()])?;
            let ns = PyDict::new(py);
            ns.set_item("__module__", "neuroncustomop")?;
            ns.set_item("__doc__", "A library has no op of that name: a neuroncustomop.Error that is also an AttributeError.")?;
            let t = py.get_type::<PyType>().call1(("UnknownOpError", bases, ns))?;
            Ok::<_, PyErr>(t.cast_into::<PyType>()?.unbind())
        })
        .map(|t| t.bind(py))
}

/// The `UnknownOpError` for `e` (an unknown op's error).
pub fn unknown_op(py: Python<'_>, e: &ToolError) -> PyErr {
    match unknown_op_type(py) {
        Ok(t) => exception(py, t, e, &[]),
        Err(err) => err,
    }
}

/// The exception for `e`, with `extra` attributes set on it (a failed
/// run carries its `.report`).
pub fn to_py_with(py: Python<'_>, e: &ToolError, extra: &[(&str, Py<PyAny>)]) -> PyErr {
    match e.kind {
        ErrorKind::Crashed => exception(py, &py.get_type::<KernelCrashed>(), e, extra),
        ErrorKind::TimedOut => match timed_out_type(py) {
            Ok(t) => exception(py, t, e, extra),
            Err(err) => err,
        },
        _ => exception(py, &py.get_type::<Error>(), e, extra),
    }
}

/// An instance of `ty` (`Error` or a subclass) for `e`, with `.code`,
/// `.kind`, `.message` and `extra`.
fn exception(py: Python<'_>, ty: &Bound<'_, PyType>, e: &ToolError, extra: &[(&str, Py<PyAny>)]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let exc = ty.call1((PyString::new(py, &e.message),))?;
        exc.setattr("code", e.kind.exit_code())?;
        exc.setattr("exit_code", e.kind.exit_code())?;
        exc.setattr("error", e.runtime_error)?;
        exc.setattr("kind", e.kind.name())?;
        exc.setattr("message", &e.message)?;
        for (name, value) in extra {
            exc.setattr(*name, value)?;
        }
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|err| err)
}

/// The exception for `e`.
pub fn to_py(py: Python<'_>, e: &ToolError) -> PyErr {
    to_py_with(py, e, &[])
}

/// A `BadInput` error (an argument that does not fit the op).
pub fn bad_input(msg: impl Into<String>) -> ToolError {
    ToolError::new(ErrorKind::BadInput, msg)
}

/// A `Usage` error (a bad call of `load` or of an op's keywords).
pub fn usage(msg: impl Into<String>) -> ToolError {
    ToolError::new(ErrorKind::Usage, msg)
}
