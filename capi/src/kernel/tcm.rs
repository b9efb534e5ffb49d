//! The TCM accessor and `tcm_malloc` memory: the fast path (bulk copies
//! between a tensor and data RAM the kernel owns).

use super::{Element, Result};
use crate::binding::with_core;
use core::marker::PhantomData;
use core::mem::size_of;
use core::ptr::NonNull;
use neuron_runtime::marshal::tensor::TensorView;

/// `len` elements of `T` from `tcm_malloc` (zeroed), freed on drop. Data
/// RAM is the core's own memory, directly addressable: it derefs to a
/// slice.
#[derive(Debug)]
pub struct TcmBuf<T> {
    ptr: NonNull<T>,
    len: usize,
}

impl<T: Element> TcmBuf<T> {
    /// `tcm_malloc(len · sizeof(T))`; `None` when the pool is exhausted.
    pub fn new(len: usize) -> Option<Self> {
        let bytes = len.checked_mul(size_of::<T>())?;
        let ptr = with_core(|b| Ok(b.tcm_alloc(bytes))).ok().flatten()?.cast::<T>();
        // SAFETY: a fresh block of `bytes` bytes, 64-byte aligned.
        unsafe { ptr.as_ptr().cast::<u8>().write_bytes(0, bytes) };
        Some(Self { ptr, len })
    }
}

impl<T> core::ops::Deref for TcmBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised Ts (zeroed at creation, all-zero is a
        // valid element), owned by this buffer, in plain data RAM.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> core::ops::DerefMut for TcmBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; `&mut self` makes the access exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for TcmBuf<T> {
    fn drop(&mut self) {
        let _ = with_core(|b| b.state.tcm_free(self.ptr.as_ptr().cast()));
    }
}

/// `tcm_accessor()`: not tracked by the coherency enforcer.
#[derive(Clone, Copy, Debug)]
pub struct TcmAccessor {
    view: TensorView,
    _p: PhantomData<()>,
}

impl TcmAccessor {
    pub(crate) fn new(view: TensorView) -> Self {
        Self { view, _p: PhantomData }
    }

    /// `tensor_to_tcm<T>(tcm, flat_offset, n)` with `n = tcm.len()`.
    pub fn tensor_to_tcm<T: Element>(&self, tcm: &mut [T], flat_offset: u64) -> Result<()> {
        super::tensor::expect_dtype::<T>(&self.view)?;
        // SAFETY: `tcm` is a live exclusive slice of tcm.len() Ts (data RAM
        // or Rust memory, never a window view).
        with_core(|b| unsafe { b.state.tensor_to_tcm(&self.view, T::DTYPE.code(), tcm.as_mut_ptr().cast(), flat_offset, tcm.len() as u64) })
    }

    /// `tcm_to_tensor<T>(tcm, flat_offset, n)` with `n = tcm.len()`.
    pub fn tcm_to_tensor<T: Element>(&self, tcm: &[T], flat_offset: u64) -> Result<()> {
        super::tensor::expect_dtype::<T>(&self.view)?;
        // SAFETY: `tcm` is a live slice of tcm.len() Ts.
        with_core(|b| unsafe { b.state.tcm_to_tensor(&self.view, T::DTYPE.code(), tcm.as_ptr().cast(), flat_offset, tcm.len() as u64) })
    }
}
