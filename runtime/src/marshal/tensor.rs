//! The tensor a kernel receives: a C-layout view of a validated
//! descriptor, with contiguous strides and the storage as a `Q7PtrType`.

use super::descriptor::{DescCheck, DescWords, TensorDesc};
use crate::translate::{Q7PtrType, TranslationCtx};
use core::mem::{align_of, offset_of, size_of};
use static_assertions::const_assert_eq;

/// Most dimensions a tensor has (the narrow shape's 8).
pub const MAX_DIMS: usize = 8;

/// A marshalled tensor (168 bytes, C layout; crosses the C ABI).
///
/// Sizes and strides are `int64_t` as in `at::IntArrayRef`; strides are in
/// elements, row-major contiguous; entries past `num_dim` are 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct TensorView {
    /// The storage: effective SoC address and the core's context.
    pub storage: Q7PtrType,
    /// Sizes, outermost first.
    pub sizes: [i64; MAX_DIMS],
    /// Strides in elements.
    pub strides: [i64; MAX_DIMS],
    /// Elements.
    pub numel: i64,
    /// Bytes the elements take.
    pub nbytes: i64,
    /// ISA dtype code (one of the eight that marshal).
    pub dtype: u8,
    /// Dimensions in use.
    pub num_dim: u8,
    /// Bytes per element.
    pub elem_size: u8,
    /// 0 = HBM, 1 = SBUF (informational: `storage` is already the
    /// effective SoC address).
    pub location: u8,
    /// 0.
    pub reserved: u32,
}

const_assert_eq!(size_of::<TensorView>(), 168);
const_assert_eq!(align_of::<TensorView>(), 8);
const_assert_eq!(offset_of!(TensorView, storage), 0);
const_assert_eq!(offset_of!(TensorView, sizes), 16);
const_assert_eq!(offset_of!(TensorView, strides), 80);
const_assert_eq!(offset_of!(TensorView, numel), 144);
const_assert_eq!(offset_of!(TensorView, nbytes), 152);
const_assert_eq!(offset_of!(TensorView, dtype), 160);
const_assert_eq!(offset_of!(TensorView, num_dim), 161);
const_assert_eq!(offset_of!(TensorView, elem_size), 162);
const_assert_eq!(offset_of!(TensorView, location), 163);
const_assert_eq!(offset_of!(TensorView, reserved), 164);

impl TensorView {
    /// The zero tensor (null storage, rank 0): what a failed reader gives.
    pub const ZERO: Self = Self {
        storage: Q7PtrType { addr: 0, ctx: core::ptr::null_mut() },
        sizes: [0; MAX_DIMS],
        strides: [0; MAX_DIMS],
        numel: 0,
        nbytes: 0,
        dtype: 0,
        num_dim: 0,
        elem_size: 0,
        location: 0,
        reserved: 0,
    };

    /// The view of the descriptor words `w` that passed the gates as `c`,
    /// written in place into `out` (no descriptor-sized intermediate).
    /// Strides are 32-bit products when the element count fits 32 bits
    /// (every stride is at most numel), else 64-bit. The unused
    /// entries past `num_dim` (size 0) leave the running stride alone
    /// (`max(1)`): the loop runs all MAX_DIMS entries, unrolled.
    #[inline(always)]
    pub fn write_from_check(out: &mut Self, w: &DescWords, c: &DescCheck, ctx: *mut TranslationCtx) {
        out.storage = Q7PtrType { addr: c.addr, ctx };
        out.numel = c.numel as i64;
        out.nbytes = c.nbytes as i64;
        out.dtype = c.dtype.code();
        out.num_dim = c.num_dim;
        out.elem_size = c.dtype.elem_size();
        out.location = c.location as u8;
        out.reserved = 0;
        let n = c.num_dim as usize;
        if c.numel >> 32 == 0 {
            let mut stride = 1u32;
            for k in (0..MAX_DIMS).rev() {
                let (size, st) = if k < n { (c.size(w, k) as u32, stride) } else { (0, 0) };
                out.sizes[k] = size as i64;
                out.strides[k] = st as i64;
                stride = stride.wrapping_mul(size.max(1));
            }
        } else {
            let mut stride = 1i64;
            for k in (0..MAX_DIMS).rev() {
                let (size, st) = if k < n { (c.size(w, k) as i64, stride) } else { (0, 0) };
                out.sizes[k] = size;
                out.strides[k] = st;
                stride = stride.wrapping_mul(size.max(1));
            }
        }
    }

    /// The view of a validated descriptor, translating through `ctx`.
    pub fn from_desc(d: &TensorDesc, ctx: *mut TranslationCtx) -> Self {
        let mut sizes = [0i64; MAX_DIMS];
        let mut strides = [0i64; MAX_DIMS];
        let n = d.num_dim as usize;
        let mut stride = 1i64;
        // Every product here is at most numel, which validation bounded
        // by i64::MAX.
        for k in (0..n.min(MAX_DIMS)).rev() {
            sizes[k] = d.sizes[k] as i64;
            strides[k] = stride;
            stride = stride.wrapping_mul(sizes[k]);
        }
        Self {
            storage: Q7PtrType { addr: d.addr, ctx },
            sizes,
            strides,
            numel: d.numel as i64,
            nbytes: d.nbytes as i64,
            dtype: d.dtype.code(),
            num_dim: d.num_dim,
            elem_size: d.dtype.elem_size(),
            location: d.location as u8,
            reserved: 0,
        }
    }

    /// The sizes in use.
    pub fn shape(&self) -> &[i64] {
        &self.sizes[..(self.num_dim as usize).min(MAX_DIMS)]
    }
}
