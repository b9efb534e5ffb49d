//! Addresses of code mapped in this process named in source terms: the
//! object mapped there (`dladdr`) and its debug information (kernels and
//! the runtime are built with `-g`), as the function and file:line, with
//! the frames inlined at that address.

use crate::Frame;
use std::collections::HashMap;
use std::ffi::{c_void, CStr};

/// The frames at `pc` (an address in code mapped in this process),
/// innermost first; None when no object with debug information maps it.
/// A function the debug information names none for is "?".
pub fn at(pc: usize) -> Option<Vec<Frame>> {
    Objects::default().at(pc)
}

/// The objects' debug information, each loaded once for many addresses
/// (a finding's stack of return addresses lies mostly in one library).
#[derive(Default)]
pub struct Objects {
    loaded: HashMap<String, Option<addr2line::Loader>>,
}

impl Objects {
    /// As [`at`], reusing the objects loaded for earlier addresses.
    pub fn at(&mut self, pc: usize) -> Option<Vec<Frame>> {
        let (path, base) = object_at(pc)?;
        let loader = self.loaded.entry(path).or_insert_with_key(|p| addr2line::Loader::new(p).ok()).as_ref()?;
        let frames = crate::dwarf::frames(loader, pc.checked_sub(base)? as u64, || "?".to_owned());
        (!frames.is_empty()).then_some(frames)
    }
}

/// The path of the object mapped at `pc` in this process and the address
/// it is loaded at.
pub(crate) fn object_at(pc: usize) -> Option<(String, usize)> {
    // SAFETY: Dl_info is plain data; all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables for any address.
    if unsafe { libc::dladdr(pc as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr set it to the object's NUL-terminated path.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
    Some((path, info.dli_fbase as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn here() -> usize {
        here as fn() -> usize as usize
    }

    #[test]
    fn an_address_of_this_program_is_its_function_file_and_line() {
        let frames = at(here()).expect("the test binary has debug information");
        let f = &frames[0];
        assert!(f.function.ends_with("here"), "{f}");
        assert!(f.file.as_deref().is_some_and(|p| p.ends_with("process.rs")) && f.line.is_some(), "{f}");
        // The test's own source is Rust: never the author's.
        assert!(!f.is_authors());
        let mut objects = Objects::default();
        assert_eq!(objects.at(here()), Some(frames.clone()));
        assert_eq!(objects.at(here()), Some(frames));
    }

    #[test]
    fn an_address_nothing_maps_has_no_frames() {
        assert_eq!(at(0x10), None);
    }
}
