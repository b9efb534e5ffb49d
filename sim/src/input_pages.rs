//! What a run compares its inputs with: the page hashes its sanitizer
//! took at the kernel's first raw pointer (`neuron_hal_mock::sanitizer`,
//! which says why then), or those a staging caller gave as it wrote the
//! input. A run that made no raw pointer compares nothing: every store
//! into an input was a hook's, a finding of its own.

use neuron_hal_mock::sanitizer::{hashes_at, InputHashes};
pub use neuron_hal_mock::sanitizer::{page_hashes, PAGE};
use neuron_hal_mock::MockSoc;
use std::string::String;
use std::vec::Vec;

/// Page hashes of an input a staging caller placed: `(base, len,
/// hashes)`, as it wrote it.
pub type Placed = (u64, u64, Vec<u64>);

/// The page hashes of a run's inputs, as they were before any store no
/// hook saw.
#[derive(Default)]
pub struct InputPages(Vec<InputHashes>);

impl InputPages {
    /// The hashes to compare after a run: those its sanitizer `taken` at
    /// the first raw pointer (`None`: it made none, and nothing is
    /// compared), each input's replaced by the caller's where `given`
    /// has the same place (all of `given` used up: a later run has its own).
    pub fn of_run(taken: Option<Vec<InputHashes>>, given: &mut Vec<Placed>) -> Self {
        let mut given = core::mem::take(given);
        let Some(mut taken) = taken else { return Self::default() };
        for t in &mut taken {
            if let Some(i) = given.iter().position(|g| g.0 == t.base && g.1 == t.len) {
                t.pages = given.swap_remove(i).2;
            }
        }
        Self(taken)
    }

    /// The inputs whose pages changed since their hashes: the name and
    /// the byte range (in the tensor) from the first changed page to the
    /// end of the last.
    pub fn changed(&self, soc: &MockSoc) -> Vec<(String, u64, u64)> {
        self.0
            .iter()
            .filter_map(|t| {
                let now = hashes_at(soc, t.base, t.len);
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

    fn input(soc: &MockSoc, base: u64, len: u64) -> InputHashes {
        InputHashes { name: "argument 0".into(), base, len, pages: hashes_at(soc, base, len) }
    }

    #[test]
    fn a_changed_byte_names_its_page() {
        let soc = MockSoc::new().unwrap();
        let base = soc.platform().hbm_soc_base + (1 << 30);
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(base, &[7u8; 10_000]) }.unwrap();
        let p = InputPages::of_run(Some(std::vec![input(&soc, base, 10_000)]), &mut Vec::new());
        assert!(p.changed(&soc).is_empty());
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(base + 5000, &[8]) }.unwrap();
        assert_eq!(p.changed(&soc), [("argument 0".into(), 4096, 8192)]);
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(base + 9999, &[8]) }.unwrap();
        assert_eq!(p.changed(&soc), [("argument 0".into(), 4096, 10_000)]);
    }

    #[test]
    fn no_raw_pointer_compares_nothing_and_given_hashes_replace_the_taken() {
        let soc = MockSoc::new().unwrap();
        let base = soc.platform().hbm_soc_base + (1 << 30);
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(base, &data) }.unwrap();
        let len = data.len() as u64;
        let mut given = std::vec![(base, len, hashes_at(&soc, base, len))];
        given[0].2[36] ^= 1;
        // No raw pointer: nothing compared, the given hashes used up.
        let p = InputPages::of_run(None, &mut given);
        assert!(given.is_empty() && p.changed(&soc).is_empty());
        // Taken, and given for the same place: the given ones count.
        let mut given = std::vec![(base, len, hashes_at(&soc, base, len))];
        given[0].2[36] ^= 1;
        let p = InputPages::of_run(Some(std::vec![input(&soc, base, len)]), &mut given);
        assert!(given.is_empty());
        assert_eq!(p.changed(&soc), [("argument 0".into(), 36 * PAGE, 37 * PAGE)]);
    }
}
