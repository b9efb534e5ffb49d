//! The sanitizer's backstop for the inputs: a hash of every 4 KiB page of
//! each input tensor, taken at the run's first raw pointer and compared
//! after the run. A store into an input through a pointer no hook sees
//! changes a page's hash; the run then fails naming the argument and the
//! bytes of the pages that changed. A page, not the byte: the device has
//! nothing finer to compare with, and keeping a copy of every input would
//! double the run's memory.
//!
//! Only a pointer whose accesses nothing notes can write unseen, and the
//! runtime says when it hands kernel code one (`Hal::note_raw_pointer`):
//! before that moment every store into an input was a hook's (a finding
//! of its own), so the hashes are taken then, once per run, and a run
//! that never makes such a pointer (a kernel of accessors, TCM copies
//! and streams) hashes nothing (issue 28: two passes over every input).

use crate::soc::MockSoc;
use std::string::String;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::vec::Vec;

/// The hashing granule.
pub const PAGE: u64 = 4096;

/// From this many bytes an input is hashed on two threads.
const PARALLEL: u64 = 8 << 20;

/// Appends the hash of each [`PAGE`] of `data` (the last may be short) to
/// `out`: an input's pages as the sanitizer compares them.
pub fn page_hashes(data: &[u8], out: &mut Vec<u64>) {
    out.extend(data.chunks(PAGE as usize).map(xxhash_rust::xxh3::xxh3_64));
}

/// The page hashes of SoC `[base, base + len)` as it holds now (zeros for
/// a range outside the SoC's memory, which nothing can change either).
pub fn hashes_at(soc: &MockSoc, base: u64, len: u64) -> Vec<u64> {
    let Some(p) = soc.soc_ptr(base, len) else {
        return std::vec![0; len.div_ceil(PAGE) as usize];
    };
    // SAFETY: soc_ptr resolved [base, base + len) to host memory the SoC
    // maps for its lifetime. Hashed in place, no copy of the tensor. At a
    // first raw pointer other cores may still run; a store of theirs into
    // an input is a hook's (no other pointer exists yet), itself a finding.
    let bytes = unsafe { core::slice::from_raw_parts(p, len as usize) };
    let hash = |b: &[u8]| {
        let mut v = Vec::with_capacity(b.len().div_ceil(PAGE as usize));
        page_hashes(b, &mut v);
        v
    };
    // A large input in two halves on two threads: half the time.
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

/// One input's page hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputHashes {
    /// The region's name ("argument 0").
    pub name: String,
    /// Its SoC address.
    pub base: u64,
    /// Its bytes.
    pub len: u64,
    /// The hash of each of its pages.
    pub pages: Vec<u64>,
}

/// The hashes a run took at its first raw pointer.
#[derive(Debug, Default)]
pub(super) struct Taken {
    /// Taken this run (read first: every raw pointer asks).
    done: AtomicBool,
    hashes: Mutex<Option<Vec<InputHashes>>>,
}

impl Taken {
    /// Forgets the last run's (a run begins).
    pub(super) fn reset(&self) {
        *self.hashes.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.done.store(false, Ordering::Release);
    }

    /// Takes the hashes with `hash` unless this run did: a core that asks
    /// meanwhile waits for them, so no raw pointer exists before they do.
    pub(super) fn once(&self, hash: impl FnOnce() -> Vec<InputHashes>) {
        if self.done.load(Ordering::Acquire) {
            return;
        }
        let mut g = self.hashes.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(hash());
        }
        self.done.store(true, Ordering::Release);
    }

    /// The hashes taken this run, if a raw pointer was made (once).
    pub(super) fn take(&self) -> Option<Vec<InputHashes>> {
        self.hashes.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_input_hashed_in_halves_is_hashed_page_by_page() {
        let soc = MockSoc::new().unwrap();
        let base = soc.platform().hbm_soc_base + (1 << 30);
        let len = PARALLEL + 3 * PAGE + 100;
        let data: Vec<u8> = (0..len).map(|i| (i * 13 % 253) as u8).collect();
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(base, &data) }.unwrap();
        let mut want = Vec::new();
        page_hashes(&data, &mut want);
        assert_eq!(hashes_at(&soc, base, len), want);
        assert_eq!(want.len() as u64, len.div_ceil(PAGE));
        assert_eq!(hashes_at(&soc, u64::MAX - 10, 5), [0], "outside the SoC: zeros, one per page");
    }

    #[test]
    fn hashes_are_taken_once_a_run_and_read_once() {
        let t = Taken::default();
        let one = || std::vec![InputHashes { name: "argument 0".into(), base: 1, len: 2, pages: std::vec![3] }];
        assert_eq!(t.take(), None, "no raw pointer: nothing taken");
        t.once(one);
        t.once(|| unreachable!("taken already this run"));
        assert_eq!(t.take(), Some(one()));
        assert_eq!(t.take(), None);
        t.reset();
        t.once(Vec::new);
        assert_eq!(t.take(), Some(Vec::new()));
    }
}
