//! Where a file the tools write for a user goes, and the one way they
//! write it.
//!
//! The atomic write (a temporary name beside the file, flushed, renamed
//! over it) is right for a regular file: a failure leaves the old file
//! whole. Renaming over anything else destroys it: a symlink would become
//! a file (its target left stale), `/dev/null` a regular file every other
//! program then fills, a FIFO a file its reader never sees. So:
//!
//! | the path is | what is written |
//! |---|---|
//! | a regular file, or nothing yet | atomically, as above |
//! | a symlink (any chain) | its final target, atomically; the link stays; a dangling link's target is created |
//! | a character device, FIFO or socket | the node itself, opened and written into (as NumPy's `np.save` does) |
//! | a directory, a block device | nothing: refused, with a message saying what it is |

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use tempfile::{Builder, TempPath};

/// How many symlinks a path may pass through (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Where the bytes for a path go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// A regular file or a new one (a new path, a dangling link's target):
    /// written under a temporary name beside it, then renamed over it.
    Replace(PathBuf),
    /// A character device, FIFO or socket: opened and written into.
    Stream(PathBuf),
}

impl Destination {
    /// The path written: the symlinks' final target, or the node itself.
    pub fn path(&self) -> &Path {
        match self {
            Destination::Replace(p) | Destination::Stream(p) => p,
        }
    }
}

/// Where writing `path` goes, with its symlinks followed; an error (and
/// nothing changed) for a directory, a block device or a link loop.
pub fn destination(path: &Path) -> io::Result<Destination> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Destination::Replace(p)),
            Err(e) => return Err(e),
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            let target = std::fs::read_link(&p)?;
            p = if target.is_absolute() { target } else { parent(&p).join(target) };
        } else if ft.is_file() {
            return Ok(Destination::Replace(p));
        } else if ft.is_char_device() || ft.is_fifo() || ft.is_socket() {
            return Ok(Destination::Stream(p));
        } else if ft.is_dir() {
            return Err(refused(path, &p, "a directory; name a file inside it"));
        } else if ft.is_block_device() {
            return Err(refused(path, &p, "a block device; the tools write files, never a disk"));
        } else {
            return Err(refused(path, &p, "neither a file, a device nor a FIFO"));
        }
    }
    Err(io::Error::other(format!("it is more than {MAX_LINKS} symbolic links deep (a loop?); nothing was written")))
}

fn refused(given: &Path, resolved: &Path, what: &str) -> io::Error {
    let via = if given == resolved { String::new() } else { format!(" (the link leads to {})", resolved.display()) };
    io::Error::new(io::ErrorKind::InvalidInput, format!("it is {what}{via}; nothing was written"))
}

/// The directory `path` is in (`.` for a bare name).
pub fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A temporary file beside where `path` goes (its symlinks followed), for
/// a tool or a child process to fill before [`persist`]; `None` when
/// `path` is a stream (written directly when the bytes are ready).
pub fn temp_beside(path: &Path) -> io::Result<Option<TempPath>> {
    match destination(path)? {
        Destination::Replace(p) => Ok(Some(temp_in(parent(&p), &hidden_prefix(&p), ".tmp")?)),
        Destination::Stream(_) => Ok(None),
    }
}

/// A fresh, unique temporary file in `dir` (removed when dropped unless
/// persisted).
pub fn temp_in(dir: &Path, prefix: &str, suffix: &str) -> io::Result<TempPath> {
    Builder::new().prefix(prefix).suffix(suffix).tempfile_in(dir).map(tempfile::NamedTempFile::into_temp_path)
}

fn hidden_prefix(p: &Path) -> String {
    p.file_name().map(|n| format!(".{}.", n.to_string_lossy())).unwrap_or_default()
}

/// The permissions a replaced file gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// An existing file's own; a new one 0644.
    KeepOr644,
    /// A tool's product: 0755 if the tool made it executable, else 0644.
    FromTool,
}

/// Puts a finished temporary where `path` goes: renamed over a regular
/// file (copied beside it first when the temporary is on another file
/// system), or copied into a stream. The temporary is gone afterwards.
pub fn persist(tmp: TempPath, path: &Path, mode: Mode) -> io::Result<()> {
    match destination(path)? {
        Destination::Replace(p) => {
            let exec = std::fs::metadata(&tmp).is_ok_and(|m| m.permissions().mode() & 0o100 != 0);
            let bits = match (mode, std::fs::metadata(&p)) {
                (Mode::KeepOr644, Ok(m)) => m.permissions().mode() & 0o7777,
                (Mode::FromTool, _) if exec => 0o755,
                _ => 0o644,
            };
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(bits))?;
            match tmp.persist(&p) {
                Ok(()) => Ok(()),
                // EXDEV: the link's target is on another file system.
                Err(e) if e.error.kind() == io::ErrorKind::CrossesDevices => {
                    let bytes = std::fs::read(&e.path)?;
                    replace(&p, bits, |f| f.write_all(&bytes))
                }
                Err(e) => Err(e.error),
            }
        }
        Destination::Stream(p) => {
            let mut from = File::open(&tmp)?;
            let mut to = open_stream(&p)?;
            io::copy(&mut from, &mut to).map(|_| ())
        }
    }
}

/// Writes `bytes` to `path` as the table at the top says.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, |f| f.write_all(bytes))
}

/// Writes to `path` what `fill` writes into the file it is given (a
/// temporary beside a regular file, flushed and renamed when `fill`
/// succeeds; the stream itself for a device or FIFO).
pub fn write_with(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    match destination(path)? {
        Destination::Replace(p) => {
            let bits = std::fs::metadata(&p).map_or(0o644, |m| m.permissions().mode() & 0o7777);
            replace(&p, bits, fill)
        }
        Destination::Stream(p) => {
            let mut f = open_stream(&p)?;
            fill(&mut f)?;
            f.flush()
        }
    }
}

/// `fill` into a temporary beside the regular file `p`, flushed, given
/// `bits`, renamed over `p`.
fn replace(p: &Path, bits: u32, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let mut t = Builder::new().prefix(&hidden_prefix(p)).suffix(".tmp").tempfile_in(parent(p))?;
    fill(t.as_file_mut())?;
    t.as_file().sync_data()?;
    t.as_file().set_permissions(std::fs::Permissions::from_mode(bits))?;
    t.persist(p).map(|_| ()).map_err(|e| e.error)
}

/// A device, FIFO or socket opened for writing, never truncated or
/// created (a FIFO's open waits for its reader, as NumPy's does).
fn open_stream(p: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).open(p)
}

#[cfg(test)]
mod tests;
