//! Addresses of a device image to function and file:line through its
//! DWARF (inlined frames resolved); code without DWARF (the Rust
//! runtime, compiler builtins) to its ELF symbol.

use crate::Frame;
use neuron_image::elf::Elf;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// The symboliser of one image.
pub struct Lines {
    loader: addr2line::Loader,
    /// (address, size, name), sorted.
    symbols: Vec<(u64, u64, String)>,
    /// (address, name) of the code labels (symbols of size 0 in a code
    /// section: the window exception vectors, hand-written entry
    /// points), sorted.
    labels: Vec<(u64, String)>,
    /// [`Lines::frames_by_block`]'s reads, kept: per function (its
    /// symbol's address) its line-table rows, and the frames at a row (a
    /// profile asks for every address of a loop).
    rows: Mutex<HashMap<u64, Arc<Vec<u64>>>>,
    row_frames: Mutex<HashMap<u64, Arc<Vec<Frame>>>>,
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
        let mut lines = Self::with_symbols(image, elf.table.iter().map(|s| (u64::from(s.addr), u64::from(s.size), s.name.clone())))?;
        // A label is in a code section (its end excluded: `_etext`-like
        // marks name nothing).
        let code: Vec<(u32, u32)> =
            elf.sections.iter().filter(|s| s.name.starts_with(".text") || s.name == ".vectors").map(|s| (s.addr, s.addr + s.size)).collect();
        let in_code = |a: u32| code.iter().any(|c| c.0 <= a && a < c.1);
        lines.labels = elf.table.iter().filter(|s| s.size == 0 && in_code(s.addr)).map(|s| (u64::from(s.addr), s.name.clone())).collect();
        lines.labels.sort();
        Ok(lines)
    }

    /// Opens `image` with its symbols `(address, size, name)`; those of
    /// size 0 name nothing.
    fn with_symbols(image: &Path, symbols: impl IntoIterator<Item = (u64, u64, String)>) -> Result<Self, UnreadableDebugInfo> {
        let loader = addr2line::Loader::new(image).map_err(|e| UnreadableDebugInfo { image: image.to_path_buf(), reason: e.to_string() })?;
        let mut symbols: Vec<(u64, u64, String)> = symbols.into_iter().filter(|s| s.1 > 0).collect();
        symbols.sort();
        Ok(Self { loader, symbols, labels: Vec::new(), rows: Mutex::default(), row_frames: Mutex::default() })
    }

    /// The sized symbol holding `a`: (address, size, name).
    fn holding(&self, a: u64) -> Option<&(u64, u64, String)> {
        let i = self.symbols.partition_point(|s| s.0 <= a);
        i.checked_sub(1).map(|i| &self.symbols[i]).filter(|s| a < s.0 + s.1)
    }

    /// The symbol holding `a`, demangled; else the code label at or
    /// before `a` when no sized symbol ends between them (the vector
    /// `_WindowOverflow8` for its handler's code); else `a` in hex.
    fn symbol(&self, a: u64) -> String {
        if let Some(s) = self.holding(a) {
            return crate::dwarf::demangled(&s.2);
        }
        let i = self.symbols.partition_point(|s| s.0 <= a);
        let ended = i.checked_sub(1).map_or(0, |i| self.symbols[i].0 + self.symbols[i].1);
        let j = self.labels.partition_point(|l| l.0 <= a);
        match j.checked_sub(1).map(|j| &self.labels[j]) {
            Some(l) if l.0 >= ended => crate::dwarf::demangled(&l.1),
            _ => format!("0x{a:x}"),
        }
    }

    /// The inline stack at `a`, innermost first (never empty): a function
    /// the DWARF names none for, and an address without DWARF (one frame,
    /// no file), is named by the symbol holding it, else by the code
    /// label before it, else by the address in hex.
    pub fn frames(&self, a: u64) -> Vec<Frame> {
        let mut out = crate::dwarf::frames(&self.loader, a, || self.symbol(a));
        if out.is_empty() {
            out.push(Frame { function: self.symbol(a), file: None, line: None });
        }
        out
    }

    /// As [`frames`](Self::frames), but a frame with a file and no line
    /// at `a` (code the compiler emitted without one, line 0 in the line
    /// table: spills, branches, a loop's bookkeeping) takes the line of
    /// its block, as `perf annotate` and Nsight's source view charge it:
    /// the line that frame has at the nearest row of the line table
    /// before `a` in the same function (its own line there, or the line
    /// that calls what is inlined there), else at the nearest row after.
    /// A frame of a function no row of which has a line keeps none.
    pub fn frames_by_block(&self, a: u64) -> Vec<Frame> {
        let mut out = self.frames(a);
        if out.iter().all(|f| f.file.is_none() || f.line.is_some()) {
            return out;
        }
        let Some(&(lo, size, _)) = self.holding(a) else { return out };
        let rows = Arc::clone(self.rows.lock().unwrap_or_else(PoisonError::into_inner).entry(lo).or_insert_with(|| {
            let mut rows: Vec<u64> = self.loader.find_location_range(lo, lo + size).map(|it| it.map(|(row, _, _)| row).collect()).unwrap_or_default();
            rows.sort_unstable();
            rows.dedup();
            Arc::new(rows)
        }));
        block_lines(&mut out, a, &rows, |r| {
            let cached = self.row_frames.lock().unwrap_or_else(PoisonError::into_inner).get(&r).cloned();
            cached.unwrap_or_else(|| {
                let f = Arc::new(self.frames(r));
                self.row_frames.lock().unwrap_or_else(PoisonError::into_inner).insert(r, Arc::clone(&f));
                f
            })
        });
        out
    }
}

