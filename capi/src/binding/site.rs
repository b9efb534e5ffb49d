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
    /// The kernel's source file, as its compiler named it (empty: not
    /// known).
    pub file: String,
    /// The line in `file` (0: not known).
    pub line: u32,
    /// What the library knew when it refused, in words (which heap and
    /// how much was free, which dtypes), with the usual fix.
    pub detail: Option<String>,
}

/// Notes `site` for the newest error of a log that holds `logged` errors
/// (unless the log had no room for it). A second site for the same error
/// fills in only what the first did not know: the library's detail comes
/// before the header's file and line, the access's own site first.
pub fn note(sites: &mut Vec<ErrorSite>, logged: usize, dropped: u32, mut site: ErrorSite) {
    let Some(entry) = logged.checked_sub(1) else { return };
    if dropped != 0 {
        return;
    }
    site.entry = entry;
    let room = sites.len() < SITE_CAPACITY;
    match sites.iter_mut().find(|s| s.entry == entry) {
        Some(s) => {
            if s.line == 0 && site.line != 0 {
                (s.file, s.line) = (site.file, site.line);
            }
            if s.tensor == 0 {
                s.tensor = site.tensor;
            }
            s.index = s.index.or(site.index);
            s.detail = s.detail.take().or(site.detail);
        }
        None if room => sites.push(site),
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    fn at(line: u32) -> ErrorSite {
        ErrorSite { entry: 99, tensor: 0x1000, index: Some((8, 8, 1)), file: "k.cpp".to_string(), line, detail: None }
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
        // The library's detail first, the header's line after: one site.
        let mut s = Vec::new();
        note(&mut s, 1, 0, ErrorSite { detail: Some("heap".to_string()), file: String::new(), line: 0, tensor: 0, index: None, ..at(0) });
        note(&mut s, 1, 0, at(7));
        assert_eq!(s, [ErrorSite { entry: 0, detail: Some("heap".to_string()), ..at(7) }]);
    }
}
