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

/// `bytes`' hash by the algorithm `recorded` names, so a library built by
/// an earlier `customop` (FNV-1a) still loads; `None` for an unknown one.
fn digest_as(recorded: &str, bytes: &[u8]) -> Option<String> {
    if recorded.starts_with(XXH3) {
        Some(digest(bytes))
    } else if recorded.starts_with(FNV) {
        Some(format!("{FNV}{:016x}", fnv1a(FNV_BASIS, bytes)))
    } else {
        None
    }
}

/// Reads `path` and checks it against the recorded `size` and `hash`;
/// returns its bytes.
pub fn verify(path: &Path, size: u64, hash: &str) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io("read", path, e))?;
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
    let bytes = std::fs::read(path).map_err(|e| Error::io("read", path, e))?;
    let Some(got) = digest_as(hash, &bytes) else {
        return Err(Error::new(
            ErrorKind::BadInput,
            format!("customop.json records the hash of {} as {hash:?}, in no format this customop knows; {rebuild}", path.display()),
        ));
    };
    if bytes.len() as u64 != size || got != hash {
        return Err(Error::new(
            ErrorKind::BadInput,
            format!(
                "{} does not match the build recorded in customop.json (hash {got}, recorded {hash}): it was changed or replaced; {rebuild}",
                path.display()
            ),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_truncated_or_changed_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("libk.so");
        std::fs::write(&p, b"0123456789").unwrap();
        let h = digest(b"0123456789");
        assert_eq!(verify(&p, 10, &h).unwrap(), b"0123456789");
        std::fs::write(&p, b"01234").unwrap();
        assert!(verify(&p, 10, &h).unwrap_err().message.contains("is 5 bytes, the build recorded 10"));
        std::fs::write(&p, b"0123456780").unwrap();
        assert!(verify(&p, 10, &h).unwrap_err().message.contains("does not match the build"));
    }

    #[test]
    fn a_library_recorded_by_an_earlier_customop_still_verifies() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("libk.so");
        std::fs::write(&p, b"0123456789").unwrap();
        let old = format!("fnv1a64:{:016x}", fnv1a(FNV_BASIS, b"0123456789"));
        assert!(digest(b"0123456789").starts_with("xxh3_128:"));
        assert_eq!(verify(&p, 10, &old).unwrap(), b"0123456789");
        let wrong = format!("fnv1a64:{:016x}", fnv1a(FNV_BASIS, b"0123456780"));
        assert!(verify(&p, 10, &wrong).unwrap_err().message.contains("does not match the build"));
        assert!(verify(&p, 10, "md5:00").unwrap_err().message.contains("in no format this customop knows"));
    }
}
