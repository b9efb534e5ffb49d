//! Tensors the kernel creates (`empty` and the factories built on it):
//! contiguous storage from the core's HBM heap, freed with `tensor_free`.

use crate::core_state::CoreState;
use crate::error::{Error, Result};
use crate::marshal::descriptor::TensorDesc;
use crate::marshal::dtype::Dtype;
use crate::marshal::tensor::{TensorView, MAX_DIMS};
use neuron_hal::Hal;

impl<H: Hal> CoreState<H> {
    /// `empty(shape, dtype)`: an uninitialised contiguous tensor in HBM.
    pub fn tensor_empty(&mut self, dtype: u8, shape: &[i64]) -> Result<TensorView> {
        let d = Dtype::marshallable(dtype).ok_or(Error::DtypeNotMarshallable)?;
        if shape.is_empty() || shape.len() > MAX_DIMS {
            return Err(Error::BadRank);
        }
        let mut sizes = [0u64; MAX_DIMS];
        let mut numel = 1u64;
        for (k, &s) in shape.iter().enumerate() {
            if s <= 0 {
                return Err(Error::BadShape);
            }
            sizes[k] = s as u64;
            numel = numel.checked_mul(s as u64).ok_or(Error::BadShape)?;
        }
        let nbytes = numel.checked_mul(d.elem_size() as u64).filter(|n| *n <= i64::MAX as u64).ok_or(Error::BadShape)?;
        let addr = self.hbm.allocate(nbytes, 64)?;
        let desc = TensorDesc {
            location: crate::marshal::descriptor::Location::Hbm,
            dtype: d,
            num_dim: shape.len() as u8,
            sizes,
            numel,
            nbytes,
            buffer_bytes: nbytes,
            addr,
        };
        let ctx = self.translate_ctx();
        Ok(TensorView::from_desc(&desc, ctx))
    }

    /// Frees a tensor made by [`CoreState::tensor_empty`].
    pub fn tensor_free(&mut self, t: &TensorView) -> Result<()> {
        self.hbm.free(t.storage.addr)
    }
}
