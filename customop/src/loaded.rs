//! The built libraries this process has loaded, kept current: a library
//! rebuilt since it was loaded (a Python session that builds, runs,
//! edits, rebuilds and runs again) is loaded anew.
//!
//! The file is opened once: its identity, its hash and what the loader
//! maps all come from that one descriptor (`/proc/PID/fd/N`,
//! [`Library::open_file`]), so a file swapped in after the check is never
//! loaded.
//!
//! Why a copy: the dynamic loader hands back the object already loaded
//! under the same file (device and inode) without looking at its bytes
//! again, and a loaded object is never unloaded (see `dylib`). So a file
//! loaded before and changed since is copied, as it is verified, into a
//! fresh anonymous file beside it (`O_TMPFILE`, 0600: no name anyone could
//! plant or open) and loaded from there.

use crate::dylib::Library;
use crate::error::{Error, Result};
use crate::sim::SimApi;
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// What identifies a file's contents cheaply: device, inode, size, mtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId(u64, u64, u64, i64, i64);

impl FileId {
    fn of(f: &File, path: &Path) -> Result<Self> {
        let m = f.metadata().map_err(|e| Error::io("read", path, e))?;
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
    // Without blocking: a FIFO planted under the library's name is refused
    // by the check (not a regular file), not waited on.
    let mut file =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open(&key).map_err(|e| Error::io("read", &key, e))?;
    let id = FileId::of(&file, &key)?;
    let mut map = loaded().lock().unwrap_or_else(|e| e.into_inner());
    if let Some((seen, api)) = map.get(&key) {
        if *seen == id {
            return Ok(*api);
        }
    }
    let lib = if map.contains_key(&key) {
        // Loaded before, changed since: the bytes verified, copied into a
        // fresh file as they are read.
        let dir = key.parent().unwrap_or(Path::new("/"));
        let mut copy = tempfile::tempfile_in(dir).map_err(|e| Error::io("make a private copy of the library in", dir, e))?;
        crate::integrity::verify(&mut file, &key, size, hash, |b| copy.write_all(b).map_err(|e| Error::io("copy", &key, e)))?;
        Library::open_file(copy, &key)?
    } else {
        crate::integrity::verify(&mut file, &key, size, hash, |_| Ok(()))?;
        Library::open_file(file, &key)?
    };
    let api = load_api(lib)?;
    map.insert(key, (id, api));
    Ok(api)
}

fn load_api(lib: Library) -> Result<SimApi> {
    let api = SimApi::load(&lib)?;
    // Never unloaded (see dylib): the API's pointers stay valid.
    std::mem::forget(lib);
    Ok(api)
}
