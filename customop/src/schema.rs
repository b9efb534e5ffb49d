//! The schema of a built library: its ops, each op's compute and shape
//! function and argument kinds, the target, multicore. `build` writes it
//! to `DIR/customop.json`; `run` (and later the Python package) reads it.

use crate::error::{Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file in the build directory that holds the schema.
pub const SCHEMA_FILE: &str = "customop.json";
/// Version of the schema file's layout.
pub const SCHEMA_VERSION: u32 = 2;
/// At most this many ops per library (SPEC §10).
pub const MAX_OPS: usize = 10;
/// At most this many arguments per op (SPEC §6).
pub const MAX_ARGS: usize = 10;

/// An argument kind, as the invocation block codes it (SPEC §6): the
/// runtime's, spelled in `customop.json` in snake case (`long_long`).
pub use neuron_runtime::marshal::ArgKind;

/// One parameter of a compute function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    /// How it is marshalled.
    pub kind: ArgKind,
    /// Its type, spelled canonically (`const torch::Tensor&`, `int64_t`):
    /// the generated wrapper declares the compute function with it, so it
    /// must name the same C++ type the source does.
    pub cpp_type: String,
}

impl Param {
    /// The `customop_next_*` reader for this parameter.
    pub fn reader(&self) -> &'static str {
        match self.kind {
            ArgKind::Tensor => "customop_next_tensor",
            ArgKind::Scalar => "customop_next_scalar",
            ArgKind::Int => "customop_next_int",
            ArgKind::Float => "customop_next_float",
            ArgKind::Double => "customop_next_double",
            ArgKind::LongLong if self.cpp_type.contains("long long") => "customop_next_long_long",
            ArgKind::LongLong => "customop_next_int64",
        }
    }
}

/// One op.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Op {
    /// The op's name (the first argument of `m.def`): what `run` takes.
    pub name: String,
    /// The compute function (in the compute sources).
    pub compute_fn: String,
    /// The shape function (in the shape sources).
    pub shape_fn: String,
    /// The compute function's parameters, in declared order.
    pub params: Vec<Param>,
    /// Where the op was declared (`shape.cpp:12`).
    pub declared_at: String,
}

/// What `customop build` targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// The host simulator: one shared object with the kernel, the shape
    /// functions and the host library.
    Sim,
    /// The emulated Xtensa cluster under QEMU: one image for every core,
    /// plus the simulator build of the same sources (`run --on both`).
    Qemu,
    /// The Q7 device: per-core FLL images (or one single-core image).
    Q7,
}

impl Target {
    /// Parses `sim`, `qemu`, `q7`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "sim" => Ok(Self::Sim),
            "qemu" => Ok(Self::Qemu),
            "q7" => Ok(Self::Q7),
            _ => Err(Error::new(ErrorKind::Usage, format!("unknown target `{s}` (expected sim, qemu or q7)"))),
        }
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sim => "sim",
            Self::Qemu => "qemu",
            Self::Q7 => "q7",
        }
    }
}

/// A built library's schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schema {
    /// [`SCHEMA_VERSION`].
    pub version: u32,
    /// The `--name`.
    pub name: String,
    /// The `NEURON_LIBRARY` names of the shape sources.
    pub libraries: Vec<String>,
    /// The target built for.
    pub target: Target,
    /// Built with `--multicore`: `run` defaults to 8 cores.
    pub multicore: bool,
    /// The ops, in table order (`get_func_name(i)`).
    pub ops: Vec<Op>,
    /// The built library, relative to the build directory (for q7 the
    /// first FLL image).
    pub library_file: String,
    /// The device images, relative to the build directory: the FLL images
    /// (q7) or the emulated cluster's image (qemu); none for sim.
    #[serde(default)]
    pub images: Vec<String>,
    /// The size of `library_file` as built (sim and qemu targets).
    #[serde(default)]
    pub library_size: u64,
    /// Its content hash ([`crate::integrity::digest`]), checked before
    /// it is loaded.
    #[serde(default)]
    pub library_hash: String,
}

impl Schema {
    /// The op called `name`.
    pub fn op(&self, name: &str) -> Result<&Op> {
        self.ops.iter().find(|o| o.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.ops.iter().map(|o| o.name.as_str()).collect();
            Error::new(ErrorKind::BadInput, format!("library `{}` has no op `{name}` (its ops: {})", self.name, names.join(", ")))
        })
    }

    /// Writes `dir/customop.json`.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let path = dir.join(SCHEMA_FILE);
        let text = serde_json::to_string_pretty(self).expect("a schema serialises");
        crate::atomic::write(&path, (text + "\n").as_bytes())
    }

    /// Reads `dir/customop.json`.
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join(SCHEMA_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::new(ErrorKind::BadInput, format!("{} is not a build directory of `customop build`: cannot read {}: {e}", dir.display(), path.display()))
        })?;
        Self::parse(&path, &text)
    }

    /// Parses a schema file's text (`path` names it in messages).
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        let s: Self = serde_json::from_str(text).map_err(|e| Error::new(ErrorKind::BadInput, format!("{} is not a valid schema: {e}", path.display())))?;
        if s.version != SCHEMA_VERSION {
            return Err(Error::new(
                ErrorKind::BadInput,
                format!("{} has schema version {}, this tool reads {SCHEMA_VERSION}: rebuild with `customop build`", path.display(), s.version),
            ));
        }
        let invalid = |what: String| Error::new(ErrorKind::BadInput, format!("{} is not a valid schema: {what}", path.display()));
        // Files the schema names are in the build directory itself.
        for f in std::iter::once(&s.library_file).chain(&s.images) {
            if f.is_empty() || f.contains('/') || f == ".." || f == "." {
                return Err(invalid(format!("`{f}` is not a file name in the build directory")));
            }
        }
        if s.ops.is_empty() || s.ops.len() > MAX_OPS {
            return Err(invalid(format!("{} ops (1 to {MAX_OPS})", s.ops.len())));
        }
        if let Some(op) = s.ops.iter().find(|o| o.params.len() > MAX_ARGS) {
            return Err(invalid(format!("op `{}` has {} arguments (at most {MAX_ARGS})", op.name, op.params.len())));
        }
        if s.target != Target::Q7 && s.library_hash.is_empty() {
            return Err(invalid(String::from("no library_hash (built by an older customop: rebuild)")));
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `customop.json` spells the runtime's kinds in snake case, and the
    /// codes the tools marshal are the invocation block's.
    #[test]
    fn arg_kinds_keep_their_json_names_and_codes() {
        let all = [
            (ArgKind::Tensor, "tensor", 1),
            (ArgKind::Scalar, "scalar", 2),
            (ArgKind::Int, "int", 3),
            (ArgKind::Float, "float", 4),
            (ArgKind::LongLong, "long_long", 5),
            (ArgKind::Double, "double", 6),
        ];
        for (k, name, code) in all {
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<ArgKind>(&format!("\"{name}\"")).unwrap(), k);
            assert_eq!((k.code(), ArgKind::from_code(code)), (code, Some(k)));
        }
        assert!(serde_json::from_str::<ArgKind>("\"LongLong\"").is_err());
    }
}