/// Gives each frame of `frames` (the stack at `a`, innermost first) that
/// has a file and no line the line the same frame (the same function and
/// file at the same depth from the outermost) has at the nearest of
/// `rows` (the function's line-table rows, sorted) before `a`, else after
/// it; `frames_at` is the stack at a row.
fn block_lines<F: Borrow<Vec<Frame>>>(frames: &mut [Frame], a: u64, rows: &[u64], frames_at: impl Fn(u64) -> F) {
    let split = rows.partition_point(|&r| r < a);
    let (before, after) = rows.split_at(split);
    let len = frames.len();
    for (i, f) in frames.iter_mut().enumerate() {
        if f.file.is_none() || f.line.is_some() {
            continue;
        }
        let depth = len - 1 - i;
        f.line = before.iter().rev().chain(after.iter().filter(|&&r| r != a)).find_map(|&r| {
            let at = frames_at(r);
            let at: &Vec<Frame> = at.borrow();
            let g = at.len().checked_sub(depth + 1).map(|j| &at[j])?;
            (g.function == f.function && g.file == f.file).then_some(g.line).flatten()
        });
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

    fn frame(function: &str, file: &str, line: Option<u32>) -> Frame {
        Frame { function: function.into(), file: Some(file.into()), line }
    }

    #[test]
    fn a_frame_without_a_line_takes_its_blocks_line() {
        let kernel = |line| frame("relu(at::Tensor const&)", "/k/relu.cpp", line);
        let accessor = |line| frame("at::TensorAccessor<float, 1>::operator[]", "/r/include/ATen/core/TensorAccessor.h", line);
        // Rows: 0x10 the kernel's line 7, 0x20 the accessor inlined at line
        // 9 (its own line 40), 0x30 line 0, 0x40 line 12.
        let at = |r: u64| match r {
            0x10 => vec![kernel(Some(7))],
            0x20 => vec![accessor(Some(40)), kernel(Some(9))],
            0x30 => vec![kernel(None)],
            0x40 => vec![kernel(Some(12))],
            _ => vec![frame("elsewhere", "/k/other.cpp", Some(1))],
        };
        let rows = [0x10, 0x20, 0x30, 0x40];
        // After the inlined accessor: the line that called it.
        let mut f = vec![kernel(None)];
        block_lines(&mut f, 0x30, &rows, at);
        assert_eq!(f, [kernel(Some(9))]);
        // Inside the accessor without a line: the accessor's line before,
        // and the kernel's line, already there, stays.
        let mut f = vec![accessor(None), kernel(Some(9))];
        block_lines(&mut f, 0x24, &rows, at);
        assert_eq!(f, [accessor(Some(40)), kernel(Some(9))]);
        // Before the first row with a line: the nearest after.
        let mut f = vec![kernel(None)];
        block_lines(&mut f, 0x08, &[0x08, 0x10], |r| if r == 0x08 { vec![kernel(None)] } else { at(r) });
        assert_eq!(f, [kernel(Some(7))]);
        // No row of the function with a line: none.
        let mut f = vec![kernel(None)];
        block_lines(&mut f, 0x30, &[0x30], at);
        assert_eq!(f, [kernel(None)]);
        // A frame without a file is left as it is.
        let mut f = vec![Frame { function: "memcpy".into(), file: None, line: None }];
        block_lines(&mut f, 0x30, &rows, at);
        assert_eq!(f[0].line, None);
    }

    #[test]
    fn code_without_a_sized_symbol_is_named_by_the_label_before_it() {
        let (exe, _) = this_program();
        let far = 0x7f00_0000_0000;
        let mut lines = Lines::with_symbols(&exe, [(far + 0x100, 0x10, "sized".to_owned())]).unwrap();
        lines.labels = vec![(far, "_WindowOverflow8".to_owned()), (far + 0x40, "_WindowUnderflow8".to_owned()), (far + 0x104, "inside".to_owned())];
        assert_eq!(lines.frames(far + 0x3f)[0].function, "_WindowOverflow8");
        assert_eq!(lines.frames(far + 0x40)[0].function, "_WindowUnderflow8");
        // A sized symbol wins, and one that ended after the label ends it.
        assert_eq!(lines.frames(far + 0x104)[0].function, "sized");
        assert_eq!(lines.frames(far + 0x110)[0].function, "0x7f0000000110");
        assert_eq!(lines.frames(far - 1)[0].function, "0x7effffffffff");
    }

    #[test]
    fn a_symbol_standing_in_for_a_function_is_demangled() {
        let (exe, _) = this_program();
        let far = 0x7f00_0000_0000;
        let lines = Lines::with_symbols(&exe, [(far, 0x10, "_Z12relu_forwardRKN2at6TensorE".to_owned())]).unwrap();
        assert_eq!(lines.frames(far)[0].function, "relu_forward(at::Tensor const&)");
        // No DWARF there: nothing to take a line from.
        assert_eq!(lines.frames_by_block(far), lines.frames(far));
    }

    #[test]
    fn an_image_without_debug_information_is_an_error_naming_it() {
        let e = Lines::with_symbols(Path::new("/nonexistent/image.elf"), []).err().unwrap();
        assert_eq!(e.image, Path::new("/nonexistent/image.elf"));
        assert!(e.to_string().starts_with("/nonexistent/image.elf: cannot read its debug information: "), "{e}");
    }
}
