//! The check of a set of per-core FLL images (`fll-cpu0..7`, optionally
//! `fll-single`): every allocated section inside its layout's window
//! (`.vectors` in `iram0_0_seg`), the per-core images not overlapping,
//! the named symbols inside each image's code window, the vector pages
//! byte-identical and not empty.
//!
//! Used by `cargo xtask fll-check` (the Rust example op) and
//! `customop build --target q7` (C++ kernels).

use crate::elf::Elf;
use crate::layout::Layout;

/// One linked image.
pub struct Image<'a> {
    /// Its layout's name (`fll-cpu3`, `fll-single`).
    pub layout: &'a Layout,
    /// The parsed image.
    pub elf: &'a Elf,
    /// The file it was parsed from.
    pub bytes: &'a [u8],
}

/// The problems found, one line each; empty means all good.
pub fn check(images: &[Image], symbols: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut spans: Vec<(&str, String, u64, u64)> = Vec::new();
    let mut vectors: Option<(&str, &[u8])> = None;
    for im in images {
        let (name, l) = (im.layout.name.as_str(), im.layout);
        let (lo, hi) = (l.sram.origin as u64, l.sram.origin as u64 + l.sram.length as u64);
        for s in im.elf.sections.iter().filter(|s| s.alloc && s.size > 0) {
            let (a, e) = (s.addr as u64, s.addr as u64 + s.size as u64);
            if s.name == ".vectors" {
                if a != l.iram.origin as u64 || e > (l.iram.origin as u64 + l.iram.length as u64) {
                    problems.push(format!("{name}: .vectors at 0x{a:08x}..0x{e:08x}, not in iram0_0_seg"));
                }
                continue;
            }
            if a < lo || e > hi {
                problems.push(format!("{name}: {} at 0x{a:08x}..0x{e:08x} outside [0x{lo:08x}, 0x{hi:08x})", s.name));
            }
            if name != "fll-single" {
                spans.push((name, s.name.clone(), a, e));
            }
        }
        for sym in symbols {
            if !im.elf.symbols.get(*sym).is_some_and(|&v| (v as u64) >= lo && (v as u64) < hi) {
                problems.push(format!("{name}: {sym} missing or outside the code window"));
            }
        }
        match im.elf.section_bytes(im.bytes, ".vectors") {
            None => problems.push(format!("{name}: no .vectors")),
            Some([]) => problems.push(format!("{name}: empty vector page")),
            Some(v) => match vectors {
                None => vectors = Some((name, v)),
                Some((first, fv)) if fv != v => problems.push(format!("{name}: vector page differs from {first}'s")),
                Some(_) => {}
            },
        }
    }
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            if a.2 < b.3 && b.2 < a.3 && a.0 != b.0 {
                problems.push(format!("{} {} overlaps {} {}", a.0, a.1, b.0, b.1));
            }
        }
    }
    problems
}
