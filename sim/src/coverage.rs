//! Output coverage: which output elements a run never wrote. Before the
//! run the simulator fills the output with a sentinel byte; after it, an
//! element whose every byte still holds the sentinel was never written.
//! (A kernel that writes exactly the sentinel bytes into an element is
//! indistinguishable from one that skipped it; the caller picks the byte
//! with `fill_output` when its data could hold the default.)

use neuron_hal_mock::MockSoc;
use std::string::String;
use std::vec::Vec;

/// The sentinel a run fills the output with unless the caller chose one.
pub const DEFAULT_SENTINEL: u8 = 0xFF;

/// How many bytes are read (or written) at a time, so a large output
/// never needs one large host buffer. A multiple of every element size.
pub const CHUNK: usize = 1 << 20;

/// How many ranges a message lists before it only counts the rest.
const LISTED_RANGES: usize = 8;

/// Fills `len` bytes at SoC `addr` with `byte`, in place.
///
/// # Safety
/// As [`MockSoc::fill`]: no core runs over the range meanwhile.
pub(crate) unsafe fn fill(soc: &MockSoc, addr: u64, len: u64, byte: u8) -> std::io::Result<()> {
    // SAFETY: the caller's contract.
    unsafe { soc.fill(addr, len, byte) }
}

/// The never-written elements of `len` bytes at `addr` (elements of
/// `elem` bytes) as half-open element ranges, in order.
pub fn unwritten(soc: &MockSoc, addr: u64, len: u64, elem: u64, sentinel: u8) -> std::io::Result<Vec<(u64, u64)>> {
    let elem = elem.max(1);
    let p = soc.soc_ptr(addr, len).ok_or_else(|| std::io::Error::other(std::format!("SoC address {addr:#x} is neither HBM nor SBUF")))?;
    // SAFETY: as in `fill`: mapped for the SoC's lifetime, no core runs.
    let bytes = unsafe { core::slice::from_raw_parts(p, len as usize) };
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    // Read in place, a piece at a time: a piece without the sentinel byte
    // anywhere (the usual case) is passed over whole.
    for (n, piece) in bytes.chunks(CHUNK).enumerate() {
        if !piece.contains(&sentinel) {
            continue;
        }
        let first = (n * CHUNK) as u64 / elem;
        for (j, e) in piece.chunks(elem as usize).enumerate() {
            if e.iter().all(|&b| b == sentinel) {
                let i = first + j as u64;
                match ranges.last_mut() {
                    Some(r) if r.1 == i => r.1 = i + 1,
                    _ => ranges.push((i, i + 1)),
                }
            }
        }
    }
    Ok(ranges)
}

pub fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        let (lo, hi) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if lo < hi {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// "875 of 1000 output elements were never written: [125, 1000)".
pub fn message(ranges: &[(u64, u64)], total: u64) -> String {
    let missing: u64 = ranges.iter().map(|r| r.1 - r.0).sum();
    let mut m = std::format!("{missing} of {total} output elements were never written: ");
    for (i, r) in ranges.iter().take(LISTED_RANGES).enumerate() {
        if i > 0 {
            m.push_str(", ");
        }
        m.push_str(&std::format!("[{}, {})", r.0, r.1));
    }
    if ranges.len() > LISTED_RANGES {
        m.push_str(&std::format!(", ... ({} more ranges)", ranges.len() - LISTED_RANGES));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    #[test]
    fn intersection_of_range_lists() {
        assert_eq!(intersect(&[(0, 10), (20, 30)], &[(5, 25)]), vec![(5, 10), (20, 25)]);
        assert_eq!(intersect(&[(0, 1)], &[(1, 2)]), vec![]);
        assert_eq!(intersect(&[(3, 4), (113, 114)], &[(113, 114)]), vec![(113, 114)]);
    }

    #[test]
    fn fills_and_scans_in_place() {
        let soc = MockSoc::new().unwrap();
        let base = soc.platform().hbm_soc_base + (1 << 30);
        // A zero fill of memory never written leaves it a hole (zeros).
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { fill(&soc, base, 1 << 16, 0) }.unwrap();
        assert!(soc.is_hole(base, 1 << 16));
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { fill(&soc, base, 1 << 16, 0xFF) }.unwrap();
        assert!(!soc.is_hole(base, 1 << 16));
        assert_eq!(unwritten(&soc, base, 1 << 16, 4, 0xFF).unwrap(), vec![(0, 1 << 14)]);
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(base + 8, &[0; 8]) }.unwrap();
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(base + (1 << 16) - 2, &[1]) }.unwrap();
        assert_eq!(unwritten(&soc, base, 1 << 16, 4, 0xFF).unwrap(), vec![(0, 2), (4, (1 << 14) - 1)]);
        // A zero fill of written memory is made.
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { fill(&soc, base, 1 << 16, 0) }.unwrap();
        assert_eq!(unwritten(&soc, base, 1 << 16, 4, 0).unwrap(), vec![(0, 1 << 14)]);
    }

    #[test]
    fn message_names_ranges_and_counts_the_rest() {
        assert_eq!(message(&[(125, 1000)], 1000), "875 of 1000 output elements were never written: [125, 1000)");
        let many: Vec<(u64, u64)> = (0..10).map(|i| (2 * i, 2 * i + 1)).collect();
        let m = message(&many, 20);
        assert!(m.starts_with("10 of 20 output elements were never written: [0, 1), [2, 3)"), "{m}");
        assert!(m.ends_with(", ... (2 more ranges)"), "{m}");
    }
}
