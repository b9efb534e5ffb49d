//! The TCM accessor (SPEC §8): bulk copies between a tensor and data RAM
//! the kernel took with `tcm_malloc`. Not tracked by the coherency
//! enforcer.

use super::index::flat_range;
use crate::core_state::CoreState;
use crate::error::{Error, Result};
use crate::marshal::tensor::TensorView;
use neuron_hal::Hal;

impl<H: Hal> CoreState<H> {
    fn tcm_span(t: &TensorView, dtype: u8, flat_offset: u64, n: u64) -> Result<(u64, u32)> {
        if t.storage.addr == 0 {
            return Err(Error::NullStorage);
        }
        if t.dtype != dtype {
            return Err(Error::ElementTypeMismatch);
        }
        let (off, len) = flat_range(t.numel, flat_offset, n, t.elem_size as u64)?;
        let len = u32::try_from(len).map_err(|_| Error::SizeOverflow)?;
        Ok((t.storage.addr.checked_add(off).ok_or(Error::IndexOutOfBounds)?, len))
    }

    /// `tensor_to_tcm<T>(tcm, flat_offset, n)`: copies elements
    /// `flat_offset..flat_offset+n` of `t` (dtype `dtype`) to `tcm`.
    ///
    /// # Safety
    /// `tcm` must be valid for writes of `n` elements and not a window view.
    pub unsafe fn tensor_to_tcm(&mut self, t: &TensorView, dtype: u8, tcm: *mut u8, flat_offset: u64, n: u64) -> Result<()> {
        let (src, len) = Self::tcm_span(t, dtype, flat_offset, n)?;
        if tcm.is_null() && len != 0 {
            return Err(Error::DmaUnreachable);
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.memcpy_from_soc(tcm, src, len) }
    }

    /// `tcm_to_tensor<T>(tcm, flat_offset, n)`: copies `n` elements from
    /// `tcm` to elements `flat_offset..` of `t`.
    ///
    /// # Safety
    /// `tcm` must be valid for reads of `n` elements and not a window view.
    pub unsafe fn tcm_to_tensor(&mut self, t: &TensorView, dtype: u8, tcm: *const u8, flat_offset: u64, n: u64) -> Result<()> {
        let (dst, len) = Self::tcm_span(t, dtype, flat_offset, n)?;
        if tcm.is_null() && len != 0 {
            return Err(Error::DmaUnreachable);
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.memcpy_to_soc(dst, tcm, len) }
    }
}
