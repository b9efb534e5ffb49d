//! Loading a built shared object in-process (`dlopen`, through
//! `libloading`) and looking up its C entry points. A library stays loaded
//! for the life of the process (the runtime inside keeps thread-local
//! bindings and a panic hook; unloading it under them would not be sound),
//! so a handle is never closed.
//!
//! A built library is loaded from a descriptor the caller opened and
//! verified ([`Library::open_file`]): the loader opens `/proc/PID/fd/N`,
//! the very file checked, never the path again. The name has this
//! process's id, not `self`, because the loader records it as the
//! object's name: a debugger (gdb) opens that name in its own process to
//! read the object's symbols, and a forked child's symbolizer reads it
//! too, both finding this process's descriptor. That descriptor stays
//! open as long as the process (the loader knows the object by that name:
//! a later `/proc/PID/fd/N` of another file would be taken for it).

use crate::error::{Error, ErrorKind, Result};
use libloading::os::unix::{Library as Handle, RTLD_LOCAL, RTLD_NOW};
use std::fs::File;
use std::mem::ManuallyDrop;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// A loaded shared object.
#[derive(Debug)]
pub struct Library {
    /// Never dropped: dropping would `dlclose` it.
    handle: ManuallyDrop<Handle>,
    path: PathBuf,
    /// The descriptor it was loaded from, never closed (see the module).
    _file: ManuallyDrop<Option<File>>,
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
        Ok(Self { handle: ManuallyDrop::new(handle), path: path.to_path_buf(), _file: ManuallyDrop::new(None) })
    }

    /// Loads the open file `file` (`path` names it in messages) through
    /// `/proc/PID/fd/N`: what the caller read and checked from `file` is
    /// what is loaded. `file` is kept open for the life of the process.
    pub fn open_file(file: File, path: &Path) -> Result<Self> {
        let by_fd = PathBuf::from(format!("/proc/{}/fd/{}", std::process::id(), file.as_raw_fd()));
        // SAFETY: as in `open`: the library's initialisers run.
        let handle = unsafe { Handle::open(Some(&by_fd), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| {
            let why = std::error::Error::source(&e).map_or_else(|| e.to_string(), ToString::to_string);
            let why = why.replace(&by_fd.display().to_string(), &path.display().to_string());
            let hint = if Path::new("/proc/self/fd").is_dir() { "" } else { " (/proc is not mounted: the library is loaded through /proc/PID/fd)" };
            Error::new(ErrorKind::BadInput, format!("cannot load {}: {why}{hint}", path.display()))
        })?;
        Ok(Self { handle: ManuallyDrop::new(handle), path: path.to_path_buf(), _file: ManuallyDrop::new(Some(file)) })
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
        let e = Library::open_file(File::open(&junk).unwrap(), &junk).unwrap_err();
        assert!(e.message.starts_with(&format!("cannot load {}: ", junk.display())) && !e.message.contains("/fd/"), "{e}");
    }

    /// A library loaded from a descriptor: its functions work (libc is
    /// loaded already: the loader finds it by its file; a kernel's
    /// library is named `/proc/PID/fd/N`, which `customop/tests`' crash
    /// and debugger tests read its lines through).
    #[test]
    fn a_library_loads_from_its_descriptor() {
        let libc_path =
            ["/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6"].into_iter().map(Path::new).find(|p| p.exists());
        let Some(p) = libc_path else { return eprintln!("skipped: no libc.so.6 at a known path") };
        let f = File::open(p).unwrap();
        let lib = Library::open_file(f, p).unwrap();
        assert_eq!(lib.path(), p);
        // SAFETY: `abs` is `int abs(int)`.
        let abs: unsafe extern "C" fn(i32) -> i32 = unsafe { lib.function("abs") }.unwrap();
        // SAFETY: abs takes any int.
        assert_eq!(unsafe { abs(-3) }, 3);
        std::mem::forget(lib);
    }
}
