//! The built library's integrity, checked before `dlopen`: the size and
//! content hash `customop build` recorded in `customop.json`. A truncated,
//! half-written or foreign `lib*.so` is a clear error instead of a
//! SIGBUS when the loader touches a page past the end of the file, or a
//! run of some other build's code.

use crate::cache::{fnv1a, FNV_BASIS};
use crate::error::{Error, ErrorKind, Result};
use std::path::Path;

/// The recorded hash of `bytes`: XXH3-128, a change detector that reads a
/// 10 MB library in about a millisecond (it is checked on every run; the
/// byte-at-a-time FNV-1a it replaces took 17 ms).
pub fn digest(bytes: &[u8]) -> String {
    format!("{XXH3}{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

const XXH3: &str = "xxh3_128:";
const FNV: &str = "fnv1a64:";

/// A hash being taken, by the algorithm a recorded hash names (so a
/// library built by an earlier `customop`, FNV-1a, still loads).
enum Running {
    Xxh3(Box<xxhash_rust::xxh3::Xxh3>),
    Fnv(u64),
}

impl Running {
    /// `None` for an algorithm this customop does not know.
    fn for_recorded(recorded: &str) -> Option<Self> {
        if recorded.starts_with(XXH3) {
            Some(Self::Xxh3(Box::default()))
        } else if recorded.starts_with(FNV) {
            Some(Self::Fnv(FNV_BASIS))
        } else {
            None
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Self::Xxh3(h) => h.update(bytes),
            Self::Fnv(h) => *h = fnv1a(*h, bytes),
        }
    }

    fn finish(&self) -> String {
        match self {
            Self::Xxh3(h) => format!("{XXH3}{:032x}", h.digest128()),
            Self::Fnv(h) => format!("{FNV}{h:016x}"),
        }
    }
}

/// Reads the open file `f` (`path` names it in messages) from its start
/// and checks it against the recorded `size` and `hash`, handing each
/// piece read to `sink` (which may keep a copy: the bytes checked, not the
/// file read again). Read a piece at a time into one buffer, not whole
/// into memory nor mapped: a 10 MB library costs no fresh pages, and a
/// file truncated meanwhile is an error, not a SIGBUS. The caller loads
/// what it checked through the same descriptor (`/proc/PID/fd/N`), never
/// by the path again.
pub fn verify(f: &mut std::fs::File, path: &Path, size: u64, hash: &str, mut sink: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    use std::io::{Read, Seek};
    let meta = f.metadata().map_err(|e| Error::io("read", path, e))?;
    let rebuild = "rebuild it with `customop build` (or `load()`)";
    if !meta.is_file() {
        return Err(Error::new(ErrorKind::BadInput, format!("{} is not a regular file: {rebuild}", path.display())));
    }
    if meta.len() != size {
        return Err(Error::new(
            ErrorKind::BadInput,
            format!("{} is {} bytes, the build recorded {size} in customop.json: it was truncated or replaced; {rebuild}", path.display(), meta.len()),
        ));
    }
    let Some(mut running) = Running::for_recorded(hash) else {
        return Err(Error::new(
            ErrorKind::BadInput,
            format!("customop.json records the hash of {} as {hash:?}, in no format this customop knows; {rebuild}", path.display()),
        ));
    };
    f.rewind().map_err(|e| Error::io("read", path, e))?;
    let mut buf = vec![0u8; PIECE];
    let mut read = 0u64;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io("read", path, e)),
        };
        running.update(&buf[..n]);
        sink(&buf[..n])?;
        read += n as u64;
    }
    let got = running.finish();
    if read != size || got != hash {
        return Err(Error::new(
            ErrorKind::BadInput,
            format!(
                "{} does not match the build recorded in customop.json (hash {got}, recorded {hash}): it was changed or replaced; {rebuild}",
                path.display()
            ),
        ));
    }
    Ok(())
}

/// What [`verify`] reads at a time.
const PIECE: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn open(p: &Path) -> std::fs::File {
        std::fs::File::open(p).unwrap()
    }

    #[test]
    fn refuses_a_truncated_or_changed_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("libk.so");
        std::fs::write(&p, b"0123456789").unwrap();
        let h = digest(b"0123456789");
        let mut seen = Vec::new();
        verify(&mut open(&p), &p, 10, &h, |b| {
            seen.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, b"0123456789");
        std::fs::write(&p, b"01234").unwrap();
        assert!(verify(&mut open(&p), &p, 10, &h, |_| Ok(())).unwrap_err().message.contains("is 5 bytes, the build recorded 10"));
        std::fs::write(&p, b"0123456780").unwrap();
        assert!(verify(&mut open(&p), &p, 10, &h, |_| Ok(())).unwrap_err().message.contains("does not match the build"));
    }

    #[test]
    fn a_library_recorded_by_an_earlier_customop_still_verifies() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("libk.so");
        std::fs::write(&p, b"0123456789").unwrap();
        let old = format!("fnv1a64:{:016x}", fnv1a(FNV_BASIS, b"0123456789"));
        assert!(digest(b"0123456789").starts_with("xxh3_128:"));
        assert!(verify(&mut open(&p), &p, 10, &old, |_| Ok(())).is_ok());
        let wrong = format!("fnv1a64:{:016x}", fnv1a(FNV_BASIS, b"0123456780"));
        assert!(verify(&mut open(&p), &p, 10, &wrong, |_| Ok(())).unwrap_err().message.contains("does not match the build"));
        assert!(verify(&mut open(&p), &p, 10, "md5:00", |_| Ok(())).unwrap_err().message.contains("in no format this customop knows"));
    }

    #[test]
    fn a_file_of_several_pieces_hashes_as_the_whole() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("libk.so");
        let bytes: Vec<u8> = (0..3 * PIECE + 5).map(|i| (i * 31 % 251) as u8).collect();
        std::fs::write(&p, &bytes).unwrap();
        let mut pieces = 0;
        verify(&mut open(&p), &p, bytes.len() as u64, &digest(&bytes), |_| {
            pieces += 1;
            Ok(())
        })
        .unwrap();
        assert!(pieces >= 4, "{pieces}");
    }
}
