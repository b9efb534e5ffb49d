//! The built libraries this process has loaded, kept current: a library
//! rebuilt since it was loaded (a Python session that builds, runs,
//! edits, rebuilds and runs again) is loaded anew.
//!
//! Why a copy: the dynamic loader hands back the object already loaded
//! under the same path name without looking at the file again, and a
//! loaded object is never unloaded (see `dylib`). So a changed file is
//! copied to a fresh name beside it, loaded from there, and the copy
//! unlinked at once (the mapping stays).

use crate::dylib::Library;
use crate::error::{Error, Result};
use crate::sim::SimApi;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// What identifies a file's contents cheaply: device, inode, size, mtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId(u64, u64, u64, i64, i64);

impl FileId {
    fn of(path: &Path) -> Result<Self> {
        let m = std::fs::metadata(path).map_err(|e| Error::io("read", path, e))?;
        Ok(Self(m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
    }
}

type Loaded = HashMap<PathBuf, (FileId, SimApi)>;

fn loaded() -> &'static Mutex<Loaded> {
    static LOADED: OnceLock<Mutex<Loaded>> = OnceLock::new();
    LOADED.get_or_init(Default::default)
}

/// The simulator API of the library at `path`, loading it (again, if the
/// file changed since this process loaded it) once it matches the `size`
/// and `hash` its build recorded ([`crate::integrity`]).
pub fn api(path: &Path, size: u64, hash: &str) -> Result<SimApi> {
    let key = std::fs::canonicalize(path).map_err(|e| Error::io("read", path, e))?;
    let id = FileId::of(&key)?;
    let mut map = loaded().lock().unwrap_or_else(|e| e.into_inner());
    if let Some((seen, api)) = map.get(&key) {
        if *seen == id {
            return Ok(*api);
        }
    }
    let api = if map.contains_key(&key) {
        // Loaded before, changed since: from a fresh name.
        static COPIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!(".{}.{}.{n}.so", key.file_name().and_then(|s| s.to_str()).unwrap_or("lib"), std::process::id());
        let copy = key.with_file_name(name);
        // The bytes verified, not the file read again.
        let written = std::fs::File::create(&copy).map_err(|e| Error::io("copy", &copy, e)).and_then(|mut f| {
            use std::io::Write;
            crate::integrity::verify(&key, size, hash, |b| f.write_all(b).map_err(|e| Error::io("copy", &copy, e)))
        });
        let lib = written.and_then(|()| Library::open(&copy));
        let _ = std::fs::remove_file(&copy);
        load_api(lib?)?
    } else {
        crate::integrity::verify(&key, size, hash, |_| Ok(()))?;
        load_api(Library::open(&key)?)?
    };
    map.insert(key, (id, api));
    Ok(api)
}

fn load_api(lib: Library) -> Result<SimApi> {
    let api = SimApi::load(&lib)?;
    // Never unloaded (see dylib): the API's pointers stay valid.
    std::mem::forget(lib);
    Ok(api)
}
