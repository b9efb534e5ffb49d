//! Loading a built shared object in-process (`dlopen`) and looking up its
//! C entry points. A library stays loaded for the life of the process
//! (the runtime inside keeps thread-local bindings and a panic hook;
//! unloading it under them would not be sound), so a handle is never
//! closed.

use crate::error::{Error, ErrorKind, Result};
use std::ffi::{c_void, CStr, CString};
use std::path::{Path, PathBuf};

/// A loaded shared object.
#[derive(Debug)]
pub struct Library {
    handle: *mut c_void,
    path: PathBuf,
}

// SAFETY: a dlopen handle may be used from any thread (dlsym is thread
// safe); the library is never unloaded.
unsafe impl Send for Library {}
// SAFETY: as above; `Library` has no interior mutability.
unsafe impl Sync for Library {}

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string valid until
    // the next dl* call on this thread; it is copied at once.
    let p = unsafe { libc::dlerror() };
    if p.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null, NUL-terminated (above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

impl Library {
    /// Loads `path` (symbols local to it: two built libraries in one
    /// process never see each other's runtime).
    pub fn open(path: &Path) -> Result<Self> {
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| Error::new(ErrorKind::BadInput, format!("{}: path contains a NUL byte", path.display())))?;
        // SAFETY: c is a valid C string; loading runs the library's
        // initialisers, which for a built kernel are its C++ static
        // constructors and the Rust runtime's (none of them take locks the
        // caller holds).
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(Error::new(ErrorKind::BadInput, format!("cannot load {}: {}", path.display(), dl_error())));
        }
        Ok(Self { handle, path: path.to_path_buf() })
    }

    /// The address of `name`, or an error naming it.
    pub fn symbol(&self, name: &str) -> Result<*mut c_void> {
        let c = CString::new(name).expect("symbol names have no NUL");
        // SAFETY: handle is live (never closed) and c a C string.
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        if p.is_null() {
            return Err(Error::new(
                ErrorKind::Environment,
                format!("{} does not export `{name}` (built by another version of customop? rebuild it)", self.path.display()),
            ));
        }
        Ok(p)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
