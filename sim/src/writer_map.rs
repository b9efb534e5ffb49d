//! The output drawn by writer: per cell (one output element, or a run of
//! them when the output is larger than [`MAX_CELLS`]), the cores that
//! wrote it and whether any of its elements was left unwritten, written
//! by two cores, or written by a store no hook saw. A report page draws
//! it (`neuron_sim_writer_map`); made only when the caller asked before
//! the run (`Simulator::keep_writer_map`), since it copies the
//! sanitizer's per-element writers.

use neuron_hal_mock::sanitizer::{UNKNOWN_WRITER, UNWRITTEN};
use std::vec::Vec;

/// At most this many cells: a page stays small whatever the output.
pub const MAX_CELLS: usize = 4096;
/// Bits 0-7 of a cell: core `c` wrote one of its elements.
pub const CORE_BITS: u16 = 0xFF;
/// An element of the cell was written by a store no hook saw (a raw
/// pointer): written, its writer unknown.
pub const UNKNOWN: u16 = 1 << 8;
/// An element of the cell was never written.
pub const UNWRITTEN_CELL: u16 = 1 << 9;
/// An element of the cell was written by two or more cores.
pub const TWICE: u16 = 1 << 10;

/// The map of one run's output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriterMap {
    /// The output's elements.
    pub elements: u64,
    /// The cells, in element order; cell `i` covers elements
    /// `[i * elements / cells, (i + 1) * elements / cells)`.
    pub cells: Vec<u16>,
}

/// The map of an output of `seen.len()` elements: `seen` per element the
/// sanitizer's writer bits, `unwritten` the element ranges the run
/// judged never written (an element outside them the hooks saw no write
/// to was written by a store they did not see).
pub fn build(seen: &[u16], unwritten: &[(u64, u64)]) -> WriterMap {
    let n = seen.len();
    let cells = n.min(MAX_CELLS);
    let mut out = std::vec![0u16; cells];
    let mut holes = unwritten.iter().peekable();
    for (i, &s) in seen.iter().enumerate() {
        let e = i as u64;
        while holes.peek().is_some_and(|r| r.1 <= e) {
            holes.next();
        }
        let hole = holes.peek().is_some_and(|r| r.0 <= e);
        let bits = s & CORE_BITS;
        let mut v = bits;
        if hole {
            v |= UNWRITTEN_CELL;
        } else if s == UNWRITTEN || s & UNKNOWN_WRITER != 0 {
            v |= UNKNOWN;
        }
        if bits.count_ones() > 1 {
            v |= TWICE;
        }
        // The cell of element i: floor(i * cells / n), the inverse of the
        // cell's range above.
        out[(i as u128 * cells as u128 / n as u128) as usize] |= v;
    }
    WriterMap { elements: n as u64, cells: out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    #[test]
    fn small_outputs_get_a_cell_per_element() {
        // Core 0, core 1, both, none (judged unwritten), none seen but
        // written (a raw store), unknown writer.
        let m = build(&[1, 2, 3, 0, 0, UNKNOWN_WRITER], &[(3, 4)]);
        assert_eq!(m.elements, 6);
        assert_eq!(m.cells, vec![1, 2, 3 | TWICE, UNWRITTEN_CELL, UNKNOWN, UNKNOWN]);
    }

    #[test]
    fn large_outputs_are_downsampled_to_at_most_max_cells() {
        // 8 cores, each an eighth of 80,000 elements; the last 10 unwritten.
        let n = 80_000usize;
        let seen: Vec<u16> = (0..n).map(|i| if i >= n - 10 { 0 } else { 1 << (i * 8 / n) }).collect();
        let m = build(&seen, &[(n as u64 - 10, n as u64)]);
        assert_eq!(m.cells.len(), MAX_CELLS);
        assert_eq!(m.cells[0], 1);
        assert_eq!(m.cells[MAX_CELLS / 2 + 1], 1 << 4);
        assert_eq!(*m.cells.last().unwrap(), (1 << 7) | UNWRITTEN_CELL);
        // Every core appears.
        assert_eq!(m.cells.iter().fold(0, |a, &c| a | (c & CORE_BITS)), 0xFF);
    }
}
