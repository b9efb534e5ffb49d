//! `customop build`: scan the sources, generate the wrapper and shape
//! entry, compile (with the cache), link, record the schema.

use crate::atomic;
use crate::cache;
use crate::codegen;
use crate::compiler::{Compiler, Outcome};
use crate::error::{Error, ErrorKind, Result};
use crate::link;
use crate::scan::{self, Source};
use crate::schema::{Schema, Target, SCHEMA_VERSION};
use crate::workdir::BuildDir;
use crate::xtensa::devlib::{self, Runtime};
use crate::xtensa::toolchain::Toolchain;
use crate::xtensa::{check, images};
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
    /// Extra linker flags for the host library (`-L`, `-l`, ...), after
    /// the objects.
    pub ldflags: Vec<String>,
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
    /// The shared object (sim and qemu targets; for q7 the first image).
    pub library: PathBuf,
    /// The device images (q7, qemu), each with its stripped copy if any.
    pub images: Vec<(PathBuf, Option<PathBuf>)>,
    /// Each device source and whether it was compiled or cached.
    pub device_objects: Vec<(PathBuf, Outcome)>,
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

/// The longest `--name` (it becomes file names and C symbols).
pub const MAX_NAME: usize = 64;

/// Checks a library name: a C identifier of at most [`MAX_NAME`] characters.
pub fn check_name(name: &str) -> Result<()> {
    let ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(Error::new(ErrorKind::Usage, format!("--name `{name}`: give a C identifier (letters, digits and `_`, not starting with a digit)")));
    }
    if name.len() > MAX_NAME {
        return Err(Error::new(ErrorKind::Usage, format!("--name is {} characters long: at most {MAX_NAME}", name.len())));
    }
    Ok(())
}

/// The files a build puts directly in the build directory.
fn products(o: &BuildOptions, library_file: &str) -> Vec<String> {
    let mut p = vec![crate::schema::SCHEMA_FILE.to_owned()];
    if o.target != Target::Q7 {
        p.push(library_file.to_owned());
    }
    if o.target != Target::Sim {
        p.extend(images::products(o.target == Target::Q7, &o.name, o.multicore));
    }
    p
}

/// Builds a library.
pub fn build(o: &BuildOptions) -> Result<BuildOutcome> {
    check_name(&o.name)?;
    if o.compute.is_empty() || o.shape.is_empty() {
        return Err(Error::new(ErrorKind::Usage, "give at least one --compute source and one --shape source"));
    }
    let shapes = o.shape.iter().cloned().map(Source::read).collect::<Result<Vec<_>>>()?;
    let computes = o.compute.iter().cloned().map(Source::read).collect::<Result<Vec<_>>>()?;
    let mut defines = scan::defines(&o.cflags);
    if o.multicore {
        defines.push("CUSTOMOP_MULTICORE=1".into());
    }
    let scanned = scan::scan_with(&shapes, &computes, &defines)?;
    let library_file = match o.target {
        Target::Q7 if o.multicore => format!("{}_cpu0.elf", o.name),
        Target::Q7 => format!("{}.elf", o.name),
        _ => format!("lib{}.so", o.name),
    };
    let schema = Schema {
        version: SCHEMA_VERSION,
        name: o.name.clone(),
        libraries: scanned.libraries,
        target: o.target,
        multicore: o.multicore,
        ops: scanned.ops,
        library_file: library_file.clone(),
        images: Vec::new(),
        library_size: 0,
        library_hash: String::new(),
    };
    // Held until the build returns: one build of this directory at a time.
    let mut bd = BuildDir::open(&o.out)?;
    bd.claim(&products(o, &library_file))?;
    let objdir = bd.work().join("obj");
    crate::workdir::create(&objdir)?;
    let gen_ops = bd.work().join(codegen::OPS_SOURCE);
    let gen_shapes = bd.work().join(codegen::SHAPES_SOURCE);
    atomic::write_if_changed(&gen_ops, &codegen::ops_source(&schema))?;
    atomic::write_if_changed(&gen_shapes, &codegen::shapes_source(&schema))?;

    let mut cflags = o.cflags.clone();
    if o.multicore {
        cflags.push("-DCUSTOMOP_MULTICORE=1".into());
    }
    let include = include_dir(o.include.as_deref());
    let (mut outcomes, mut linked, mut library) = (Vec::new(), false, o.out.join(&library_file));
    let mut schema = schema;
    if o.target != Target::Q7 {
        library = bd.product(&library_file);
        (outcomes, linked) = host_build(o, &bd, &cflags, &include, &objdir, &gen_ops, &gen_shapes, &library)?;
        let bytes = std::fs::read(&library).map_err(|e| Error::io("read", &library, e))?;
        schema.library_size = bytes.len() as u64;
        schema.library_hash = crate::integrity::digest(&bytes);
    }
    let (mut images, mut device_objects) = (Vec::new(), Vec::new());
    if o.target != Target::Sim {
        let d = device_build(o, &bd, &schema, &cflags, &include, &objdir, &gen_ops)?;
        device_objects = d.objects;
        images = d.images;
        schema.images = images.iter().map(|(p, _)| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()).collect();
        if o.target == Target::Q7 {
            library = images[0].0.clone();
        }
    }
    schema.save(&o.out)?;
    Ok(BuildOutcome { schema, objects: outcomes, linked, library, images, device_objects })
}

