//! The one reading of an address's inline stack from an object's debug
//! information, shared by both resolvers.

use crate::Frame;
use std::borrow::Cow;

/// The frames at `probe` (an address in `loader`'s object), innermost
/// first; `unnamed` names a function the debug information has no name
/// for. Empty when the debug information does not cover `probe`.
pub(crate) fn frames(loader: &addr2line::Loader, probe: u64, unnamed: impl Fn() -> String) -> Vec<Frame> {
    let mut out = Vec::new();
    let Ok(mut it) = loader.find_frames(probe) else { return out };
    while let Ok(Some(f)) = it.next() {
        let function = f.function.as_ref().and_then(|n| n.demangle().ok()).map_or_else(&unnamed, |n| demangled(&n));
        let (file, line) = f.location.map_or((None, None), |l| (l.file.map(String::from), l.line));
        out.push(Frame { function, file, line });
    }
    out
}

/// `name` as its source spells it: a C++ (`_Z…`) or Rust (`_ZN…E`,
/// `_R…`) symbol demangled, anything else as it is. The debug
/// information's own demangling goes by its unit's language and leaves a
/// name of a C++ dialect it does not list (C++17, C++20) mangled; this
/// one goes by the name.
pub(crate) fn demangled(name: &str) -> String {
    addr2line::demangle_auto(Cow::Borrowed(name), None).into_owned()
}

#[cfg(test)]
mod tests {
    use super::demangled;

    #[test]
    fn names_are_demangled_by_their_own_form() {
        assert_eq!(demangled("_Z12relu_forwardRKN2at6TensorE"), "relu_forward(at::Tensor const&)");
        assert_eq!(demangled("_ZN4core3ptr5write17h0123456789abcdefE"), "core::ptr::write");
        assert_eq!(demangled("relu_forward(at::Tensor const&)"), "relu_forward(at::Tensor const&)");
        assert_eq!(demangled("__gesf2"), "__gesf2");
        assert_eq!(demangled("0x60000080"), "0x60000080");
    }
}
