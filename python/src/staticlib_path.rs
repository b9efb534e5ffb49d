//! The host `libneuroncustomop.a` that `load()` links kernels against.
//!
//! The `customop` binary finds the one built together with itself next to
//! its executable; here the running executable is the Python interpreter,
//! so the search starts from this extension module's file (its symbols
//! identify the matching archive) and the cargo profile directory it was
//! built in (recorded by `build.rs`). `NEURON_STATICLIB` overrides both.

use crate::errors;
use customop::{Error, ErrorKind};
use pyo3::prelude::*;
use std::ffi::{c_void, CStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Where cargo built this extension (and the staticlib beside it).
const PROFILE_DIR: &str = env!("NEURONCUSTOMOP_PROFILE_DIR");

/// The staticlib, or an environment error saying what to do.
pub fn find(py: Python<'_>) -> Result<PathBuf, PyErr> {
    let found = match this_module_file() {
        Some(file) => customop::staticlib::find_for(&file, Path::new(PROFILE_DIR)),
        None => Err("cannot tell which file this extension module was loaded from (dladdr failed)".to_owned()),
    };
    found.map_err(|m| {
        errors::to_py(
            py,
            &Error::new(
                ErrorKind::Environment,
                format!(
                    "{m}\n(neuroncustomop was built in {PROFILE_DIR}: reinstall it with `pip install ./python` from the repository, or set NEURON_STATICLIB)"
                ),
            ),
        )
    })
}

/// The shared object this code was loaded from (the extension module: its
/// symbols identify the staticlib built with it).
fn this_module_file() -> Option<PathBuf> {
    // SAFETY: Dl_info is a plain C struct of pointers and integers, for
    // which all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = this_module_file as fn() -> Option<PathBuf> as *const c_void;
    // SAFETY: dladdr only looks the address up in the loader's tables and
    // fills `info`, which lives across the call.
    let rc = unsafe { libc::dladdr(addr, &mut info) };
    if rc == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: non-null dli_fname is the NUL-terminated path the loader
    // keeps for the object while it is loaded (extension modules are never
    // unloaded); it is copied at once.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes())))
}
