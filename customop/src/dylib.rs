//! Loading a built shared object in-process (`dlopen`, through
//! `libloading`) and looking up its C entry points. A library stays loaded
//! for the life of the process (the runtime inside keeps thread-local
//! bindings and a panic hook; unloading it under them would not be sound),
//! so a handle is never closed.

use crate::error::{Error, ErrorKind, Result};
use libloading::os::unix::{Library as Handle, RTLD_LOCAL, RTLD_NOW};
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};

/// A loaded shared object.
#[derive(Debug)]
pub struct Library {
    /// Never dropped: dropping would `dlclose` it.
    handle: ManuallyDrop<Handle>,
    path: PathBuf,
}

impl Library {
    /// Loads `path` (symbols local to it: two built libraries in one
    /// process never see each other's runtime).
    pub fn open(path: &Path) -> Result<Self> {
        // SAFETY: loading runs the library's initialisers, which for a
        // built kernel are its C++ static constructors and the Rust
        // runtime's (none of them take locks the caller holds).
        let handle = unsafe { Handle::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| {
            // The loader's own words (dlerror) are the error's source.
            let why = std::error::Error::source(&e).map_or_else(|| e.to_string(), ToString::to_string);
            Error::new(ErrorKind::BadInput, format!("cannot load {}: {why}", path.display()))
        })?;
        Ok(Self { handle: ManuallyDrop::new(handle), path: path.to_path_buf() })
    }

    /// The function `name`, as the function pointer type `T`, or an error
    /// naming it.
    ///
    /// # Safety
    /// `T` must be a function pointer type matching the export's C
    /// signature.
    pub unsafe fn function<T: Copy>(&self, name: &str) -> Result<T> {
        // SAFETY: the caller vouches for T; the pointer stays valid after
        // the `Symbol` goes because the library is never unloaded.
        let f = unsafe { self.handle.get::<T>(name.as_bytes()) };
        f.map(|s| *s).map_err(|_| {
            Error::new(ErrorKind::Environment, format!("{} does not export `{name}` (built by another version of customop? rebuild it)", self.path.display()))
        })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C library: loaded, a function found and called, a missing one
    /// refused by name; a file that is not a library refused.
    #[test]
    fn loads_finds_and_refuses() {
        let libc = Library::open(Path::new("libc.so.6")).unwrap();
        // SAFETY: `abs` is `int abs(int)`.
        let abs: unsafe extern "C" fn(i32) -> i32 = unsafe { libc.function("abs") }.unwrap();
        // SAFETY: abs takes any int.
        assert_eq!(unsafe { abs(-7) }, 7);
        // SAFETY: never called.
        let e = unsafe { libc.function::<unsafe extern "C" fn()>("no_such_function_here") }.unwrap_err();
        assert!(e.kind == ErrorKind::Environment && e.message.contains("does not export `no_such_function_here`"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let junk = d.path().join("junk.so");
        std::fs::write(&junk, b"not an ELF").unwrap();
        let e = Library::open(&junk).unwrap_err();
        assert!(e.kind == ErrorKind::BadInput && e.message.starts_with(&format!("cannot load {}: ", junk.display())), "{e}");
        assert!(e.message.ends_with("junk.so: file too short"), "the loader's reason: {e}");
    }
}
