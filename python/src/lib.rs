//! The native module `neuroncustomop._native` of the Python package
//! `neuroncustomop` (whose `__init__.py` re-exports it): `load()` builds vendor-style
//! custom-op kernels through the `customop` library (the same build and
//! run code as the `customop` command, not a wrapper around it) and
//! returns their ops as Python callables that run on the host simulator
//! with NumPy arrays.
//!
//! - [`library`] — `load`, `Library`, `Op`, `BuildLog`;
//! - [`invoke`] — arguments checked and placed, the kernel run;
//! - [`arrays`] — NumPy arrays in and out (dtypes, contiguity, bfloat16);
//! - [`report`] — the run report as objects;
//! - [`errors`] — `neuroncustomop.Error`;
//! - [`staticlib_path`] — the host library kernels link against;
//! - [`raw`] — the entry points of `neuroncustomop.custom_op` (PyTorch);
//! - [`op_table`] — the extension's own (empty) kernel op table;
//! - [`include_paths`] — where the kernel headers are, for users' own builds.

mod arrays;
mod errors;
mod include_paths;
mod invoke;
mod library;
mod op_table;
mod raw;
mod report;
mod staticlib_path;

use pyo3::prelude::*;

#[pymodule]
#[pyo3(name = "_native")]
fn neuroncustomop_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(library::loading::load, m)?)?;
    m.add_function(wrap_pyfunction!(library::loading::load_built, m)?)?;
    m.add_function(wrap_pyfunction!(library::loading::_default_build_directory, m)?)?;
    m.add_function(wrap_pyfunction!(library::loading::_own_build_directory, m)?)?;
    m.add_function(wrap_pyfunction!(include_paths::include_paths, m)?)?;
    m.add_function(wrap_pyfunction!(raw::_output_spec, m)?)?;
    m.add_function(wrap_pyfunction!(raw::_run_bytes, m)?)?;
    m.add("Error", m.py().get_type::<errors::Error>())?;
    m.add("UnknownOpError", errors::unknown_op_type(m.py())?)?;
    m.add("KernelCrashed", m.py().get_type::<errors::KernelCrashed>())?;
    m.add("RunTimedOut", errors::timed_out_type(m.py())?)?;
    m.add_class::<library::Library>()?;
    m.add_class::<library::Op>()?;
    m.add_class::<library::BuildLog>()?;
    m.add_class::<report::Report>()?;
    m.add_class::<report::CoreReport>()?;
    m.add("ACCEPTED_DTYPES", arrays::ACCEPTED)?;
    // The package's version (maturin takes the wheel's from this crate too).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
