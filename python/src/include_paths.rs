//! `neuroncustomop.include_paths()`: the directories a kernel author's own
//! build or editor puts on its include path for `<torch/torch.h>` and the
//! rest of the kernel headers, as `torch.utils.cpp_extension.include_paths()`
//! gives PyTorch's (`NEURON_INCLUDE` overrides, as for `load`).

use pyo3::prelude::*;
use std::path::PathBuf;

/// The kernel headers' directories (one today), absolute.
#[pyfunction]
pub fn include_paths() -> Vec<PathBuf> {
    let dir = customop::build::include_dir(None);
    vec![std::fs::canonicalize(&dir).unwrap_or(dir)]
}
