//! Finding the host `libneuroncustomop.a` that belongs to the running
//! binary. One implementation, used by the `customop` library (which links
//! built kernels against it) and, through a `#[path]` module, by the root
//! crate's C++ integration tests (`tests/cpp/staticlib.rs`). It depends on
//! `std` and on the `neuroncustomop` crate being linked in, nothing else.
//!
//! Why not just `target/<profile>/libneuroncustomop.a`: cargo builds the
//! library (both crate types, `staticlib` and `rlib`) into
//! `target/<profile>/deps/libneuroncustomop-<hash>.{a,rlib}`, but copies
//! ("uplifts") the staticlib to `target/<profile>/` only when the library
//! is a root of the build (`cargo build -p neuroncustomop`). So that path
//! may be missing, or stale, or built with other features or another
//! profile. The archive that belongs to the running binary is the one
//! with the same `<hash>` as the rlib the binary links; it is recognised
//! by containing a Rust symbol of the simulator crate (`neuron-sim`, which
//! `neuroncustomop` re-exports and its archive holds) that the binary
//! contains (the symbol hash depends on the crate's metadata hash, so
//! another build of the crate does not match).
//!
//! Override: `NEURON_STATICLIB=/path/to/libneuroncustomop.a`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable that names the staticlib explicitly.
pub const ENV_OVERRIDE: &str = "NEURON_STATICLIB";

fn nm_defined(path: &Path) -> Result<Vec<String>, String> {
    let out = Command::new("nm").arg("--defined-only").arg(path).output().map_err(|e| format!("cannot run nm (binutils) on {}: {e}", path.display()))?;
    if !out.status.success() {
        return Err(format!("nm {} failed: {}", path.display(), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect())
}

/// A few mangled Rust symbols of the simulator crate that `exe` defines
/// (it links the rlibs built alongside the staticlib; `neuroncustomop`
/// itself only re-exports, so it has no code of its own).
fn fingerprint_symbols(exe: &Path) -> Result<Vec<String>, String> {
    // Make sure the binary holds code of the crate, whatever its caller uses.
    std::hint::black_box(neuroncustomop::host::Simulator::new as fn() -> _);
    Ok(nm_defined(exe)?
        .into_iter()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_owned))
        .filter(|s| s.starts_with("_ZN10neuron_sim") && s.contains("17h"))
        .take(8)
        .collect())
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
        let defined = nm_defined(c)?;
        if syms.iter().any(|s| defined.iter().any(|l| l.ends_with(s.as_str()))) {
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
