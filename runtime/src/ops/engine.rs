//! The elementwise engine under every tensor operation: the operands are
//! staged chunk by chunk into data RAM with `neuron_memcpy` (the TCM
//! accessor's pattern: one bulk transfer per chunk each way), combined
//! element by element, and the chunk is written back to the destination.

use super::elem::Elem;
use crate::core_state::CoreState;
use crate::error::{Error, Result};
use crate::marshal::dtype::Dtype;
use crate::marshal::tensor::TensorView;
use core::mem::size_of;
use neuron_hal::Hal;

/// Bytes staged per operand per chunk (defined here).
pub const CHUNK_BYTES: usize = 2048;

/// The dtype of `t`, if it is one of the eight.
pub fn dtype_of(t: &TensorView) -> Result<Dtype> {
    Dtype::marshallable(t.dtype).ok_or(Error::DtypeNotMarshallable)
}

/// Checks that every operand has `dst`'s dtype and shape, and a storage.
pub fn check_operands(dst: &TensorView, srcs: &[&TensorView]) -> Result<Dtype> {
    let d = dtype_of(dst)?;
    for t in srcs.iter().copied().chain(core::iter::once(dst)) {
        if t.storage.addr == 0 {
            return Err(Error::NullStorage);
        }
        if t.dtype != dst.dtype {
            return Err(Error::ElementTypeMismatch);
        }
        if t.shape() != dst.shape() || t.numel != dst.numel {
            return Err(Error::ShapeMismatch);
        }
    }
    if dst.numel < 0 || (dst.numel as u64).checked_mul(d.elem_size() as u64).is_none() {
        return Err(Error::BadShape);
    }
    Ok(d)
}

impl<H: Hal> CoreState<H> {
    /// `dst[i] = f(i, a[i], b[i])` over every element, where a missing
    /// operand reads as the element of `dst`'s type with value 0 (and is
    /// not read from memory). Operands must have been checked with
    /// [`check_operands`]; `T` must be their element type.
    ///
    /// # Safety
    /// As [`CoreState::op_fill`]: `dst` names a tensor's storage the
    /// caller may write, not memory the runtime or Rust keeps.
    pub unsafe fn elementwise<T: Elem>(
        &mut self,
        dst: &TensorView,
        a: Option<&TensorView>,
        b: Option<&TensorView>,
        mut f: impl FnMut(u64, T, T) -> T,
    ) -> Result<()> {
        let es = size_of::<T>();
        let bufs = [a.is_some(), b.is_some()].iter().filter(|x| **x).count().max(1);
        let block = self.dataram.allocate(CHUNK_BYTES * bufs, 64)?;
        let (ba, bb) = (block.as_ptr(), block.as_ptr().wrapping_add(CHUNK_BYTES));
        let per = CHUNK_BYTES / es;
        let n = dst.numel as u64;
        let zero = T::from_i64(0);
        let mut r = Ok(());
        let mut i = 0u64;
        while i < n && r.is_ok() {
            let k = (n - i).min(per as u64) as usize;
            let off = i * es as u64;
            let bytes = (k * es) as u32;
            r = (|| {
                if let Some(a) = a {
                    // SAFETY: `ba` is a CHUNK_BYTES-long part of a live
                    // data-RAM block owned by this call, and
                    // `bytes <= CHUNK_BYTES`; data RAM is never a window view.
                    unsafe { self.memcpy_from_soc(ba, a.storage.addr + off, bytes)? };
                }
                if let Some(b) = b {
                    let dstb = if a.is_some() { bb } else { ba };
                    // SAFETY: as above, for `bb` (or `ba` when `a` is absent).
                    unsafe { self.memcpy_from_soc(dstb, b.storage.addr + off, bytes)? };
                }
                for j in 0..k {
                    // SAFETY: j < k <= per, so every access is inside the
                    // staged chunk of its buffer.
                    unsafe {
                        let pa = ba.add(j * es);
                        let x = if a.is_some() { T::load(pa) } else { zero };
                        let y = match (a.is_some(), b.is_some()) {
                            (true, true) => T::load(bb.add(j * es)),
                            (false, true) => T::load(pa),
                            _ => zero,
                        };
                        f(i + j as u64, x, y).store(pa);
                    }
                }
                // SAFETY: as above; `ba` holds the `bytes` results.
                unsafe { self.memcpy_to_soc(dst.storage.addr + off, ba, bytes) }
            })();
            i += k as u64;
        }
        let freed = self.dataram.free(block.as_ptr());
        r.and(freed)
    }
}
