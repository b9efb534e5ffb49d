//! Files the tools write for a user, through the one writer
//! (`customop-outpath`): a regular file appears whole or not at all (a
//! temporary beside it, flushed, renamed over it), a symlink's target is
//! written and the link stays, a device or FIFO is written into, and a
//! directory or block device is refused. Here its errors become the
//! tool's, naming the path.

use crate::error::{Error, Result};
use std::path::Path;
use tempfile::TempPath;

pub use customop_outpath::parent;
use customop_outpath::Mode;

/// A fresh, unique temporary file in `dir` (removed when dropped unless
/// persisted): for a tool (compiler, linker) to write.
pub fn temp_in(dir: &Path, prefix: &str, suffix: &str) -> Result<TempPath> {
    customop_outpath::temp_in(dir, prefix, suffix).map_err(|e| Error::io("create a file in", dir, e))
}

/// A temporary beside where `path` goes (its symlinks followed), for a
/// child process to fill; None when `path` is a device or FIFO (written
/// when the bytes are back). A directory or block device is refused here,
/// before anything runs.
pub fn temp_for(path: &Path) -> Result<Option<TempPath>> {
    customop_outpath::temp_beside(path).map_err(|e| Error::io("write", path, e))
}

/// Puts a finished temporary where `path` goes. A temporary is created
/// 0600 and tools writing into it keep that: the product gets the usual
/// 0755 (if the tool made it executable: a library, an image) or 0644.
pub fn persist(tmp: TempPath, path: &Path) -> Result<()> {
    customop_outpath::persist(tmp, path, Mode::FromTool).map_err(|e| Error::io("write", path, e))
}

/// Puts a finished output where `path` goes, keeping an existing file's
/// permissions (a user's 0600 output stays so).
pub fn persist_output(tmp: TempPath, path: &Path) -> Result<()> {
    customop_outpath::persist(tmp, path, Mode::KeepOr644).map_err(|e| Error::io("write", path, e))
}

/// Writes `bytes` to `path`.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    customop_outpath::write(path, bytes).map_err(|e| Error::io("write", path, e))
}

/// Writes `text` to `path` unless it already holds it.
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
        // A directory is refused: the message names it, the old file stays.
        let blocked = d.path().join("sub");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("x"), b"").unwrap();
        let e = write(&blocked, b"new").unwrap_err().to_string();
        assert!(e.starts_with(&format!("cannot write {}: it is a directory", blocked.display())), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        write(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        // No temporaries left behind.
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
