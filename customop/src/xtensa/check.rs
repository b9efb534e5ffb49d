//! The layout check of a kernel's FLL images: the check `cargo xtask
//! fll-check` applies to the Rust example's images
//! (`neuron_image::fll_check`), applied to the C++ ones.

use super::images::Linked;
use neuron_image::fll_check::{self, Image};

/// The problems of `images` (one line each; empty: every section in its
/// window, no overlap, vector pages identical), also checking that each
/// of `symbols` is in each image's code window.
pub fn fll(images: &[Linked], symbols: &[&str]) -> Vec<String> {
    let v: Vec<Image> = images.iter().map(|i| Image { layout: &i.layout, elf: &i.elf, bytes: &i.bytes }).collect();
    fll_check::check(&v, symbols)
}
