//! Index math of the accessors (SPEC §8): offsets on 64-bit SoC addresses,
//! bounds checked, no memory access. Indexing peels one dimension at a
//! time: `addr + sizeof(T) · stride[k] · i`; the element's address is
//! `storage + sizeof(T) · Σ stride[k]·idx[k]`.

use crate::error::{Error, Result};
use crate::marshal::tensor::{TensorView, MAX_DIMS};

/// Peels one dimension: the address of slice `i` of a dimension of `size`
/// entries `stride` elements apart, starting at `addr`.
pub fn peel(addr: u64, size: i64, stride: i64, i: i64, elem_size: u64) -> Result<u64> {
    if i < 0 || i >= size || stride < 0 {
        return Err(Error::IndexOutOfBounds);
    }
    let step = (stride as u64).checked_mul(elem_size).and_then(|s| s.checked_mul(i as u64)).ok_or(Error::IndexOutOfBounds)?;
    addr.checked_add(step).ok_or(Error::IndexOutOfBounds)
}

/// Byte offset of the element at `idx` (one index per dimension).
pub fn element_offset(sizes: &[i64], strides: &[i64], idx: &[i64], elem_size: u64) -> Result<u64> {
    if idx.len() != sizes.len() || sizes.len() != strides.len() {
        return Err(Error::RankMismatch);
    }
    let mut off = 0u64;
    for ((&s, &st), &i) in sizes.iter().zip(strides).zip(idx) {
        off = peel(off, s, st, i, elem_size)?;
    }
    Ok(off)
}

/// The byte range `[off, off + len)` of `n` elements from `flat_offset`
/// in a tensor of `numel` elements.
pub fn flat_range(numel: i64, flat_offset: u64, n: u64, elem_size: u64) -> Result<(u64, u64)> {
    let end = flat_offset.checked_add(n).ok_or(Error::IndexOutOfBounds)?;
    if numel < 0 || end > numel as u64 {
        return Err(Error::IndexOutOfBounds);
    }
    let off = times_elem(flat_offset, elem_size).ok_or(Error::IndexOutOfBounds)?;
    let len = times_elem(n, elem_size).ok_or(Error::IndexOutOfBounds)?;
    Ok((off, len))
}

/// `x * elem_size`, checked. The element sizes that marshal are 1, 2, 4
/// and 8: a constant shift each, where a 32-bit core's 64-bit multiply
/// (or a variable 64-bit shift) is a call or a long sequence.
#[inline]
fn times_elem(x: u64, elem_size: u64) -> Option<u64> {
    match elem_size {
        1 => Some(x),
        2 => (x >> 63 == 0).then_some(x << 1),
        4 => (x >> 62 == 0).then_some(x << 2),
        8 => (x >> 61 == 0).then_some(x << 3),
        _ => x.checked_mul(elem_size),
    }
}

/// Checks that a tensor can be viewed as `N`-dimensional elements of
/// `elem_size` bytes of dtype `dtype`: rank, dtype, alignment.
pub fn check_view(t: &TensorView, rank: usize, dtype: u8, elem_size: u64) -> Result<()> {
    if t.storage.addr == 0 {
        return Err(Error::NullStorage);
    }
    if t.dtype != dtype || t.elem_size as u64 != elem_size {
        return Err(Error::ElementTypeMismatch);
    }
    if rank != t.num_dim as usize || rank > MAX_DIMS {
        return Err(Error::RankMismatch);
    }
    if elem_size == 0 || !t.storage.addr.is_multiple_of(elem_size) {
        return Err(Error::Misaligned);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn peel_steps_by_stride_and_checks_bounds() {
        assert_eq!(peel(0x1000, 4, 6, 3, 4), Ok(0x1000 + 3 * 6 * 4));
        assert_eq!(peel(0x1000, 4, 6, 4, 4), Err(Error::IndexOutOfBounds));
        assert_eq!(peel(0x1000, 4, 6, -1, 4), Err(Error::IndexOutOfBounds));
        assert_eq!(peel(u64::MAX - 3, 4, 1, 1, 8), Err(Error::IndexOutOfBounds), "address overflow");
        assert_eq!(peel(0, i64::MAX, i64::MAX, i64::MAX - 1, 8), Err(Error::IndexOutOfBounds));
    }

    #[test]
    fn times_elem_is_the_checked_product() {
        for es in [1u64, 2, 3, 4, 8, 0] {
            for x in [0u64, 1, 7, u64::MAX / 8, u64::MAX / 8 + 1, u64::MAX / 4, u64::MAX / 2 + 1, u64::MAX] {
                assert_eq!(times_elem(x, es), x.checked_mul(es), "{x} * {es}");
            }
        }
    }

    #[test]
    fn flat_range_bounds() {
        assert_eq!(flat_range(10, 2, 8, 4), Ok((8, 32)));
        assert_eq!(flat_range(10, 2, 9, 4), Err(Error::IndexOutOfBounds));
        assert_eq!(flat_range(10, u64::MAX, 2, 4), Err(Error::IndexOutOfBounds));
        assert_eq!(flat_range(10, 10, 0, 4), Ok((40, 0)));
    }

    proptest! {
        /// Peeling dimension by dimension equals the closed formula
        /// sizeof(T) · Σ stride[k]·idx[k] for row-major shapes.
        #[test]
        fn peeling_is_the_closed_formula(shape in proptest::collection::vec(1i64..7, 1..=8), seed in any::<u64>(), es in prop::sample::select(vec![1u64, 2, 4, 8])) {
            let n = shape.len();
            let mut strides = vec![0i64; n];
            let mut s = 1;
            for k in (0..n).rev() { strides[k] = s; s *= shape[k]; }
            let idx: Vec<i64> = shape.iter().enumerate().map(|(k, &d)| ((seed >> (k * 8)) as i64).rem_euclid(d)).collect();
            let want: i64 = strides.iter().zip(&idx).map(|(a, b)| a * b).sum::<i64>() * es as i64;
            prop_assert_eq!(element_offset(&shape, &strides, &idx, es), Ok(want as u64));
            let mut bad = idx.clone();
            bad[n - 1] = shape[n - 1];
            prop_assert_eq!(element_offset(&shape, &strides, &bad, es), Err(Error::IndexOutOfBounds));
        }
    }
}
