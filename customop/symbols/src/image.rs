//! Addresses of a device image to function and file:line through its
//! DWARF (inlined frames resolved); code without DWARF (the Rust
//! runtime, compiler builtins) to its ELF symbol.

use crate::Frame;
use neuron_image::elf::Elf;
use std::fmt;
use std::path::{Path, PathBuf};

/// The symboliser of one image.
pub struct Lines {
    loader: addr2line::Loader,
    /// (address, size, name), sorted.
    symbols: Vec<(u64, u64, String)>,
}

/// An image whose debug information cannot be read.
#[derive(Debug)]
pub struct UnreadableDebugInfo {
    /// The image.
    pub image: PathBuf,
    /// Why, in the reader's words.
    pub reason: String,
}

impl fmt::Display for UnreadableDebugInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: cannot read its debug information: {}", self.image.display(), self.reason)
    }
}

impl std::error::Error for UnreadableDebugInfo {}

impl Lines {
    /// Opens `image`, whose ELF (symbol table) is `elf`.
    pub fn open(image: &Path, elf: &Elf) -> Result<Self, UnreadableDebugInfo> {
        Self::with_symbols(image, elf.table.iter().map(|s| (u64::from(s.addr), u64::from(s.size), s.name.clone())))
    }

    /// Opens `image` with its symbols `(address, size, name)`; those of
    /// size 0 name nothing.
    fn with_symbols(image: &Path, symbols: impl IntoIterator<Item = (u64, u64, String)>) -> Result<Self, UnreadableDebugInfo> {
        let loader = addr2line::Loader::new(image).map_err(|e| UnreadableDebugInfo { image: image.to_path_buf(), reason: e.to_string() })?;
        let mut symbols: Vec<(u64, u64, String)> = symbols.into_iter().filter(|s| s.1 > 0).collect();
        symbols.sort();
        Ok(Self { loader, symbols })
    }

    /// The symbol holding `a`, else `a` in hex.
    fn symbol(&self, a: u64) -> String {
        let i = self.symbols.partition_point(|s| s.0 <= a);
        i.checked_sub(1).map(|i| &self.symbols[i]).filter(|s| a < s.0 + s.1).map_or_else(|| format!("0x{a:x}"), |s| s.2.clone())
    }

    /// The inline stack at `a`, innermost first (never empty): a function
    /// the DWARF names none for, and an address without DWARF (one frame,
    /// no file), is named by the symbol holding it, else by the address
    /// in hex.
    pub fn frames(&self, a: u64) -> Vec<Frame> {
        let mut out = crate::dwarf::frames(&self.loader, a, || self.symbol(a));
        if out.is_empty() {
            out.push(Frame { function: self.symbol(a), file: None, line: None });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn here() -> usize {
        here as fn() -> usize as usize
    }

    /// This test program as an image: its path and `here`'s address in
    /// the file (the program is mapped at a base).
    fn this_program() -> (PathBuf, u64) {
        let (path, base) = crate::process::object_at(here()).unwrap();
        (PathBuf::from(path), (here() - base) as u64)
    }

    #[test]
    fn an_address_with_dwarf_is_its_lines_innermost_first() {
        let (exe, a) = this_program();
        let lines = Lines::with_symbols(&exe, []).unwrap();
        let frames = lines.frames(a);
        let f = &frames[0];
        assert!(f.function.ends_with("here") && f.file.as_deref().is_some_and(|p| p.ends_with("image.rs")) && f.line.is_some(), "{frames:?}");
    }

    #[test]
    fn an_address_without_dwarf_is_its_symbol_else_its_address() {
        let (exe, _) = this_program();
        // Far past the program's code: no DWARF covers it.
        let far = 0x7f00_0000_0000;
        let lines = Lines::with_symbols(&exe, [(far, 0x10, "blob".to_owned()), (far + 0x100, 0, "empty".to_owned())]).unwrap();
        assert_eq!(lines.frames(far + 4), [Frame { function: "blob".into(), file: None, line: None }]);
        assert_eq!(lines.frames(far + 0x10)[0].function, "0x7f0000000010");
        assert_eq!(lines.frames(far + 0x100)[0].function, "0x7f0000000100");
        assert_eq!(lines.frames(far - 1)[0].function, "0x7effffffffff");
    }

    #[test]
    fn an_image_without_debug_information_is_an_error_naming_it() {
        let e = Lines::with_symbols(Path::new("/nonexistent/image.elf"), []).err().unwrap();
        assert_eq!(e.image, Path::new("/nonexistent/image.elf"));
        assert!(e.to_string().starts_with("/nonexistent/image.elf: cannot read its debug information: "), "{e}");
    }
}
