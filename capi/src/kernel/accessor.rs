//! The per-element accessor (`accessor<T, N>`): the element's offset is
//! computed inline from the geometry decided when the accessor was made
//! ([`Layout`]: bounds-checked, 32-bit when the tensor's byte size allows),
//! and the one translate happens at the leaf, in [`ElemRef::get`] /
//! [`ElemRef::set`] ([`Leaf`]: an inline check of the context in place,
//! the full translate otherwise). No NX pointer outlives the access.
//!
//! Element references and partly indexed accessors borrow their accessor,
//! so none outlives its coherency registration. A const accessor's
//! elements have no `set`:
//!
//! ```compile_fail,E0599
//! # use neuron_capi::kernel::*;
//! fn write(t: Tensor) -> Result<()> {
//!     let acc = t.const_accessor::<f32, 1>()?;
//!     acc.at(0)?.set(1.0) // no `set` on a read-only element
//! }
//! ```
//!
//! ```compile_fail,E0597
//! # use neuron_capi::kernel::*;
//! fn escape(t: Tensor) -> Result<f32> {
//!     let e = { let acc = t.accessor::<f32, 1>()?; acc.elem([0])? }; // `acc` dropped while borrowed
//!     e.get()
//! }
//! ```

use super::layout::{Dims, Layout};
use super::leaf::Leaf;
use super::{Element, Result};
use crate::binding::with_core;
use core::marker::PhantomData;
use core::mem::size_of;
use neuron_runtime::access::index::check_view;
use neuron_runtime::access::AccessorKind;
use neuron_runtime::marshal::tensor::TensorView;
use neuron_runtime::Error;

/// The access mode of an accessor's elements: [`ReadWrite`] or
/// [`ReadOnly`].
pub trait Mode: sealed::Sealed {}

/// Elements of an `accessor<T, N>()`: read and written.
#[derive(Clone, Copy, Debug)]
pub enum ReadWrite {}

/// Elements of a const `accessor<T, N>()`: read only.
#[derive(Clone, Copy, Debug)]
pub enum ReadOnly {}

impl Mode for ReadWrite {}
impl Mode for ReadOnly {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ReadWrite {}
    impl Sealed for super::ReadOnly {}
}

/// One element of a tensor, by offset; borrows its accessor. Reading or
/// writing it is one translate plus one volatile access.
#[derive(Debug)]
pub struct ElemRef<'a, T, M: Mode = ReadWrite> {
    leaf: &'a Leaf,
    off: u64,
    _t: PhantomData<(T, M)>,
}

impl<T, M: Mode> Clone for ElemRef<'_, T, M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, M: Mode> Copy for ElemRef<'_, T, M> {}

impl<T: Element, M: Mode> ElemRef<'_, T, M> {
    /// Reads the element.
    #[inline(always)]
    pub fn get(&self) -> Result<T> {
        match self.leaf.cached::<T>(self.off as usize) {
            // SAFETY: `p` maps this element now (the leaf just checked
            // it) and is aligned (the accessor checked the storage's
            // alignment; offsets are multiples of the element size); no
            // reference is formed and the pointer is not kept.
            Some(p) => Ok(unsafe { p.cast::<T>().read_volatile() }),
            None => read_slow(self.leaf, self.off),
        }
    }
}

impl<T: Element> ElemRef<'_, T, ReadWrite> {
    /// Writes the element.
    #[inline(always)]
    pub fn set(&self, v: T) -> Result<()> {
        match self.leaf.cached::<T>(self.off as usize) {
            Some(p) => {
                // SAFETY: as in `get`.
                unsafe { p.cast::<T>().write_volatile(v) };
                Ok(())
            }
            None => write_slow(self.leaf, self.off, v),
        }
    }
}

/// [`ElemRef::get`] through the full translate (out of line: the inline
/// part stays the cached hit).
#[inline(never)]
fn read_slow<T: Element>(leaf: &Leaf, off: u64) -> Result<T> {
    let p = leaf.translate(off)?;
    // SAFETY: as in `ElemRef::get`; `p` was just translated.
    Ok(unsafe { p.cast::<T>().read_volatile() })
}

/// [`ElemRef::set`] through the full translate.
#[inline(never)]
fn write_slow<T: Element>(leaf: &Leaf, off: u64, v: T) -> Result<()> {
    let p = leaf.translate(off)?;
    // SAFETY: as in `ElemRef::get`; `p` was just translated.
    unsafe { p.cast::<T>().write_volatile(v) };
    Ok(())
}

/// A partly indexed accessor: the dimensions left and the offset so far.
#[derive(Debug)]
pub struct SubAccessor<'a, T, M: Mode = ReadWrite> {
    dims: Dims<'a>,
    leaf: &'a Leaf,
    off: u64,
    _t: PhantomData<(T, M)>,
}

