//! `customop ops DIR`: what a built library holds, from its schema (the
//! library is not loaded): each op with the compute function's signature,
//! its shape function and where `NEURON_LIBRARY` declares it.

use crate::error::Result;
use crate::schema::Schema;
use std::fmt::Write as _;
use std::path::Path;

/// The listing of the build directory `dir`.
pub fn describe(dir: &Path) -> Result<String> {
    let _hold = crate::workdir::read_lock(dir)?;
    let s = Schema::load(dir)?;
    let mut out = String::new();
    let cores = if s.multicore { "multicore (8 cores)" } else { "single-core" };
    let _ = writeln!(
        out,
        "{}: {} (target {}, {cores}; torch.ops.{}), {} op(s):",
        dir.display(),
        s.library_file,
        s.target.name(),
        s.libraries.join(", torch.ops."),
        s.ops.len()
    );
    for op in &s.ops {
        let params: Vec<&str> = op.params.iter().map(|p| p.cpp_type.as_str()).collect();
        let _ = writeln!(out, "  {}({}) -> torch::Tensor", op.name, params.join(", "));
        let _ = writeln!(out, "      compute {}, shape {}, declared at {}", op.compute_fn, op.shape_fn, op.declared_at);
    }
    Ok(out)
}