/// The simulator build: every source with the host compiler, one shared
/// object with the host staticlib. Returns each source's outcome and
/// whether the library was relinked.
#[allow(clippy::too_many_arguments)]
fn host_build(
    o: &BuildOptions,
    bd: &BuildDir,
    cflags: &[String],
    include: &Path,
    objdir: &Path,
    gen_ops: &Path,
    gen_shapes: &Path,
    library: &Path,
) -> Result<(Vec<(PathBuf, Outcome)>, bool)> {
    let staticlib = match &o.staticlib {
        Some(p) if p.is_file() => p.clone(),
        Some(p) => return Err(Error::new(ErrorKind::Environment, format!("--staticlib {} does not exist", p.display()))),
        None => crate::staticlib::find().map_err(|m| Error::new(ErrorKind::Environment, m))?,
    };
    let cc = Compiler::host(include, cflags);
    let mut sources: Vec<PathBuf> = Vec::new();
    for s in o.compute.iter().chain(&o.shape).chain([&gen_ops.to_path_buf(), &gen_shapes.to_path_buf()]) {
        if !sources.contains(s) {
            sources.push(s.clone());
        }
    }
    let compiles: Vec<(PathBuf, PathBuf)> = sources.iter().map(|s| (s.clone(), objdir.join(object_name(s)))).collect();
    crate::compile_commands::write(bd.work(), &cc, &compiles)?;
    let mut objects = Vec::new();
    let mut outcomes = Vec::new();
    for (s, obj) in &compiles {
        let obj = obj.clone();
        outcomes.push((s.clone(), cc.compile(s, &obj)?));
        // The kernel's malloc/new: the core's libc heap (SPEC §12).
        objects.push(if o.compute.contains(s) { crate::kernel_heap::redirect(&obj)? } else { obj });
    }
    // Relink when an object, the staticlib or the flags changed.
    // The staticlib (tens of MB) counts by size and mtime, not content.
    let meta = std::fs::metadata(&staticlib).map_err(|e| Error::io("read", &staticlib, e))?;
    let mtime = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
    let mut key = cache::hash_str(&format!("{} {} {mtime}", staticlib.display(), meta.len()));
    // The flags and the set of objects (a source added or dropped relinks).
    for f in cc.flags.iter().chain(&o.ldflags).map(String::as_str).chain(objects.iter().filter_map(|o| o.to_str())) {
        key = cache::fnv1a(key, f.as_bytes());
        key = cache::fnv1a(key, &[0]);
    }
    // The entry points exported (a tool that looks up a new one relinks).
    key = cache::fnv1a(key, crate::link::EXPORTS.join(",").as_bytes());
    // The C math names bound to the device's libm (a name added relinks).
    key = cache::fnv1a(key, crate::link::math_assignments().as_bytes());
    let link_stamp = objdir.join("link.stamp");
    let inputs: Vec<(PathBuf, u64)> = objects.iter().filter_map(|p| cache::hash_file(p).map(|h| (p.clone(), h))).collect();
    let linked = if cache::Stamp::is_current(&link_stamp, key, library, &objects) {
        false
    } else {
        let _ = std::fs::remove_file(&link_stamp);
        // Linked under a temporary name, renamed over the old library
        // only once whole: a failed or killed link keeps the last good one.
        let tmp = atomic::temp_in(&bd.tmp(), "lib-", ".so")?;
        link::shared_object(&cc, bd.work(), &objects, &o.ldflags, &staticlib, &tmp)?;
        let output = cache::hash_file(&tmp).ok_or_else(|| Error::new(ErrorKind::Compile, format!("linking {} wrote nothing", library.display())))?;
        atomic::persist(tmp, library)?;
        atomic::write(&link_stamp, cache::Stamp { command: key, output, inputs }.render().as_bytes())?;
        true
    };
    Ok((outcomes, linked))
}

