//! The output map: one SVG square per cell of the writer map (an element,
//! or a run of them for a large output), coloured by the core that wrote
//! it, and a legend.

use super::esc;

// The cell bits of `neuron_sim_writer_map` (sim/src/writer_map.rs).
const CORE_BITS: u16 = 0xFF;
const UNKNOWN: u16 = 1 << 8;
const UNWRITTEN: u16 = 1 << 9;
const TWICE: u16 = 1 << 10;

/// A cell's class: `c0`..`c7` for one core, `mix` for a run of elements
/// several cores wrote (each its own), `unw`, `twice`, `unk`.
fn class(c: u16) -> String {
    let cores = c & CORE_BITS;
    if c & UNWRITTEN != 0 {
        "unw".into()
    } else if c & TWICE != 0 {
        "twice".into()
    } else if cores.count_ones() == 1 {
        format!("c{}", cores.trailing_zeros())
    } else if cores != 0 {
        "mix".into()
    } else if c & UNKNOWN != 0 {
        "unk".into()
    } else {
        "unw".into()
    }
}

/// The map of an output of `elements` elements drawn from `cells`.
pub fn draw(elements: u64, shape: &[u64], cells: &[u16]) -> String {
    let n = cells.len().max(1);
    // Rows as the output's last dimension lays them out when it fits,
    // else a square-ish grid.
    let last = shape.last().copied().unwrap_or(1) as usize;
    let cols = if cells.len() as u64 == elements && (1..=128).contains(&last) { last } else { (n as f64).sqrt().ceil().max(1.0) as usize };
    let rows = n.div_ceil(cols);
    let size = (640 / cols).clamp(4, 24);
    let mut h = String::new();
    let per = if elements > cells.len() as u64 { format!(" about {} elements each", elements.div_ceil(cells.len().max(1) as u64)) } else { String::new() };
    if per.is_empty() {
        h.push_str(&format!("<p>{elements} elements, one square each, in order, {cols} to a row.</p>\n"));
    } else {
        h.push_str(&format!(
            "<p class=\"downsampled\">Downsampled: {elements} elements drawn as {} squares of{per}, in order, {cols} to a row; \
             a square is marked unwritten or twice-written if any of its elements is.</p>\n",
            cells.len()
        ));
    }
    h.push_str(&format!("<svg class=\"map\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\">\n", cols * size, rows * size));
    let mut seen: Vec<(String, usize)> = Vec::new();
    for (i, &c) in cells.iter().enumerate() {
        let k = class(c);
        match seen.iter_mut().find(|s| s.0 == k) {
            Some(s) => s.1 += 1,
            None => seen.push((k.clone(), 1)),
        }
        let (x, y) = ((i % cols) * size, (i / cols) * size);
        h.push_str(&format!("<rect class=\"{k}\" x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\"/>", size - 1, size - 1));
    }
    h.push_str("\n</svg>\n");
    seen.sort();
    h.push_str("<p class=\"legend\">");
    for (k, count) in &seen {
        let what = match k.as_str() {
            "unw" => "never written".to_owned(),
            "twice" => "written by two cores".to_owned(),
            "mix" => "several cores, each its own elements".to_owned(),
            "unk" => "written by a store no hook saw (writer unknown)".to_owned(),
            c => format!("core {}", &c[1..]),
        };
        h.push_str(&format!("<span class=\"sw {k}\"></span>{} ({count})", esc(&what)));
    }
    h.push_str("</p>\n");
    h
}
