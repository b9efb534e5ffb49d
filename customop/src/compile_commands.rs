//! `DIR/customop-build/compile_commands.json`: the host compile of every
//! source, in the JSON compilation database format clangd and other
//! editors read (and `cargo xtask sim-bench`, which compiles its plain-loop
//! baseline exactly as a kernel is compiled).

use crate::atomic;
use crate::compiler::Compiler;
use crate::error::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One source's compile.
#[derive(Serialize)]
struct Entry {
    directory: PathBuf,
    file: PathBuf,
    arguments: Vec<String>,
}

/// Writes the database of `sources` (each with its object) compiled by
/// `cc` into `work`, whole (temporary name, then rename).
pub fn write(work: &Path, cc: &Compiler, sources: &[(PathBuf, PathBuf)]) -> Result<()> {
    let directory = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let entries: Vec<Entry> = sources
        .iter()
        .map(|(src, obj)| {
            let mut arguments = vec![cc.cxx.display().to_string()];
            arguments.extend(cc.flags.iter().cloned());
            arguments.extend(["-c".to_owned(), src.display().to_string(), "-o".to_owned(), obj.display().to_string()]);
            Entry { directory: directory.clone(), file: src.clone(), arguments }
        })
        .collect();
    let text = serde_json::to_string_pretty(&entries).map_err(|e| crate::error::Error::new(crate::error::ErrorKind::Environment, e.to_string()))?;
    atomic::write(&work.join(FILE), text.as_bytes())
}

/// The database's file name in `DIR/customop-build/`.
pub const FILE: &str = "compile_commands.json";
