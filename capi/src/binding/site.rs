//! Host: where in the kernel an error happened, as the C++ header tells
//! it on its error path (the accessor's caller's file and line, the
//! tensor, the index and the dimension's size). The simulator's verdict
//! and report name it beside the error's code.

use std::string::String;
use std::vec::Vec;

/// The most sites one run keeps per core (as many as its error log).
pub const SITE_CAPACITY: usize = neuron_runtime::error_log::ERROR_LOG_CAPACITY;

/// `dims_left` of an index into the tensor taken flat, in element order
/// (a stream's position): the C++ header's `NEURON_SITE_FLAT`.
pub const SITE_FLAT: u32 = u32::MAX;

/// Where one logged error happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorSite {
    /// Which error of the core's log (its position) this is the site of.
    pub entry: usize,
    /// A SoC address inside the tensor the access was on (0: unknown).
    pub tensor: u64,
    /// The index, the size of the dimension it indexed, and how many
    /// dimensions the accessor had left (with this one), when the error
    /// was an index's ([`SITE_FLAT`] dimensions left: the index is flat).
    pub index: Option<(i64, i64, u32)>,
    /// The kernel's source file, as its compiler named it.
    pub file: String,
    /// The line in `file`.
    pub line: u32,
}

/// Notes `site` for the newest error of a log that holds `logged` errors,
/// unless that error already has one (the first site told is the
/// access's own) or the log had no room for it.
pub fn note(sites: &mut Vec<ErrorSite>, logged: usize, dropped: u32, mut site: ErrorSite) {
    let Some(entry) = logged.checked_sub(1) else { return };
    if dropped != 0 || sites.len() >= SITE_CAPACITY || sites.iter().any(|s| s.entry == entry) {
        return;
    }
    site.entry = entry;
    sites.push(site);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    fn at(line: u32) -> ErrorSite {
        ErrorSite { entry: 99, tensor: 0x1000, index: Some((8, 8, 1)), file: "k.cpp".to_string(), line }
    }

    #[test]
    fn a_site_goes_to_the_newest_error_once() {
        let mut s = Vec::new();
        note(&mut s, 0, 0, at(1));
        assert!(s.is_empty(), "no error logged: nothing to attach to");
        note(&mut s, 2, 0, at(3));
        note(&mut s, 2, 0, at(4));
        assert_eq!(s, [ErrorSite { entry: 1, ..at(3) }]);
        note(&mut s, 3, 1, at(5));
        assert_eq!(s.len(), 1, "a dropped error has no entry to name");
    }
}