/// What the device build made.
struct Device {
    objects: Vec<(PathBuf, Outcome)>,
    images: Vec<(PathBuf, Option<PathBuf>)>,
}

/// The device build: the compute sources and the generated `ops.cpp`
/// (the kernel side; shape sources are host code) compiled once for
/// Xtensa, then linked into the FLL images (q7, checked) or the emulated
/// cluster's image (qemu).
fn device_build(o: &BuildOptions, bd: &BuildDir, schema: &Schema, cflags: &[String], include: &Path, objdir: &Path, gen_ops: &Path) -> Result<Device> {
    let tc = Toolchain::find()?;
    let flags = tc.flags(include, cflags);
    let xdir = objdir.join("xtensa");
    crate::workdir::create(&xdir)?;
    let mut sources: Vec<PathBuf> = Vec::new();
    for s in o.compute.iter().chain([&gen_ops.to_path_buf()]) {
        if !sources.contains(s) {
            sources.push(s.clone());
        }
    }
    let (mut objects, mut outcomes) = (Vec::new(), Vec::new());
    for s in &sources {
        let obj = xdir.join(object_name(s));
        outcomes.push((s.clone(), tc.compile(&flags, s, &obj)?));
        if Toolchain::has_global_constructors(&obj) {
            return Err(Error::new(
                ErrorKind::Compile,
                format!(
                    "{}: a global object needs code run when the image loads (a namespace-scope object whose constructor is not \
                     constexpr, e.g. a class with a constructor, or one with a destructor, e.g. a global std::vector): the device image \
                     does not run global constructors (the simulator does), so on the device it would hold zeros. Make it a \
                     function-local `static` (built on first use) or constexpr",
                    s.display()
                ),
            ));
        }
        objects.push(obj);
    }
    // The few libc++ sources the kernel needs, with the kernel's flags but
    // the language level libc++ is written in (its sources use C++20 and
    // later; what they define does not depend on the level).
    let mut lib_flags = flags.clone();
    lib_flags.push("-std=c++23".into());
    for s in tc.libcxx_sources_for(&objects) {
        let obj = xdir.join(format!("libcxx-{}", object_name(&s)));
        tc.compile(&lib_flags, &s, &obj)?;
        objects.push(obj);
    }
    let images = if o.target == Target::Q7 {
        let rt = devlib::archive(Runtime::Fll)?;
        let imgs = images::q7(&o.out, bd.work(), &o.name, o.multicore, &objects, &rt)?;
        let mut symbols: Vec<String> =
            ["register_funcs", "get_func_ptr", "customop_setup", "customop_cleanup", "switch_stack_or_call_wrapper"].iter().map(|s| (*s).to_owned()).collect();
        // Every launcher of the generated op table (`<fn>_stack_switch`).
        for op in &schema.ops {
            let l = format!("{}_stack_switch", op.compute_fn);
            if !symbols.contains(&l) {
                symbols.push(l);
            }
        }
        let syms: Vec<&str> = symbols.iter().map(String::as_str).collect();
        let problems = check::fll(&imgs, &syms);
        if !problems.is_empty() {
            return Err(Error::new(ErrorKind::Compile, format!("the FLL images are not laid out correctly:\n  {}", problems.join("\n  "))));
        }
        imgs.into_iter().map(|i| (i.path, i.stripped)).collect()
    } else {
        let rt = devlib::archive(Runtime::Qemu)?;
        let img = images::qemu(&o.out, bd.work(), &o.name, &objects, &rt)?;
        vec![(img.path, None)]
    };
    Ok(Device { objects: outcomes, images })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_a_c_identifier_of_at_most_64_characters() {
        assert!(check_name("relu_2").is_ok() && check_name(&"a".repeat(64)).is_ok());
        assert!(check_name(&"a".repeat(300)).unwrap_err().message.contains("--name is 300 characters long: at most 64"));
        for bad in ["", "2relu", "my-op", "a b"] {
            assert!(check_name(bad).unwrap_err().message.contains("give a C identifier"), "{bad}");
        }
    }
}
