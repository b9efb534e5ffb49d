//! The layout check of a kernel's FLL images: xtask's check of the Rust
//! example's images (`xtask/src/fll_check.rs`), applied to the C++ ones.

use super::images::Linked;
// `shared` names `super::elf` and `super::layout`.
use super::{elf, layout};

#[path = "../../../xtask/src/fll_check.rs"]
mod shared;

/// The problems of `images` (one line each; empty: every section in its
/// window, no overlap, vector pages identical), also checking that each
/// of `symbols` is in each image's code window.
pub fn fll(images: &[Linked], symbols: &[&str]) -> Vec<String> {
    let v: Vec<shared::Image> = images.iter().map(|i| shared::Image { layout: &i.layout, elf: &i.elf, bytes: &i.bytes }).collect();
    shared::check(&v, symbols)
}
