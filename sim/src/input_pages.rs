//! The sanitizer's backstop for the inputs: a hash of every 4 KiB page of
//! each input tensor before the run and after it. A store into an input
//! through a raw pointer (no hook sees it) changes a page's hash; the run
//! then fails naming the argument and the bytes of the pages that changed.
//! A page, not the byte: the device has nothing finer to compare with, and
//! keeping a copy of every input would double the run's memory.
//!
//! The hashes before the run are taken as the host places an input
//! ([`place_hashed`]: each piece hashed while the copy has it in cache),
//! so a run reads its inputs once more, after the kernels, not twice.

use neuron_hal_mock::MockSoc;
use std::string::String;
use std::vec::Vec;

/// The hashing granule.
pub const PAGE: u64 = 4096;

/// Appends the hash of each [`PAGE`] of `data` (the last may be short) to
/// `out`: an input's pages as the sanitizer compares them.
pub fn page_hashes(data: &[u8], out: &mut Vec<u64>) {
    out.extend(data.chunks(PAGE as usize).map(xxhash_rust::xxh3::xxh3_64));
}

/// One input's page hashes.
struct Tensor {
    name: String,
    base: u64,
    len: u64,
    pages: Vec<u64>,
}

/// The page hashes of a run's inputs.
#[derive(Default)]
pub struct InputPages(Vec<Tensor>);

/// Page hashes of a placed input: `(base, len, hashes)`, as the host
/// wrote it.
pub type Placed = (u64, u64, Vec<u64>);

/// How much is copied before its pages are hashed: small enough to stay
/// in the cache, large enough for the copy to run at full speed.
const PIECE: usize = 64 << 10;

/// Copies `data` to SoC `base` (a piece at a time through the memory's
/// file, its pages never zeroed, then mapped at once) and hashes its
/// pages as [`InputPages::take`] would hash them there, each piece just
/// after its copy; `None` for a range outside the SoC's memory.
pub fn place_hashed(soc: &MockSoc, base: u64, data: &[u8]) -> Option<Placed> {
    let mut pages = Vec::with_capacity(data.len().div_ceil(PAGE as usize));
    // Pages that hold data already (a reused simulator's kept tensor
    // area), or a piece too small to matter: copied through the mapping,
    // which neither looks up nor locks each page as the file write does.
    let mapped = data.len() < PIECE || soc.is_data(base, data.len() as u64);
    for (i, piece) in data.chunks(PIECE).enumerate() {
        let at = base + (i * PIECE) as u64;
        if mapped { soc.write_mapped(at, piece) } else { soc.write_unmapped(at, piece) }.ok()?;
        page_hashes(piece, &mut pages);
    }
    if !mapped {
        soc.populate(base, data.len() as u64);
    }
    Some((base, data.len() as u64, pages))
}

fn hashes(soc: &MockSoc, base: u64, len: u64) -> Vec<u64> {
    // Hashed in place: no copy of the tensor (the cores are not running).
    let Some(p) = soc.soc_ptr(base, len) else {
        return std::vec![0; len.div_ceil(PAGE) as usize];
    };
    // SAFETY: soc_ptr resolved [base, base + len) to host memory the SoC
    // maps for its lifetime; no core runs while the host hashes it.
    let bytes = unsafe { core::slice::from_raw_parts(p, len as usize) };
    let hash = |b: &[u8]| {
        let mut v = Vec::with_capacity(b.len().div_ceil(PAGE as usize));
        page_hashes(b, &mut v);
        v
    };
    // A large input in two halves on two threads (the host has the cores
    // the kernels just left): the pass after the run in half the time.
    if len < PARALLEL {
        return hash(bytes);
    }
    let (front, back) = bytes.split_at((len as usize / 2).next_multiple_of(PAGE as usize));
    std::thread::scope(|s| {
        let other = std::thread::Builder::new().spawn_scoped(s, || hash(back));
        let mut pages = hash(front);
        match other.ok().and_then(|h| h.join().ok()) {
            Some(rest) => pages.extend(rest),
            None => pages.extend(hash(back)),
        }
        pages
    })
}

