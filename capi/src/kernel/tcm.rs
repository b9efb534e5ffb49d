//! The TCM accessor and `tcm_malloc` memory: the fast path (bulk copies
//! between a tensor and data RAM the kernel owns).

use super::{Element, Result};
use crate::binding::with_core;
use core::marker::PhantomData;
use core::mem::size_of;
use core::ptr::NonNull;
use neuron_runtime::marshal::tensor::TensorView;

/// Where [`TcmBuf`]s are made: lent by [`tcm_scope`] for the length of its
/// closure, on the core bound when it began. A buffer borrows the scope,
/// so none outlives the closure, and with it the core's binding: not past
/// `SimCore::enter`, a simulator's reset or its drop (issue 43, hole 1).
///
/// ```
/// use neuron_capi::kernel::{tcm_scope, TcmBuf};
/// // No core bound here: the scope makes no buffer.
/// let n = tcm_scope(|s| s.buf::<f32>(4).map(|b| b.len()));
/// assert_eq!(n, None);
/// ```
///
/// A buffer cannot leave its scope:
///
/// ```compile_fail
/// use neuron_capi::kernel::{tcm_scope, TcmBuf};
/// let kept: Option<TcmBuf<'_, f32>> = tcm_scope(|s| s.buf::<f32>(4));
/// ```
///
/// nor be made without one (the old `TcmBuf::new`):
///
/// ```compile_fail,E0599
/// use neuron_capi::kernel::TcmBuf;
/// let b = TcmBuf::<f32>::new(4);
/// ```
#[derive(Debug)]
pub struct TcmScope {
    /// The slot bound when the scope began (host): a buffer is made only
    /// while it is still the one bound, so every buffer of the scope is
    /// the data RAM of a core the scope's caller has bound (and borrowed)
    /// throughout.
    #[cfg(not(target_arch = "xtensa"))]
    slot: *const (),
    /// Not `Send`: a scope stays on its thread, with its binding.
    _thread: PhantomData<*mut ()>,
}

/// Runs `f` with a [`TcmScope`], which makes `tcm_malloc` buffers that
/// cannot outlive `f`.
#[inline(always)]
pub fn tcm_scope<R>(f: impl for<'s> FnOnce(&'s TcmScope) -> R) -> R {
    let scope = TcmScope {
        #[cfg(not(target_arch = "xtensa"))]
        slot: crate::binding::bound_slot(),
        _thread: PhantomData,
    };
    f(&scope)
}

impl TcmScope {
    /// `tcm_malloc(len · sizeof(T))`, zeroed; `None` when the pool is
    /// exhausted, or when the core bound is not the scope's (host).
    pub fn buf<T: Element>(&self, len: usize) -> Option<TcmBuf<'_, T>> {
        #[cfg(not(target_arch = "xtensa"))]
        if self.slot.is_null() || crate::binding::bound_slot() != self.slot {
            return None;
        }
        let bytes = len.checked_mul(size_of::<T>())?;
        let ptr = with_core(|b| Ok(b.tcm_alloc(bytes))).ok().flatten()?.cast::<T>();
        // SAFETY: a fresh block of `bytes` bytes, 64-byte aligned.
        unsafe { ptr.as_ptr().cast::<u8>().write_bytes(0, bytes) };
        Some(TcmBuf { ptr, len, _scope: PhantomData })
    }
}

/// `len` elements of `T` from `tcm_malloc` (zeroed), freed on drop, made
/// by a [`TcmScope`] and living no longer than it. Data RAM is the core's
/// own memory, directly addressable: it derefs to a slice.
#[derive(Debug)]
pub struct TcmBuf<'s, T> {
    ptr: NonNull<T>,
    len: usize,
    _scope: PhantomData<&'s TcmScope>,
}

impl<T> core::ops::Deref for TcmBuf<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised Ts (zeroed at creation, all-zero is a
        // valid element), owned by this buffer, in the data RAM of the
        // scope's core, which stays bound (and live) while the scope is.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> core::ops::DerefMut for TcmBuf<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; `&mut self` makes the access exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for TcmBuf<'_, T> {
    fn drop(&mut self) {
        // Under another core's binding (a nested enter) the free is
        // refused as foreign: the block leaks until the reset, harmlessly.
        let _ = with_core(|b| b.state.tcm_free(self.ptr.as_ptr().cast()));
    }
}

/// `tcm_accessor()`: not tracked by the coherency enforcer.
#[derive(Clone, Copy, Debug)]
pub struct TcmAccessor<'a> {
    view: TensorView,
    /// The tensor's storage, borrowed: not past an `OwnedTensor`.
    _p: PhantomData<&'a ()>,
}

impl TcmAccessor<'_> {
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
