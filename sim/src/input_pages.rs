//! The sanitizer's backstop for the inputs: a hash of every 4 KiB page of
//! each input tensor before the run and after it. A store into an input
//! through a raw pointer (no hook sees it) changes a page's hash; the run
//! then fails naming the argument and the bytes of the pages that changed.
//! A page, not the byte: the device has nothing finer to compare with, and
//! keeping a copy of every input would double the run's memory.

use neuron_hal_mock::MockSoc;
use std::string::String;
use std::vec::Vec;

/// The hashing granule.
const PAGE: u64 = 4096;

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

fn hashes(soc: &MockSoc, base: u64, len: u64) -> Vec<u64> {
    // Hashed in place: no copy of the tensor (the cores are not running).
    let Some(p) = soc.soc_ptr(base, len) else {
        return std::vec![0; len.div_ceil(PAGE) as usize];
    };
    // SAFETY: soc_ptr resolved [base, base + len) to host memory the SoC
    // maps for its lifetime; no core runs while the host hashes it.
    let bytes = unsafe { core::slice::from_raw_parts(p, len as usize) };
    bytes.chunks(PAGE as usize).map(xxhash_rust::xxh3::xxh3_64).collect()
}

impl InputPages {
    /// Hashes each `(name, base, len)` input as it is now.
    pub fn take(soc: &MockSoc, inputs: impl IntoIterator<Item = (String, u64, u64)>) -> Self {
        Self(inputs.into_iter().map(|(name, base, len)| Tensor { pages: hashes(soc, base, len), name, base, len }).collect())
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
        let p = InputPages::take(&soc, [("argument 0".into(), base, 10_000)]);
        assert!(p.changed(&soc).is_empty());
        soc.write(base + 5000, &[8]).unwrap();
        assert_eq!(p.changed(&soc), [("argument 0".into(), 4096, 8192)]);
        soc.write(base + 9999, &[8]).unwrap();
        assert_eq!(p.changed(&soc), [("argument 0".into(), 4096, 10_000)]);
    }
}
