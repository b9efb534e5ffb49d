//! Finding the host `libneuroncustomop.a` that belongs to the running
//! binary. One implementation, used by the `customop` library (which links
//! built kernels against it) and by the root crate's C++ integration tests
//! (`tests/cpp/mod.rs`, a dev-dependency). It needs the
//! `neuroncustomop` crate linked in, and reads symbol tables with `object`.
//!
//! Why not just `target/<profile>/libneuroncustomop.a`: cargo builds the
//! library (both crate types, `staticlib` and `rlib`) into
//! `target/<profile>/deps/libneuroncustomop-<hash>.{a,rlib}`, but copies
//! ("uplifts") the staticlib to `target/<profile>/` only when the library
//! is a root of the build (`cargo build -p neuroncustomop`). So that path
//! may be missing, or stale, or built with other features or another
//! profile. The archive that belongs to the running binary is the one
//! with the same `<hash>` as the rlib the binary links; it is recognised
//! by containing a Rust symbol of the simulator crate (`neuron-sim`, in the
//! archive through `neuroncustomop`) that the
//! binary contains (the symbol hash depends on the crate's metadata hash,
//! so another build of the crate does not match).
//!
//! Override: `NEURON_STATICLIB=/path/to/libneuroncustomop.a`.

use object::read::archive::ArchiveFile;
use object::{Object, ObjectSymbol};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The environment variable that names the staticlib explicitly.
pub const ENV_OVERRIDE: &str = "NEURON_STATICLIB";

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The names of the symbols `file` (an object or executable) defines.
fn defined<'a>(file: &'a object::File<'a>) -> impl Iterator<Item = &'a str> + 'a {
    file.symbols().filter(|s| !s.is_undefined()).filter_map(|s| s.name().ok())
}

/// A few mangled Rust symbols of the simulator crate (`neuron-sim`, which
/// `neuroncustomop` re-exports: the shell has no code of its own) that `exe`
/// defines (it links the rlib built alongside the staticlib).
fn fingerprint_symbols(exe: &Path) -> Result<HashSet<String>, String> {
    // Make sure the binary holds code of the crate, whatever its caller uses.
    std::hint::black_box(neuroncustomop::host::Simulator::new as fn() -> _);
    let bytes = read(exe)?;
    let file = object::File::parse(&*bytes).map_err(|e| format!("cannot read the symbols of {}: {e}", exe.display()))?;
    Ok(defined(&file).filter(|s| s.starts_with("_ZN10neuron_sim") && s.contains("17h")).take(8).map(str::to_owned).collect())
}

/// Whether one object of the archive `lib` defines one of `syms`.
fn defines_any(lib: &Path, syms: &HashSet<String>) -> Result<bool, String> {
    let bytes = read(lib)?;
    let archive = ArchiveFile::parse(&*bytes).map_err(|e| format!("{} is not an ar archive: {e}", lib.display()))?;
    for m in archive.members() {
        let m = m.map_err(|e| format!("{}: {e}", lib.display()))?;
        // Members that are not objects (none in a Rust staticlib) hold no symbols.
        let Ok(file) = m.data(&*bytes).and_then(object::File::parse) else { continue };
        if defined(&file).any(|s| syms.contains(s)) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The archives a cargo build may have left in `dir`: newest first,
/// the uplifted copy last.
fn candidates(dir: &Path) -> Vec<PathBuf> {
    let dir = dir.to_path_buf();
    let mut dirs = vec![dir.clone(), dir.join("deps")];
    if let Some(up) = dir.parent() {
        dirs.push(up.to_path_buf());
    }
    let mut hashed: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    let mut uplifted = Vec::new();
    for d in &dirs {
        let Ok(rd) = std::fs::read_dir(d) else { continue };
        for p in rd.filter_map(Result::ok).map(|e| e.path()) {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if n.starts_with("libneuroncustomop-") && n.ends_with(".a") {
                if let Some(t) = p.metadata().ok().and_then(|m| m.modified().ok()) {
                    hashed.push((t, p));
                }
            } else if n == "libneuroncustomop.a" {
                uplifted.push(p);
            }
        }
    }
    // Newest first: the matching one is normally the newest.
    hashed.sort_by_key(|h| std::cmp::Reverse(h.0));
    hashed.into_iter().map(|(_, p)| p).chain(uplifted).collect()
}

/// The host staticlib built together with the running binary, or the one
/// `NEURON_STATICLIB` names; a message saying what to do when there is none.
pub fn find() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the running binary: {e}"))?;
    find_for(&exe, exe.parent().unwrap_or(Path::new(".")))
}

/// As [`find`], for a binary `exe` that is not the running executable (a
/// Python extension module, installed away from the cargo build that made
/// it): the staticlib built together with `exe`, looked for in `dir`,
/// its `deps/` and its parent.
pub fn find_for(exe: &Path, dir: &Path) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(ENV_OVERRIDE) {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("{ENV_OVERRIDE}={} does not exist", p.display())) };
    }
    let found = candidates(dir);
    if found.is_empty() {
        return Err(format!(
            "the host staticlib libneuroncustomop.a was not found near {} (nor in its deps/ or parent): \
             build it with `cargo build -p neuroncustomop` (or `cargo build -p customop`), \
             or point {ENV_OVERRIDE} at it",
            dir.display()
        ));
    }
    let syms = fingerprint_symbols(exe)?;
    if syms.is_empty() {
        return Err(format!("no neuroncustomop symbols in {} to match the staticlib against: set {ENV_OVERRIDE}", exe.display()));
    }
    for c in &found {
        if defines_any(c, &syms)? {
            return Ok(c.clone());
        }
    }
    Err(format!(
        "none of the staticlibs {:?} was built together with {} (stale build?): \
         rebuild with `cargo build -p customop` or set {ENV_OVERRIDE}",
        found.iter().map(|c| c.display().to_string()).collect::<Vec<_>>(),
        exe.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GNU `ar` archive of one member that is not an object.
    fn junk_archive() -> Vec<u8> {
        let mut a = b"!<arch>\n".to_vec();
        a.extend(format!("{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", "junk.o/", 0, 0, 0, 644, 4).as_bytes());
        a.extend(b"junk");
        a
    }

    /// The staticlib built with this test binary is recognised among
    /// others; one built elsewhere (no matching symbol) is refused with a
    /// message that says what to do; an empty directory likewise.
    #[test]
    fn finds_the_archive_built_with_the_binary_and_only_it() {
        if std::env::var_os(ENV_OVERRIDE).is_some() {
            return; // The override answers before any search.
        }
        let exe = std::env::current_exe().unwrap();
        let real = find().expect("the staticlib cargo built with this test");
        // Searched: the directory, its deps/ and its parent (here empty).
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("debug");
        std::fs::create_dir_all(dir.join("deps")).unwrap();
        assert!(find_for(&exe, &dir).unwrap_err().contains("was not found near"));
        std::fs::write(dir.join("libneuroncustomop-0000000000000000.a"), junk_archive()).unwrap();
        let e = find_for(&exe, &dir).unwrap_err();
        assert!(e.contains("none of the staticlibs") && e.contains("stale build?"), "{e}");
        let copy = dir.join("deps").join("libneuroncustomop-1111111111111111.a");
        std::fs::copy(&real, &copy).unwrap();
        assert_eq!(find_for(&exe, &dir).unwrap(), copy);
    }
}
