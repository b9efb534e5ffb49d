//! One source frame of a code address.

use crate::Origin;
use std::fmt;

/// One frame of an address's inline stack: the function and, when the
/// debug information has them, the source file and line. Ordered and
/// hashed field by field, so a report can key a map by frame.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Frame {
    /// The function, demangled; when the debug information names none,
    /// each resolver says what stands in for it.
    pub function: String,
    /// The source file (None without debug information for the address).
    pub file: Option<String>,
    /// The line (None when the debug information gives none; never 0).
    pub line: Option<u32>,
}

impl Frame {
    /// Whose this frame's file is, by [`origin`](crate::origin): a frame
    /// without a file is the library's.
    pub fn origin(&self) -> Origin {
        self.file.as_deref().map_or(Origin::Library, crate::origin)
    }

    /// Whether this frame is in the kernel author's source.
    pub fn is_authors(&self) -> bool {
        self.origin() == Origin::Author
    }
}

impl fmt::Display for Frame {
    /// `function at file:line`, or the function alone without both.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{} at {file}:{line}", self.function),
            _ => f.write_str(&self.function),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Frame;
    use crate::Origin;

    fn frame(file: Option<&str>, line: Option<u32>) -> Frame {
        Frame { function: "relu(at::Tensor const&)".into(), file: file.map(String::from), line }
    }

    #[test]
    fn a_frame_prints_its_line_only_with_both_file_and_line() {
        assert_eq!(frame(Some("/k/relu.cpp"), Some(7)).to_string(), "relu(at::Tensor const&) at /k/relu.cpp:7");
        assert_eq!(frame(Some("/k/relu.cpp"), None).to_string(), "relu(at::Tensor const&)");
        assert_eq!(frame(None, Some(7)).to_string(), "relu(at::Tensor const&)");
    }

    #[test]
    fn a_frame_is_whose_its_file_is_and_the_librarys_without_one() {
        assert!(frame(Some("/k/relu.cpp"), Some(7)).is_authors());
        assert!(frame(Some("/k/relu.cpp"), None).is_authors());
        let generated = frame(Some("/k/customop-build/ops.cpp"), Some(7));
        assert_eq!((generated.origin(), generated.is_authors()), (Origin::Generated, false));
        assert_eq!(frame(Some("/r/include/ATen/core/TensorAccessor.h"), Some(7)).origin(), Origin::Library);
        assert_eq!(frame(None, None).origin(), Origin::Library);
        assert!(!frame(None, None).is_authors());
    }
}
