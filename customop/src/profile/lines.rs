//! Addresses to function and file:line through the image's DWARF
//! (inlined frames resolved, outermost first); code without DWARF (the
//! Rust runtime, compiler builtins) to its ELF symbol.

use crate::error::{Error, ErrorKind, Result};
use neuron_image::elf::Elf;
use std::path::Path;

/// One frame of an address's inline stack.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Frame {
    /// The function (demangled).
    pub function: String,
    /// The source file ("" without DWARF).
    pub file: String,
    /// The line (0 without DWARF).
    pub line: u32,
}

/// Whether `file` is the library's (its headers, the device libc's and
/// libc++'s, the Rust runtime's) rather than the kernel's: a file without
/// DWARF is the library's too.
pub fn is_library(file: &str) -> bool {
    file.is_empty()
        || file.ends_with(".rs")
        || file.ends_with("/neuroncustomop.hpp")
        || file.ends_with("/neuroncustomop.h")
        || ["/torch/", "/neuron/", "/torchneuron/", "/libcxx/", "/c10/", "/ATen/", "/device-libc/", "/device-libcxx/"].iter().any(|d| file.contains(d))
}

/// The symboliser of one image.
pub struct Lines {
    loader: addr2line::Loader,
    /// (address, size, name), sorted.
    symbols: Vec<(u64, u64, String)>,
}

impl Lines {
    /// Opens `image`.
    pub fn open(image: &Path, elf: &Elf) -> Result<Self> {
        let loader = addr2line::Loader::new(image).map_err(|e| {
            Error::new(
                ErrorKind::BadInput,
                format!("{}: cannot read its debug information for --profile: {e}; rebuild it with `customop build`", image.display()),
            )
        })?;
        let mut symbols: Vec<(u64, u64, String)> = elf.table.iter().filter(|s| s.size > 0).map(|s| (s.addr as u64, s.size as u64, s.name.clone())).collect();
        symbols.sort();
        Ok(Self { loader, symbols })
    }

    fn symbol(&self, a: u64) -> String {
        let i = self.symbols.partition_point(|s| s.0 <= a);
        i.checked_sub(1).map(|i| &self.symbols[i]).filter(|s| a < s.0 + s.1).map_or_else(|| format!("0x{a:x}"), |s| s.2.clone())
    }

    /// The inline stack at `a`, outermost first (never empty).
    pub fn frames(&self, a: u64) -> Vec<Frame> {
        let mut out = Vec::new();
        if let Ok(mut it) = self.loader.find_frames(a) {
            while let Ok(Some(f)) = it.next() {
                let function = f.function.as_ref().and_then(|n| n.demangle().ok().map(|s| s.into_owned())).unwrap_or_else(|| self.symbol(a));
                let (file, line) = f.location.map_or((String::new(), 0), |l| (l.file.unwrap_or("").to_owned(), l.line.unwrap_or(0)));
                out.push(Frame { function, file, line });
            }
        }
        if out.is_empty() {
            out.push(Frame { function: self.symbol(a), file: String::new(), line: 0 });
        }
        out.reverse();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::is_library;

    #[test]
    fn the_tools_headers_are_the_librarys_and_the_kernels_sources_are_not() {
        for f in
            ["/r/include/neuroncustomop.hpp", "/r/include/device-libcxx/vector", "/r/include/device-libc/string.h", "/r/include/torch/torch.h", "", "lib.rs"]
        {
            assert!(is_library(f), "{f}");
        }
        for f in ["/home/me/relu.cpp", "/b/customop-build/ops.cpp", "/home/me/my_neuroncustomop_helpers.hpp"] {
            assert!(!is_library(f), "{f}");
        }
    }
}
