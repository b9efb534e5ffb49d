//! `customop build`: scan the sources, generate the wrapper and shape
//! entry, compile (with the cache), link, record the schema.

use crate::cache;
use crate::codegen;
use crate::compiler::{Compiler, Outcome};
use crate::error::{Error, ErrorKind, Result};
use crate::link;
use crate::scan::{self, Source};
use crate::schema::{Schema, Target, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

/// What to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The library's name (`lib<NAME>.so`).
    pub name: String,
    /// Compute sources.
    pub compute: Vec<PathBuf>,
    /// Shape sources (with `NEURON_LIBRARY`).
    pub shape: Vec<PathBuf>,
    /// `--multicore`.
    pub multicore: bool,
    /// `--target`.
    pub target: Target,
    /// The build directory.
    pub out: PathBuf,
    /// Extra compiler flags.
    pub cflags: Vec<String>,
    /// The host staticlib (default: found, see [`crate::staticlib`]).
    pub staticlib: Option<PathBuf>,
    /// The headers' directory (default: `NEURON_INCLUDE`, else the
    /// repository's `include/`).
    pub include: Option<PathBuf>,
}

/// What a build did.
#[derive(Clone, Debug)]
pub struct BuildOutcome {
    /// The schema written.
    pub schema: Schema,
    /// Each source and whether it was compiled or cached.
    pub objects: Vec<(PathBuf, Outcome)>,
    /// Whether the shared object was linked (false: it was current).
    pub linked: bool,
    /// The shared object.
    pub library: PathBuf,
}

/// The headers' directory: `NEURON_INCLUDE`, else the repository's.
pub fn include_dir(opt: Option<&Path>) -> PathBuf {
    opt.map(Path::to_path_buf)
        .or_else(|| std::env::var_os("NEURON_INCLUDE").map(PathBuf::from))
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../include"))
}

fn object_name(src: &Path) -> String {
    let abs = std::fs::canonicalize(src).unwrap_or_else(|_| src.to_path_buf());
    let stem = src.file_stem().and_then(|s| s.to_str()).unwrap_or("src");
    format!("{stem}-{:08x}.o", cache::hash_str(&abs.display().to_string()) as u32)
}

fn write_if_changed(path: &Path, text: &str) -> Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| Error::io("write", path, e))
}

/// Builds a library.
pub fn build(o: &BuildOptions) -> Result<BuildOutcome> {
    if o.name.is_empty() || !o.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Error::new(ErrorKind::Usage, format!("--name `{}`: use letters, digits and `_`", o.name)));
    }
    if o.target != Target::Sim {
        return Err(Error::new(
            ErrorKind::NotYet,
            format!("--target {}: not yet supported (this version builds for the host simulator, --target sim)", o.target.name()),
        ));
    }
    if o.compute.is_empty() || o.shape.is_empty() {
        return Err(Error::new(ErrorKind::Usage, "give at least one --compute source and one --shape source"));
    }
    let shapes = o.shape.iter().cloned().map(Source::read).collect::<Result<Vec<_>>>()?;
    let computes = o.compute.iter().cloned().map(Source::read).collect::<Result<Vec<_>>>()?;
    let scanned = scan::scan(&shapes, &computes)?;
    let library_file = format!("lib{}.so", o.name);
    let schema = Schema {
        version: SCHEMA_VERSION,
        name: o.name.clone(),
        libraries: scanned.libraries,
        target: o.target,
        multicore: o.multicore,
        ops: scanned.ops,
        library_file: library_file.clone(),
    };
    let objdir = o.out.join("obj");
    std::fs::create_dir_all(&objdir).map_err(|e| Error::io("create", &objdir, e))?;
    let gen_ops = o.out.join(codegen::OPS_SOURCE);
    let gen_shapes = o.out.join(codegen::SHAPES_SOURCE);
    write_if_changed(&gen_ops, &codegen::ops_source(&schema))?;
    write_if_changed(&gen_shapes, &codegen::shapes_source(&schema))?;

    let staticlib = match &o.staticlib {
        Some(p) if p.is_file() => p.clone(),
        Some(p) => return Err(Error::new(ErrorKind::Environment, format!("--staticlib {} does not exist", p.display()))),
        None => crate::staticlib::find().map_err(|m| Error::new(ErrorKind::Environment, m))?,
    };
    let mut cflags = o.cflags.clone();
    if o.multicore {
        cflags.push("-DCUSTOMOP_MULTICORE=1".into());
    }
    let cc = Compiler::host(&include_dir(o.include.as_deref()), &cflags);
    let mut sources: Vec<PathBuf> = Vec::new();
    for s in o.compute.iter().chain(&o.shape).chain([&gen_ops, &gen_shapes]) {
        if !sources.contains(s) {
            sources.push(s.clone());
        }
    }
    let mut objects = Vec::new();
    let mut outcomes = Vec::new();
    for s in &sources {
        let obj = objdir.join(object_name(s));
        outcomes.push((s.clone(), cc.compile(s, &obj)?));
        objects.push(obj);
    }
    // Relink when an object, the staticlib or the flags changed.
    let library = o.out.join(&library_file);
    // The staticlib (tens of MB) counts by size and mtime, not content.
    let meta = std::fs::metadata(&staticlib).map_err(|e| Error::io("read", &staticlib, e))?;
    let mtime = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
    let mut key = cache::hash_str(&format!("{} {} {mtime}", staticlib.display(), meta.len()));
    // The flags and the set of objects (a source added or dropped relinks).
    for f in cc.flags.iter().map(String::as_str).chain(objects.iter().filter_map(|o| o.to_str())) {
        key = cache::fnv1a(key, f.as_bytes());
        key = cache::fnv1a(key, &[0]);
    }
    let link_stamp = objdir.join("link.stamp");
    let inputs: Vec<(PathBuf, u64)> = objects.iter().filter_map(|p| cache::hash_file(p).map(|h| (p.clone(), h))).collect();
    let linked = if library.is_file() && cache::Stamp::is_current(&link_stamp, key) {
        false
    } else {
        let _ = std::fs::remove_file(&link_stamp);
        link::shared_object(&cc, &o.out, &objects, &staticlib, &library)?;
        std::fs::write(&link_stamp, cache::Stamp { command: key, inputs }.render()).map_err(|e| Error::io("write", &link_stamp, e))?;
        true
    };
    schema.save(&o.out)?;
    Ok(BuildOutcome { schema, objects: outcomes, linked, library })
}
