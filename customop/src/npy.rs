//! `.npy` files: the codec is the `customop-npy` crate (one codec for
//! customop and xtask; bf16 as `<u2` bits, see its docs); this module
//! reads inputs (regular files only, never blocking on a FIFO) and writes
//! outputs atomically.

use crate::error::{Error, ErrorKind, Result};
use std::path::Path;

pub use customop_npy::{check_length, descr, from_descr, parse_bytes, parse_header, render, render_header, Array, Dtype, Layout};

fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::BadInput, format!("{}: not a usable .npy file: {what}", path.display()))
}

/// Parses `.npy` bytes (`path` names them in messages).
pub fn parse(path: &Path, b: &[u8]) -> Result<Array> {
    parse_bytes(b).map_err(|m| bad(path, m))
}

/// Reads a `.npy` file. Only a regular file: a FIFO or device is refused
/// without blocking (opened non-blocking, checked before reading).
pub fn read(path: &Path) -> Result<Array> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(|e| Error::io("read", path, e))?;
    let meta = f.metadata().map_err(|e| Error::io("read", path, e))?;
    if !meta.is_file() {
        return Err(bad(path, "not a regular file (a FIFO, device or directory cannot be an input)"));
    }
    let mut b = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut b).map_err(|e| Error::io("read", path, e))?;
    parse(path, &b)
}

/// An input `.npy` mapped, its header read and its length checked: the
/// data is copied once, from the mapping into the simulated HBM.
#[derive(Debug)]
pub struct Mapped {
    map: memmap2::Mmap,
    /// What the header says.
    pub layout: Layout,
}

impl Mapped {
    /// The data bytes.
    pub fn data(&self) -> &[u8] {
        &self.map[self.layout.offset..]
    }

    /// Drops the mapped pages from this process's memory once they are
    /// copied (read again from the file if touched), so the run's peak
    /// memory holds the input once, in the simulated HBM.
    pub fn release(&self) {
        // SAFETY: the mapping is read-only, never written: its pages read
        // back as the file's bytes, which they are now.
        let _ = unsafe { self.map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
    }
}

/// Opens and maps a `.npy` file (a regular file only, as [`read`]).
pub fn map(path: &Path) -> Result<Mapped> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(|e| Error::io("read", path, e))?;
    let meta = f.metadata().map_err(|e| Error::io("read", path, e))?;
    if !meta.is_file() {
        return Err(bad(path, "not a regular file (a FIFO, device or directory cannot be an input)"));
    }
    if meta.len() == 0 {
        return Err(bad(path, "no NumPy magic"));
    }
    // SAFETY: a read-only mapping of a regular file, never written
    // through; a file truncated by someone else while mapped faults
    // (SIGBUS: the run's process dies, reported as a crash), as a file
    // changed under `read` would give wrong data: inputs are the user's
    // files, not changed during their own run. Not populated: the run's
    // process, which reads the data, is forked after this, and a fork
    // does not copy a shared file mapping's page tables (the child would
    // fault every page in again); here only the header is read.
    let map = unsafe { memmap2::MmapOptions::new().map(&f) }.map_err(|e| Error::io("read", path, e))?;
    let layout = parse_header(&map).map_err(|m| bad(path, m))?;
    check_length(&layout, meta.len()).map_err(|m| bad(path, m))?;
    Ok(Mapped { map, layout })
}

/// Writes `a` to `path` atomically: a failed write (a full disk) leaves
/// the previous file as it was.
pub fn write(path: &Path, a: &Array) -> Result<()> {
    crate::atomic::write(path, &render(a).map_err(|m| unwritable(path, m))?)
}

/// Writes `a` to a new file `path` that this call creates: exclusively
/// (`O_EXCL`: an existing file, link or FIFO there is an error, never
/// written through) and private (0600). For staging files in a fresh
/// private directory.
pub fn write_new(path: &Path, a: &Array) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let bytes = render(a).map_err(|m| unwritable(path, m))?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| Error::io("create", path, e))?;
    f.write_all(&bytes).map_err(|e| Error::io("write", path, e))
}

/// The `.npy` header of an output of `dtype` and `shape` to be written to
/// `path` (refused for a dtype that does not marshal).
pub fn header(path: &Path, dtype: Dtype, shape: &[u64]) -> Result<Vec<u8>> {
    render_header(dtype, shape).map_err(|m| unwritable(path, m))
}

fn unwritable(path: &Path, what: String) -> Error {
    Error::new(ErrorKind::BadInput, format!("{}: cannot write the output: {what}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapped_input_is_checked_as_a_read_one() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.npy");
        let a = Array::from_f32(&[2, 3], &[1.0, -2.0, 3.5, 0.0, 5.0, 6.0]);
        let bytes = render(&a).unwrap();
        std::fs::write(&p, &bytes).unwrap();
        let m = map(&p).unwrap();
        assert_eq!((m.layout.dtype, m.layout.shape.as_slice(), m.data()), (Dtype::Fp32, &[2u64, 3][..], &a.data[..]));
        m.release();
        assert_eq!(m.data(), &a.data[..], "released pages read back as the file");
        std::fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
        assert!(map(&p).unwrap_err().message.contains("needs 24 data bytes, the file has 23"));
        std::fs::write(&p, b"").unwrap();
        assert!(map(&p).unwrap_err().message.contains("no NumPy magic"));
        assert!(map(d.path()).unwrap_err().message.contains("not a regular file"));
    }

    #[test]
    fn a_new_file_is_private_and_never_written_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let a = Array::from_f32(&[2], &[1.0, 2.0]);
        let p = d.path().join("arg0.npy");
        write_new(&p, &a).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(write_new(&p, &a).is_err(), "an existing file is never replaced");
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = d.path().join("arg1.npy");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(write_new(&link, &a).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    }

    #[test]
    fn an_output_that_does_not_marshal_is_refused_and_the_file_kept() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("y.npy");
        let a = Array::from_f32(&[2], &[1.0, 2.0]);
        write(&p, &a).unwrap();
        let e = write(&p, &Array { dtype: Dtype::Uint16, shape: vec![1], data: vec![0; 2] }).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadInput);
        assert!(e.message.contains("cannot write the output: dtype UINT16 (code 5) does not marshal"), "{e}");
        assert_eq!(read(&p).unwrap(), a);
        assert!(header(&p, Dtype::Fp32R, &[1]).is_err());
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("fifo");
        let c = std::ffi::CString::new(d.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: c is a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read(&d).unwrap_err();
        let m = map(&d).err().map(|e| e.message).unwrap_or_default();
        let _ = std::fs::remove_file(&d);
        assert!(m.contains("not a regular file"), "{m}");
        assert!(e.message.contains("not a regular file"), "{e}");
    }
}
