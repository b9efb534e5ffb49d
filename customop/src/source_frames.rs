//! An address of code in this process named in source terms: the object
//! mapped there (`dladdr`) and its debug information (kernels and the
//! runtime are built with `-g`), as the function and file:line, with the
//! frames inlined at that address.

use std::ffi::{c_void, CStr};
use std::fmt;

/// One source frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The function, demangled ("?" when unknown).
    pub function: String,
    /// The file and line, when known.
    pub file: Option<String>,
    pub line: Option<u32>,
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{} at {file}:{line}", self.function),
            _ => f.write_str(&self.function),
        }
    }
}

/// The frames at `pc` (an address in code mapped in this process),
/// innermost first; None when no object with debug information maps it.
pub fn at(pc: usize) -> Option<Vec<Frame>> {
    Objects::default().at(pc)
}

/// The objects' debug information, each loaded once for many addresses
/// (a finding's stack of return addresses lies mostly in one library).
#[derive(Default)]
pub struct Objects {
    loaded: std::collections::HashMap<String, Option<addr2line::Loader>>,
}

impl Objects {
    /// As [`at`], reusing the objects loaded for earlier addresses.
    pub fn at(&mut self, pc: usize) -> Option<Vec<Frame>> {
        // SAFETY: Dl_info is plain data; all zeroes is a valid value.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr only reads the loader's tables for any address.
        if unsafe { libc::dladdr(pc as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: dladdr set it to the object's NUL-terminated path.
        let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
        let loader = self.loaded.entry(path).or_insert_with_key(|p| addr2line::Loader::new(p).ok()).as_ref()?;
        let mut frames = loader.find_frames((pc - info.dli_fbase as usize) as u64).ok()?;
        let mut out = Vec::new();
        while let Ok(Some(f)) = frames.next() {
            let function = f.function.as_ref().and_then(|n| n.demangle().ok()).map_or_else(|| "?".to_owned(), |n| n.into_owned());
            let (file, line) = f.location.as_ref().map_or((None, None), |l| (l.file.map(String::from), l.line));
            out.push(Frame { function, file, line });
        }
        (!out.is_empty()).then_some(out)
    }
}
