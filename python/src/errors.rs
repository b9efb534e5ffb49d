//! `neuroncustomop.Error`: every expected failure (a bad call, a build
//! that does not compile, a kernel that fails) raises it, with `.code`
//! (the `customop` exit status of that kind, documented in
//! `docs/kernel-guide.md`), `.kind` (its name) and `.message`.

use customop::Error as ToolError;
use customop::ErrorKind;
use pyo3::prelude::*;
use pyo3::types::PyString;

pyo3::create_exception!(
    neuroncustomop,
    Error,
    pyo3::exceptions::PyException,
    "A failure of neuroncustomop: `.code` (the customop exit status of its kind), `.kind` and `.message`."
);

/// The exception for `e`, with `extra` attributes set on it (a failed
/// run carries its `.report`).
pub fn to_py_with(py: Python<'_>, e: &ToolError, extra: &[(&str, Py<PyAny>)]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let exc = py.get_type::<Error>().call1((PyString::new(py, &e.message),))?;
        exc.setattr("code", e.kind.exit_code())?;
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