impl<T, M: Mode> Clone for SubAccessor<'_, T, M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, M: Mode> Copy for SubAccessor<'_, T, M> {}

impl<'a, T: Element, M: Mode> SubAccessor<'a, T, M> {
    /// Peels the outermost remaining dimension: `acc[i]`.
    #[inline(always)]
    pub fn at(&self, i: i64) -> Result<SubAccessor<'a, T, M>> {
        if self.dims.is_empty() {
            return Err(Error::RankMismatch);
        }
        let (dims, off) = self.dims.peel(self.off, i).ok_or(Error::IndexOutOfBounds)?;
        Ok(Self { dims, off, ..*self })
    }

    /// The element, once every dimension is indexed.
    #[inline(always)]
    pub fn elem(&self) -> Result<ElemRef<'a, T, M>> {
        if !self.dims.is_empty() {
            return Err(Error::RankMismatch);
        }
        Ok(ElemRef { leaf: self.leaf, off: self.off, _t: PhantomData })
    }

    /// Reads the element (every dimension indexed).
    #[inline(always)]
    pub fn get(&self) -> Result<T> {
        self.elem()?.get()
    }
}

impl<T: Element> SubAccessor<'_, T, ReadWrite> {
    /// Writes the element (every dimension indexed).
    #[inline(always)]
    pub fn set(&self, v: T) -> Result<()> {
        self.elem()?.set(v)
    }
}

/// What both accessor forms hold: the coherency registration (released
/// on drop), the geometry and the leaf.
#[derive(Debug)]
struct Registered<const N: usize> {
    addr: u64,
    layout: Layout<N>,
    leaf: Leaf,
}

impl<const N: usize> Registered<N> {
    fn new<T: Element>(view: &TensorView) -> Result<Self> {
        let addr = view.storage.addr;
        with_core(|b| {
            check_view(view, N, T::DTYPE.code(), size_of::<T>() as u64)?;
            b.state.accessor_register(addr, AccessorKind::Unbuffered)
        })?;
        let layout = Layout::new(view, size_of::<T>() as u64);
        Ok(Self { addr, layout, leaf: Leaf::new(view.storage.ctx, addr, layout.extent()) })
    }

    #[inline(always)]
    fn elem<T, M: Mode>(&self, idx: [i64; N]) -> Result<ElemRef<'_, T, M>> {
        if let Some(off) = self.layout.offset32(idx) {
            return Ok(ElemRef { leaf: &self.leaf, off: off as u64, _t: PhantomData });
        }
        self.elem_wide(idx)
    }

    /// [`Registered::elem`] for a wide layout, or an index out of bounds.
    #[inline(never)]
    fn elem_wide<T, M: Mode>(&self, idx: [i64; N]) -> Result<ElemRef<'_, T, M>> {
        let off = self.layout.offset(idx).ok_or(Error::IndexOutOfBounds)?;
        Ok(ElemRef { leaf: &self.leaf, off, _t: PhantomData })
    }

    /// Reads the element at `idx`: inline when the offset is 32-bit and
    /// the leaf's cached base still maps the tensor.
    #[inline(always)]
    fn get<T: Element>(&self, idx: [i64; N]) -> Result<T> {
        match self.layout.offset32(idx) {
            Some(off) => match self.leaf.cached::<T>(off as usize) {
                // SAFETY: as in `ElemRef::get`.
                Some(p) => Ok(unsafe { p.cast::<T>().read_volatile() }),
                None => read_slow(&self.leaf, off as u64),
            },
            None => self.get_slow(idx),
        }
    }

    #[inline(never)]
    fn get_slow<T: Element>(&self, idx: [i64; N]) -> Result<T> {
        self.elem_wide::<T, ReadOnly>(idx)?.get()
    }

    /// Writes the element at `idx` (as `get`).
    #[inline(always)]
    fn set<T: Element>(&self, idx: [i64; N], v: T) -> Result<()> {
        match self.layout.offset32(idx) {
            Some(off) => match self.leaf.cached::<T>(off as usize) {
                Some(p) => {
                    // SAFETY: as in `ElemRef::get`.
                    unsafe { p.cast::<T>().write_volatile(v) };
                    Ok(())
                }
                None => write_slow(&self.leaf, off as u64, v),
            },
            None => self.set_slow(idx, v),
        }
    }

    #[inline(never)]
    fn set_slow<T: Element>(&self, idx: [i64; N], v: T) -> Result<()> {
        self.elem_wide::<T, ReadWrite>(idx)?.set(v)
    }

    #[inline(always)]
    fn at<T: Element, M: Mode>(&self, i: i64) -> Result<SubAccessor<'_, T, M>> {
        SubAccessor { dims: self.layout.dims(), leaf: &self.leaf, off: 0, _t: PhantomData }.at(i)
    }
}

