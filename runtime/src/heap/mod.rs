//! The three heaps of SPEC §4: first-fit, address-ordered, coalescing,
//! 64-byte aligned, no locks (each core's memory is private).

pub mod dataram;
pub mod first_fit;
pub mod hbm;
mod lent;
pub mod libc;
mod stats;

pub use dataram::DataRamHeap;
pub use hbm::HbmHeap;
pub use lent::HeapMut;
pub use libc::LibcHeap;
pub use stats::HeapStats;

/// Every block starts on this boundary and is a multiple of it in size.
pub const HEAP_ALIGN: usize = 64;

/// Rounds `n` up to a multiple of `align` (a power of two); `None` on overflow.
pub(crate) const fn round_up(n: u64, align: u64) -> Option<u64> {
    match n.checked_add(align - 1) {
        Some(v) => Some(v & !(align - 1)),
        None => None,
    }
}

/// The effective alignment: at least [`HEAP_ALIGN`], a power of two.
pub(crate) fn effective_align(align: usize) -> crate::Result<usize> {
    if align == 0 || align.is_power_of_two() {
        Ok(align.max(HEAP_ALIGN))
    } else {
        Err(crate::Error::BadAlignment)
    }
}

/// `heapless::Vec::insert` without its panicking path: `Err(x)` when the
/// table is full or `i > len` (callers check both first).
pub(crate) fn table_insert<T, const N: usize>(v: &mut heapless::Vec<T, N>, i: usize, x: T) -> Result<(), T> {
    if i > v.len() {
        return Err(x);
    }
    v.push(x)?;
    // Rotate `v[i..]` right by one: the pushed element moves to `i`.
    if let Some((last, rest)) = v.get_mut(i..).and_then(|t| t.split_last_mut()) {
        for e in rest {
            core::mem::swap(e, last);
        }
    }
    Ok(())
}

/// `heapless::Vec::remove` without its panicking path: `None` when
/// `i >= len`.
pub(crate) fn table_remove<T, const N: usize>(v: &mut heapless::Vec<T, N>, i: usize) -> Option<T> {
    // Rotate `v[i..]` left by one: `v[i]` moves to the end, then pops.
    let (first, rest) = v.get_mut(i..).and_then(|t| t.split_first_mut())?;
    let mut prev = first;
    for e in rest {
        core::mem::swap(prev, e);
        prev = e;
    }
    v.pop()
}

#[cfg(test)]
mod tests {
    use super::{table_insert, table_remove};
    use proptest::prelude::*;

    proptest! {
        /// The non-panicking table edits do what `Vec::insert`/`remove` do,
        /// and refuse (rather than panic) where those would panic.
        #[test]
        fn table_edits_match_vec(init in proptest::collection::vec(any::<u8>(), 0..8), ops in proptest::collection::vec((any::<bool>(), 0usize..10, any::<u8>()), 0..24)) {
            let mut t: heapless::Vec<u8, 8> = heapless::Vec::new();
            for &x in &init {
                t.push(x).unwrap();
            }
            let mut model = init.clone();
            for (insert, i, x) in ops {
                if insert {
                    let ok = i <= model.len() && model.len() < 8;
                    prop_assert_eq!(table_insert(&mut t, i, x).is_ok(), ok);
                    if ok {
                        model.insert(i, x);
                    }
                } else {
                    let want = (i < model.len()).then(|| model.remove(i));
                    prop_assert_eq!(table_remove(&mut t, i), want);
                }
                prop_assert_eq!(t.as_slice(), model.as_slice());
            }
        }
    }
}
