//! `Tensor`: a tensor argument or result as the kernel holds it.

use super::accessor::{Accessor, ConstAccessor};
use super::stream::{ReadStream, WriteStream};
use super::tcm::TcmAccessor;
use super::{CoherencePolicy, Dtype, Element, Error, Result};
use crate::binding::with_core;
use core::marker::PhantomData;
use neuron_runtime::marshal::tensor::TensorView;

/// A tensor: sizes, strides, dtype and its storage as a `Q7PtrType`. A
/// plain copy of the view (as C passes tensors by value); the storage is
/// not owned, only borrowed for `'a` (from an [`OwnedTensor`], or for the
/// call for an argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Tensor<'a> {
    view: TensorView,
    storage: PhantomData<&'a ()>,
}

impl<'a> Tensor<'a> {
    /// Wraps a `neuron_tensor`. Its accessors write where the view says,
    /// so safe code cannot make one from any view:
    ///
    /// ```compile_fail,E0133
    /// fn wrap(v: neuron_capi::runtime::marshal::tensor::TensorView) {
    ///     let _t = neuron_capi::kernel::Tensor::from_view(v);
    /// }
    /// ```
    ///
    /// # Safety
    /// The view's storage (`nbytes` from its address, in SoC memory) is a
    /// tensor's for as long as the `Tensor` lives: it holds nothing Rust
    /// owns (not this core's heaps' arenas), and no other owner frees it
    /// meanwhile.
    pub const unsafe fn from_view(view: TensorView) -> Self {
        Self { view, storage: PhantomData }
    }

    /// The C view.
    pub fn view(&self) -> &TensorView {
        &self.view
    }

    /// Sizes, outermost first.
    pub fn sizes(&self) -> &[i64] {
        self.view.shape()
    }

    /// Strides in elements.
    pub fn strides(&self) -> &[i64] {
        &self.view.strides[..self.sizes().len()]
    }

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.sizes().len()
    }

    /// Elements.
    pub fn numel(&self) -> u64 {
        self.view.numel.max(0) as u64
    }

    /// Bytes of the elements.
    pub fn nbytes(&self) -> u64 {
        self.view.nbytes.max(0) as u64
    }

    /// The dtype (`None` for a code outside the table).
    pub fn dtype(&self) -> Option<Dtype> {
        Dtype::marshallable(self.view.dtype)
    }

    /// SoC address of the first element.
    pub fn storage_addr(&self) -> u64 {
        self.view.storage.addr
    }

    /// `accessor<T, N>()`: per-element access; each element read or write
    /// is one translate. Registers with the coherency enforcer.
    pub fn accessor<T: Element, const N: usize>(&self) -> Result<Accessor<'a, T, N>> {
        Accessor::new(&self.view)
    }

    /// The const `accessor<T, N>()`: read-only per-element access.
    pub fn const_accessor<T: Element, const N: usize>(&self) -> Result<ConstAccessor<'a, T, N>> {
        ConstAccessor::new(&self.view)
    }

    /// `read_stream_accessor<T>()`: sequential reads through a data-RAM
    /// buffer.
    #[inline]
    pub fn read_stream_accessor<T: Element>(&self) -> Result<ReadStream<'a, T>> {
        ReadStream::open(&self.view)
    }

    /// `write_stream_accessor<T>()`: sequential writes through a data-RAM
    /// buffer; they reach memory at `close()` or drop.
    #[inline]
    pub fn write_stream_accessor<T: Element>(&self) -> Result<WriteStream<'a, T>> {
        WriteStream::open(&self.view)
    }

    /// `tcm_accessor()`: bulk copies to and from `tcm_malloc` memory.
    pub fn tcm_accessor(&self) -> TcmAccessor<'a> {
        TcmAccessor::new(self.view)
    }

    /// `get_accessor_coherence_policy()`.
    pub fn coherence_policy(&self) -> Result<CoherencePolicy> {
        with_core(|b| Ok(b.state.coherence_policy(self.view.storage.addr)))
    }

    /// `set_accessor_coherence_policy(p)`.
    pub fn set_coherence_policy(&self, p: CoherencePolicy) -> Result<()> {
        with_core(|b| b.state.set_coherence_policy(self.view.storage.addr, p))
    }
}

/// Checks that `view` holds `T`s.
pub(crate) fn expect_dtype<T: Element>(view: &TensorView) -> Result<()> {
    if view.dtype == T::DTYPE.code() {
        Ok(())
    } else {
        Err(Error::ElementTypeMismatch)
    }
}

/// A tensor whose storage the kernel allocated (the factories and the
/// non-`_out` operations); freed on drop. No `Deref` to [`Tensor`]: a
/// `Tensor` copied out of it would outlive the storage; [`tensor`]
/// lends one that cannot:
///
/// ```compile_fail,E0505
/// fn outlives(o: neuron_capi::kernel::OwnedTensor) {
///     let t = o.tensor();
///     drop(o);
///     let _ = t.sizes();
/// }
/// ```
///
/// [`tensor`]: OwnedTensor::tensor
#[derive(Debug)]
pub struct OwnedTensor(TensorView);

impl OwnedTensor {
    /// Takes ownership of a view made by `neuron_tensor_empty`.
    pub(crate) fn from_empty(view: TensorView) -> Self {
        Self(view)
    }

    /// The tensor, borrowed from this owner (it cannot outlive it).
    pub fn tensor(&self) -> Tensor<'_> {
        // SAFETY: the storage is this owner's block of the HBM heap (not
        // an arena Rust allocates from), freed only by `drop`, which the
        // borrow keeps away for the `Tensor`'s life.
        unsafe { Tensor::from_view(self.0) }
    }
}

impl Drop for OwnedTensor {
    fn drop(&mut self) {
        let _ = with_core(|b| crate::factory::tensor_free(b, &self.0));
    }
}