impl<const N: usize> Drop for Registered<N> {
    fn drop(&mut self) {
        let _ = with_core(|b| b.state.accessor_release(self.addr, AccessorKind::Unbuffered));
    }
}

/// `accessor<T, N>()`: read/write per-element access to an `N`-dimensional
/// tensor of `T`. It borrows the tensor's storage for `'a`:
///
/// ```
/// use neuron_capi::kernel::{ops, Dtype, Result};
/// fn f() -> Result<()> {
///     let t = ops::zeros(&[4], Dtype::Fp32)?;
///     let acc = t.tensor().accessor::<f32, 1>()?;
///     acc.set([0], 1.0)
/// }
/// ```
///
/// so neither it, nor a stream or TCM accessor, outlives an
/// `OwnedTensor` it came from (issue 43, hole 6):
///
/// ```compile_fail,E0597
/// use neuron_capi::kernel::{ops, Dtype, Result};
/// fn f() -> Result<()> {
///     let acc = {
///         let t = ops::zeros(&[4], Dtype::Fp32)?;
///         t.tensor().accessor::<f32, 1>()?
///     };
///     acc.set([0], 1.0)
/// }
/// ```
///
/// ```compile_fail,E0597
/// use neuron_capi::kernel::{ops, Dtype, Result};
/// fn f() -> Result<()> {
///     let mut w = {
///         let t = ops::zeros(&[4], Dtype::Fp32)?;
///         t.tensor().write_stream_accessor::<f32>()?
///     };
///     w.write(1.0)
/// }
/// ```
///
/// ```compile_fail,E0597
/// use neuron_capi::kernel::{ops, Dtype, Result};
/// fn f() -> Result<()> {
///     let tcm = {
///         let t = ops::zeros(&[4], Dtype::Fp32)?;
///         t.tensor().tcm_accessor()
///     };
///     tcm.tcm_to_tensor(&[1.0f32; 4], 0)
/// }
/// ```
#[derive(Debug)]
pub struct Accessor<'a, T, const N: usize> {
    reg: Registered<N>,
    /// The tensor's storage, borrowed: the accessor keeps a copy of its
    /// view, so it must not outlive an `OwnedTensor` it came from.
    _t: PhantomData<(T, &'a ())>,
}

impl<T: Element, const N: usize> Accessor<'_, T, N> {
    pub(crate) fn new(view: &TensorView) -> Result<Self> {
        Ok(Self { reg: Registered::new::<T>(view)?, _t: PhantomData })
    }

    /// `acc[i]`: peels the outermost dimension.
    #[inline(always)]
    pub fn at(&self, i: i64) -> Result<SubAccessor<'_, T>> {
        self.reg.at(i)
    }

    /// The element at `idx` (`acc[i][j]...`).
    #[inline(always)]
    pub fn elem(&self, idx: [i64; N]) -> Result<ElemRef<'_, T>> {
        self.reg.elem(idx)
    }

    /// Reads the element at `idx`.
    #[inline(always)]
    pub fn get(&self, idx: [i64; N]) -> Result<T> {
        self.reg.get(idx)
    }

    /// Writes the element at `idx`.
    #[inline(always)]
    pub fn set(&self, idx: [i64; N], v: T) -> Result<()> {
        self.reg.set(idx, v)
    }
}

/// The const `accessor<T, N>()`: read-only.
#[derive(Debug)]
pub struct ConstAccessor<'a, T, const N: usize> {
    reg: Registered<N>,
    /// As [`Accessor`]'s: the storage, borrowed.
    _t: PhantomData<(T, &'a ())>,
}

impl<T: Element, const N: usize> ConstAccessor<'_, T, N> {
    pub(crate) fn new(view: &TensorView) -> Result<Self> {
        Ok(Self { reg: Registered::new::<T>(view)?, _t: PhantomData })
    }

    /// `acc[i]`: peels the outermost dimension (read-only).
    #[inline(always)]
    pub fn at(&self, i: i64) -> Result<SubAccessor<'_, T, ReadOnly>> {
        self.reg.at(i)
    }

    /// The element at `idx` (read-only).
    #[inline(always)]
    pub fn elem(&self, idx: [i64; N]) -> Result<ElemRef<'_, T, ReadOnly>> {
        self.reg.elem(idx)
    }

    /// Reads the element at `idx`.
    #[inline(always)]
    pub fn get(&self, idx: [i64; N]) -> Result<T> {
        self.reg.get(idx)
    }
}
