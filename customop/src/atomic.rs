//! Files that appear whole or not at all: written under a temporary name
//! in the destination's directory, flushed, then renamed over the old
//! file. A failure (a full disk, a kill) leaves the previous file as it
//! was and at worst a stray temporary, never a truncated file under the
//! real name.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;
use tempfile::{Builder, TempPath};

/// The directory `path` is in (`.` for a bare name).
pub fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A fresh, unique temporary file in `dir` (removed when dropped unless
/// persisted): for a tool (compiler, linker) to write.
pub fn temp_in(dir: &Path, prefix: &str, suffix: &str) -> Result<TempPath> {
    Builder::new()
        .prefix(prefix)
        .suffix(suffix)
        .tempfile_in(dir)
        .map(tempfile::NamedTempFile::into_temp_path)
        .map_err(|e| Error::io("create a file in", dir, e))
}

/// Renames a finished temporary to `path`. A temporary is created 0600
/// and tools writing into it keep that: the product gets the usual
/// 0755 (if the tool made it executable: a library, an image) or 0644.
pub fn persist(tmp: TempPath, path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let exec = std::fs::metadata(&tmp).is_ok_and(|m| m.permissions().mode() & 0o100 != 0);
    let mode = if exec { 0o755 } else { 0o644 };
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode)).map_err(|e| Error::io("write", path, e))?;
    tmp.persist(path).map_err(|e| Error::io("write", path, e.error))
}

/// Writes `bytes` to `path` atomically.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = parent(path);
    let name = path.file_name().map(|n| format!(".{}.", n.to_string_lossy())).unwrap_or_default();
    let mut f = Builder::new().prefix(&name).suffix(".tmp").tempfile_in(dir).map_err(|e| Error::io("write", path, e))?;
    f.write_all(bytes).and_then(|()| f.as_file().sync_data()).map_err(|e| Error::io("write", path, e))?;
    // Keep an existing file's permissions (a user's 0644 output stays so).
    if let Ok(m) = std::fs::metadata(path) {
        let _ = f.as_file().set_permissions(m.permissions());
    } else {
        use std::os::unix::fs::PermissionsExt;
        let _ = f.as_file().set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    f.persist(path).map(|_| ()).map_err(|e| Error::io("write", path, e.error))
}

/// Writes `text` to `path` atomically unless it already holds it.
pub fn write_if_changed(path: &Path, text: &str) -> Result<()> {
    if std::fs::read(path).is_ok_and(|t| t == text.as_bytes()) {
        return Ok(());
    }
    write(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_keeps_the_old_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.npy");
        write(&p, b"old").unwrap();
        // A directory cannot be renamed over: the write fails, the old file stays.
        let blocked = d.path().join("sub");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("x"), b"").unwrap();
        assert!(write(&blocked, b"new").is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        write(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        // A tool's temporary gets the usual permissions when it is renamed.
        use std::os::unix::fs::PermissionsExt;
        let t = temp_in(d.path(), "t", ".so").unwrap();
        std::fs::set_permissions(&t, std::fs::Permissions::from_mode(0o700)).unwrap();
        let lib = d.path().join("lib.so");
        persist(t, &lib).unwrap();
        assert_eq!(std::fs::metadata(&lib).unwrap().permissions().mode() & 0o777, 0o755);
        std::fs::remove_file(&lib).unwrap();
        // No temporaries left behind.
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
