//! The one reading of an address's inline stack from an object's debug
//! information, shared by both resolvers.

use crate::Frame;

/// The frames at `probe` (an address in `loader`'s object), innermost
/// first; `unnamed` names a function the debug information has no name
/// for. Empty when the debug information does not cover `probe`.
pub(crate) fn frames(loader: &addr2line::Loader, probe: u64, unnamed: impl Fn() -> String) -> Vec<Frame> {
    let mut out = Vec::new();
    let Ok(mut it) = loader.find_frames(probe) else { return out };
    while let Ok(Some(f)) = it.next() {
        let function = f.function.as_ref().and_then(|n| n.demangle().ok()).map_or_else(&unnamed, |n| n.into_owned());
        let (file, line) = f.location.map_or((None, None), |l| (l.file.map(String::from), l.line));
        out.push(Frame { function, file, line });
    }
    out
}
