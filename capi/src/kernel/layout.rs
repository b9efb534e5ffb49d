//! The per-element accessor's index arithmetic, decided once when the
//! accessor is made: sizes and byte strides per dimension, the byte
//! extent, and whether every offset fits 32 bits (the tensor's byte size
//! does), in which case each index costs one 32-bit compare and one
//! multiply-add on the Xtensa core, never a library call.

use neuron_runtime::marshal::tensor::TensorView;

/// An `N`-dimensional tensor's geometry in bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout<const N: usize> {
    sizes: [u64; N],
    strides: [u64; N],
    /// `sizes` when the layout is narrow, else 0 (every 32-bit index
    /// check fails and the access takes the 64-bit path).
    sizes32: [u32; N],
    /// `strides` truncated (exact when narrow).
    strides32: [u32; N],
    /// Bytes from the first element to the end of the last; `None` for a
    /// tensor with no element (every index is out of bounds).
    extent: Option<u64>,
    /// Every in-bounds offset, and the extent, fit in 32 bits.
    narrow: bool,
}

/// A dimension view of a [`Layout`], what a partly indexed accessor holds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims<'a> {
    sizes: &'a [u64],
    strides: &'a [u64],
    narrow: bool,
}

impl<const N: usize> Layout<N> {
    /// The geometry of `view` (rank `N`, checked by the caller) for
    /// elements of `elem` bytes. A view whose sizes or strides are
    /// negative, or whose extent overflows 64 bits, gets no element: every
    /// index is then refused as out of bounds, as the peel did.
    pub(crate) fn new(view: &TensorView, elem: u64) -> Self {
        let mut sizes = [0u64; N];
        let mut strides = [0u64; N];
        let mut last = Some(0u64);
        for k in 0..N {
            let (size, stride) = (view.sizes.get(k).copied().unwrap_or(0), view.strides.get(k).copied().unwrap_or(0));
            let (Ok(size), Ok(stride)) = (u64::try_from(size), u64::try_from(stride)) else {
                last = None;
                break;
            };
            let step = stride.checked_mul(elem);
            sizes[k] = size;
            strides[k] = step.unwrap_or(0);
            last = match (last, step, size.checked_sub(1)) {
                (Some(l), Some(s), Some(n)) => s.checked_mul(n).and_then(|d| l.checked_add(d)),
                _ => None,
            };
        }
        let extent = last.and_then(|l| l.checked_add(elem)).filter(|&e| view.storage.addr.checked_add(e).is_some());
        if extent.is_none() {
            sizes = [0; N];
        }
        let narrow = extent.is_some_and(|e| e <= u32::MAX as u64);
        let (mut sizes32, mut strides32) = ([0u32; N], [0u32; N]);
        for k in 0..N {
            sizes32[k] = if narrow { sizes[k] as u32 } else { 0 };
            strides32[k] = strides[k] as u32;
        }
        Self { sizes, strides, sizes32, strides32, extent, narrow }
    }

    /// Bytes from the first element to the end of the last.
    pub(crate) fn extent(&self) -> Option<u64> {
        self.extent
    }

    /// The byte offset of the element at `idx` in 32 bits: `None` when an
    /// index is out of its dimension or the layout is not narrow (then
    /// [`Layout::offset`] decides). No flag is tested: a wide layout's
    /// 32-bit sizes are 0.
    #[inline(always)]
    pub(crate) fn offset32(&self, idx: [i64; N]) -> Option<u32> {
        // Unrolled by hand for the usual ranks (at opt-level "s" the loop
        // stays a loop).
        match N {
            1 => self.dim32(0, idx[0]),
            2 => Some(self.dim32(0, idx[0])?.wrapping_add(self.dim32(1, idx[1])?)),
            3 => Some(self.dim32(0, idx[0])?.wrapping_add(self.dim32(1, idx[1])?).wrapping_add(self.dim32(2, idx[2])?)),
            _ => {
                let mut off = 0u32;
                for (k, &i) in idx.iter().enumerate() {
                    // In bounds, so at most the extent: no overflow.
                    off = off.wrapping_add(self.dim32(k, i)?);
                }
                Some(off)
            }
        }
    }

    /// Dimension `k`'s part of the 32-bit offset (`k < N`).
    #[cfg(target_arch = "xtensa")]
    #[inline(always)]
    fn dim32(&self, k: usize, i: i64) -> Option<u32> {
        let i = u32::try_from(i).ok()?;
        if i >= *self.sizes32.get(k)? {
            return None;
        }
        Some(i.wrapping_mul(*self.strides32.get(k)?))
    }