/// From this many bytes an input is hashed on two threads.
const PARALLEL: u64 = 8 << 20;

impl InputPages {
    /// Hashes each `(name, base, len)` input as it is now, or takes its
    /// hashes from `placed` when it was placed there since the last run
    /// (nothing writes an input between its placing and the run).
    pub fn take(soc: &MockSoc, inputs: impl IntoIterator<Item = (String, u64, u64)>, placed: &mut Vec<Placed>) -> Self {
        let mut known = core::mem::take(placed);
        Self(
            inputs
                .into_iter()
                .map(|(name, base, len)| {
                    let pages = match known.iter().position(|k| k.0 == base && k.1 == len) {
                        Some(i) => known.swap_remove(i).2,
                        None => hashes(soc, base, len),
                    };
                    Tensor { pages, name, base, len }
                })
                .collect(),
        )
    }

    /// The inputs whose pages changed since [`take`](Self::take): the
    /// name and the byte range (in the tensor) from the first changed page
    /// to the end of the last.
    pub fn changed(&self, soc: &MockSoc) -> Vec<(String, u64, u64)> {
        self.0
            .iter()
            .filter_map(|t| {
                let now = hashes(soc, t.base, t.len);
                let first = now.iter().zip(&t.pages).position(|(a, b)| a != b)? as u64;
                let last = now.iter().zip(&t.pages).rposition(|(a, b)| a != b).unwrap_or(first as usize) as u64;
                Some((t.name.clone(), first * PAGE, ((last + 1) * PAGE).min(t.len)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_byte_names_its_page() {
        let soc = MockSoc::new().unwrap();
        let base = soc.platform().hbm_soc_base + (1 << 30);
        soc.write(base, &[7u8; 10_000]).unwrap();
        let p = InputPages::take(&soc, [("argument 0".into(), base, 10_000)], &mut Vec::new());
        assert!(p.changed(&soc).is_empty());
        soc.write(base + 5000, &[8]).unwrap();
        assert_eq!(p.changed(&soc), [("argument 0".into(), 4096, 8192)]);
        soc.write(base + 9999, &[8]).unwrap();
        assert_eq!(p.changed(&soc), [("argument 0".into(), 4096, 10_000)]);
    }

    #[test]
    fn hashes_taken_while_placing_are_those_of_the_placed_pages() {
        let soc = MockSoc::new().unwrap();
        let base = soc.platform().hbm_soc_base + (1 << 30);
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let placed = place_hashed(&soc, base, &data).unwrap();
        assert_eq!(placed.2, hashes(&soc, base, data.len() as u64));
        let mut known = std::vec![placed];
        let p = InputPages::take(&soc, [("argument 0".into(), base, data.len() as u64)], &mut known);
        assert!(known.is_empty(), "used once: a later run hashes again");
        assert!(p.changed(&soc).is_empty());
        soc.write(base + 150_000, &[0]).unwrap();
        assert_eq!(p.changed(&soc), [("argument 0".into(), 147_456, 151_552)]);
        assert!(place_hashed(&soc, u64::MAX - 10, &data).is_none());
    }

    #[test]
    fn a_large_input_hashed_in_halves_is_hashed_page_by_page() {
        let soc = MockSoc::new().unwrap();
        let base = soc.platform().hbm_soc_base + (1 << 30);
        let len = PARALLEL + 3 * PAGE + 100;
        let data: Vec<u8> = (0..len).map(|i| (i * 13 % 253) as u8).collect();
        let placed = place_hashed(&soc, base, &data).unwrap();
        assert_eq!(hashes(&soc, base, len), placed.2);
        assert_eq!(placed.2.len() as u64, len.div_ceil(PAGE));
    }
}
