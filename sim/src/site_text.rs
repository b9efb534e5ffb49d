//! A logged error's site as the report names it: the tensor by its
//! argument position (or as the output), the index against its
//! dimension's size, and the kernel's file:line.

use core::fmt;

/// Where one logged error of a core happened, the tensor named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedSite {
    /// Which error of the core's log (its position in `errors`).
    pub entry: usize,
    /// "argument 0", "the output", ...; None when the access named no
    /// tensor.
    pub tensor: Option<String>,
    /// The tensor's shape, when the simulator placed it.
    pub shape: Option<Vec<u64>>,
    /// (index, the dimension's size, dimensions left to index with this
    /// one), for an index's error.
    pub index: Option<(i64, i64, u32)>,
    /// The kernel's source file and line.
    pub file: String,
    /// The line in `file` (0: not known).
    pub line: u32,
    /// What the library knew, in words, with the usual fix.
    pub detail: Option<String>,
}

impl fmt::Display for NamedSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if let Some(t) = &self.tensor {
            parts.push(match &self.shape {
                Some(s) => format!("{t} (shape {s:?})"),
                None => t.clone(),
            });
        }
        if let Some((i, size, left)) = self.index {
            // The dimension, counted from the outermost, when the rank is
            // known: an accessor knows only how many it has left.
            parts.push(if left == crate::binding::site::SITE_FLAT {
                format!("element {i} (in order) of its {size}")
            } else {
                match self.shape.as_ref().and_then(|s| s.len().checked_sub(left as usize)) {
                    Some(d) => format!("index {i} of dimension {d}, whose size is {size}"),
                    None => format!("index {i} outside a dimension of size {size}"),
                }
            });
        }
        if let Some(d) = &self.detail {
            parts.push(d.clone());
        }
        if self.line != 0 {
            parts.push(format!("at {}:{}", self.file, self.line));
        }
        write!(f, "{}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_tensor_index_size_and_line() {
        let mut s = NamedSite {
            entry: 0,
            tensor: Some("argument 0".into()),
            shape: Some(vec![2, 8]),
            index: Some((8, 8, 1)),
            file: "k.cpp".into(),
            line: 14,
            detail: None,
        };
        assert_eq!(s.to_string(), "argument 0 (shape [2, 8]), index 8 of dimension 1, whose size is 8, at k.cpp:14");
        (s.tensor, s.shape) = (None, None);
        assert_eq!(s.to_string(), "index 8 outside a dimension of size 8, at k.cpp:14");
        s.index = Some((8, 8, crate::binding::site::SITE_FLAT));
        assert_eq!(s.to_string(), "element 8 (in order) of its 8, at k.cpp:14");
        s.index = None;
        assert_eq!(s.to_string(), "at k.cpp:14");
        (s.detail, s.line) = (Some("the HBM heap: 8 bytes asked for".into()), 0);
        assert_eq!(s.to_string(), "the HBM heap: 8 bytes asked for");
    }
}