    /// Dimension `k`'s part of the 32-bit offset (`k < N`). The host's
    /// form: one 64-bit compare (a negative or 32-bit-overflowing index is
    /// at least 2^32 as `u64`, so past any 32-bit size) instead of the
    /// device's high-word test then 32-bit compare.
    #[cfg(not(target_arch = "xtensa"))]
    #[inline(always)]
    fn dim32(&self, k: usize, i: i64) -> Option<u32> {
        if i as u64 >= u64::from(*self.sizes32.get(k)?) {
            return None;
        }
        Some((i as u32).wrapping_mul(*self.strides32.get(k)?))
    }

    /// The byte offset of the element at `idx`, in 64 bits; `None` when
    /// an index is out of its dimension.
    pub(crate) fn offset(&self, idx: [i64; N]) -> Option<u64> {
        let mut off = 0u64;
        for ((&i, &size), &stride) in idx.iter().zip(&self.sizes).zip(&self.strides) {
            let i = u64::try_from(i).ok()?;
            if i >= size {
                return None;
            }
            off = off.wrapping_add(i.wrapping_mul(stride));
        }
        Some(off)
    }

    /// All dimensions, for peeling one at a time.
    pub(crate) fn dims(&self) -> Dims<'_> {
        Dims { sizes: &self.sizes, strides: &self.strides, narrow: self.narrow }
    }
}

impl<'a> Dims<'a> {
    /// Whether every dimension is indexed.
    pub(crate) fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// Peels the outermost dimension at `i`: the dimensions left and the
    /// offset added to `off`. `None` when `i` is out of bounds or no
    /// dimension is left.
    #[inline(always)]
    pub(crate) fn peel(&self, off: u64, i: i64) -> Option<(Dims<'a>, u64)> {
        let (&size, sizes) = self.sizes.split_first()?;
        let (&stride, strides) = self.strides.split_first()?;
        let i = u64::try_from(i).ok().filter(|&i| i < size)?;
        // In bounds, so `off` stays within the extent: no overflow.
        let step = if self.narrow { (i as u32).wrapping_mul(stride as u32) as u64 } else { i.wrapping_mul(stride) };
        Some((Dims { sizes, strides, narrow: self.narrow }, off.wrapping_add(step)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use neuron_runtime::access::index::element_offset;
    use neuron_runtime::Q7PtrType;

    fn view(sizes: &[i64], addr: u64) -> TensorView {
        // SAFETY: plain data; all zeroes is a valid view.
        let mut v: TensorView = unsafe { core::mem::zeroed() };
        let mut s = 1;
        for k in (0..sizes.len()).rev() {
            v.sizes[k] = sizes[k];
            v.strides[k] = s;
            s *= sizes[k].max(0);
        }
        v.num_dim = sizes.len() as u8;
        v.storage = Q7PtrType { addr, ctx: core::ptr::null_mut() };
        v
    }

    #[test]
    fn offsets_are_the_peel_formula_narrow_and_wide() {
        for (shape, addr) in [([3i64, 5], 0x1000u64), ([70_000, 70_000], 0x1000)] {
            let v = view(&shape, addr);
            let l = Layout::<2>::new(&v, 4);
            let narrow = shape[0] == 3;
            assert_eq!(l.narrow, narrow);
            for idx in [[0i64, 0], [2, 4], [1, 3], [shape[0] - 1, shape[1] - 1]] {
                let want = element_offset(&v.sizes[..2], &v.strides[..2], &idx, 4).unwrap();
                assert_eq!(l.offset(idx), Some(want), "{shape:?} {idx:?}");
                assert_eq!(l.offset32(idx), narrow.then_some(want as u32), "{shape:?} {idx:?}");
                let (d, o) = l.dims().peel(0, idx[0]).unwrap();
                let (d, o) = d.peel(o, idx[1]).unwrap();
                assert!(d.is_empty());
                assert_eq!(o, want);
            }
            for bad in [[shape[0], 0], [0, shape[1]], [-1, 0], [0, -1], [i64::MAX, 0], [i64::MIN, 0], [1 << 32, 0], [(1 << 32) + 1, 1], [1, (1 << 32) + 1]] {
                assert_eq!((l.offset(bad), l.offset32(bad)), (None, None), "{shape:?} {bad:?}");
            }
            assert_eq!(l.extent(), Some((shape[0] * shape[1] * 4) as u64));
        }
    }

    #[test]
    fn negative_or_overflowing_geometry_has_no_element() {
        let mut v = view(&[4], 0x1000);
        v.strides[0] = -1;
        assert_eq!(Layout::<1>::new(&v, 4).offset([0]), None);
        let v = view(&[4], u64::MAX - 8);
        let l = Layout::<1>::new(&v, 4);
        assert_eq!((l.offset([0]), l.extent()), (None, None));
        let v = view(&[0], 0x1000);
        assert_eq!(Layout::<1>::new(&v, 4).offset([0]), None);
    }
}
