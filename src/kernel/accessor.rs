//! The per-element accessor (`accessor<T, N>`): indexing peels one
//! dimension at a time with 64-bit address arithmetic (no memory, no
//! window touched); the one translate happens at the leaf, in
//! [`ElemRef::get`] / [`ElemRef::set`], and no NX pointer outlives the
//! access (a later translate may reprogram the window).

use super::{check, last_error, Element, Result};
use crate::ffi::access::{neuron_accessor_check, neuron_accessor_register, neuron_accessor_release};
use crate::ffi::translate::neuron_translate;
use core::marker::PhantomData;
use core::mem::size_of;
use neuron_runtime::access::index::peel;
use neuron_runtime::access::AccessorKind;
use neuron_runtime::marshal::tensor::TensorView;
use neuron_runtime::Q7PtrType;

/// One element of a tensor, by address. Reading or writing it is one
/// translate plus one volatile access.
#[derive(Clone, Copy, Debug)]
pub struct ElemRef<T> {
    ptr: Q7PtrType,
    writable: bool,
    _t: PhantomData<T>,
}

impl<T: Element> ElemRef<T> {
    fn nx(&self) -> Result<*mut T> {
        let p = neuron_translate(self.ptr.ctx.cast(), self.ptr.addr);
        if p.is_null() {
            Err(last_error())
        } else {
            Ok(p.cast())
        }
    }

    /// Reads the element.
    pub fn get(&self) -> Result<T> {
        let p = self.nx()?;
        // SAFETY: `p` maps this element (the translate just made it so);
        // the accessor checked alignment; no reference is formed and the
        // pointer is not kept.
        Ok(unsafe { p.read_volatile() })
    }

    /// Writes the element (refused by a const accessor's element).
    pub fn set(&self, v: T) -> Result<()> {
        if !self.writable {
            return Err(neuron_runtime::Error::CoherencyConflict);
        }
        let p = self.nx()?;
        // SAFETY: as in `get`.
        unsafe { p.write_volatile(v) };
        Ok(())
    }
}

/// A partly indexed accessor: the dimensions left and the address so far.
#[derive(Clone, Copy, Debug)]
pub struct SubAccessor<'a, T> {
    sizes: &'a [i64],
    strides: &'a [i64],
    ptr: Q7PtrType,
    writable: bool,
    _t: PhantomData<T>,
}

impl<'a, T: Element> SubAccessor<'a, T> {
    /// Peels the outermost remaining dimension: `acc[i]`.
    pub fn at(&self, i: i64) -> Result<SubAccessor<'a, T>> {
        let (Some(&s), Some(&st)) = (self.sizes.first(), self.strides.first()) else {
            return Err(neuron_runtime::Error::RankMismatch);
        };
        let addr = peel(self.ptr.addr, s, st, i, size_of::<T>() as u64)?;
        Ok(Self { sizes: &self.sizes[1..], strides: &self.strides[1..], ptr: Q7PtrType { addr, ctx: self.ptr.ctx }, ..*self })
    }

    /// The element, once every dimension is indexed.
    pub fn elem(&self) -> Result<ElemRef<T>> {
        if !self.sizes.is_empty() {
            return Err(neuron_runtime::Error::RankMismatch);
        }
        Ok(ElemRef { ptr: self.ptr, writable: self.writable, _t: PhantomData })
    }

    /// Reads the element (every dimension indexed).
    pub fn get(&self) -> Result<T> {
        self.elem()?.get()
    }

    /// Writes the element (every dimension indexed).
    pub fn set(&self, v: T) -> Result<()> {
        self.elem()?.set(v)
    }
}

/// The registration both accessor forms hold; released on drop.
#[derive(Debug)]
struct Registered {
    view: TensorView,
}

impl Registered {
    fn new<T: Element>(view: TensorView, rank: usize) -> Result<Self> {
        // SAFETY: `view` is a live local.
        check(unsafe { neuron_accessor_check(&view, rank as u32, T::DTYPE.code(), size_of::<T>() as u32) })?;
        // SAFETY: as above.
        check(unsafe { neuron_accessor_register(&view, AccessorKind::Unbuffered as u32) })?;
        Ok(Self { view })
    }

    fn root<T>(&self, writable: bool) -> SubAccessor<'_, T> {
        let n = self.view.num_dim as usize;
        SubAccessor { sizes: &self.view.sizes[..n], strides: &self.view.strides[..n], ptr: self.view.storage, writable, _t: PhantomData }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        // SAFETY: `view` is a live field.
        let _ = unsafe { neuron_accessor_release(&self.view, AccessorKind::Unbuffered as u32) };
    }
}

fn leaf<T: Element, const N: usize>(root: SubAccessor<'_, T>, idx: [i64; N]) -> Result<ElemRef<T>> {
    let mut s = root;
    for i in idx {
        s = s.at(i)?;
    }
    s.elem()
}

/// `accessor<T, N>()`: read/write per-element access to an `N`-dimensional
/// tensor of `T`.
#[derive(Debug)]
pub struct Accessor<T, const N: usize> {
    reg: Registered,
    _t: PhantomData<T>,
}

impl<T: Element, const N: usize> Accessor<T, N> {
    pub(crate) fn new(view: TensorView) -> Result<Self> {
        Ok(Self { reg: Registered::new::<T>(view, N)?, _t: PhantomData })
    }

    /// `acc[i]`: peels the outermost dimension.
    pub fn at(&self, i: i64) -> Result<SubAccessor<'_, T>> {
        self.reg.root(true).at(i)
    }

    /// The element at `idx` (`acc[i][j]...`).
    pub fn elem(&self, idx: [i64; N]) -> Result<ElemRef<T>> {
        leaf(self.reg.root(true), idx)
    }

    /// Reads the element at `idx`.
    pub fn get(&self, idx: [i64; N]) -> Result<T> {
        self.elem(idx)?.get()
    }

    /// Writes the element at `idx`.
    pub fn set(&self, idx: [i64; N], v: T) -> Result<()> {
        self.elem(idx)?.set(v)
    }
}

/// The const `accessor<T, N>()`: read-only.
#[derive(Debug)]
pub struct ConstAccessor<T, const N: usize> {
    reg: Registered,
    _t: PhantomData<T>,
}

impl<T: Element, const N: usize> ConstAccessor<T, N> {
    pub(crate) fn new(view: TensorView) -> Result<Self> {
        Ok(Self { reg: Registered::new::<T>(view, N)?, _t: PhantomData })
    }

    /// `acc[i]`: peels the outermost dimension (read-only).
    pub fn at(&self, i: i64) -> Result<SubAccessor<'_, T>> {
        self.reg.root(false).at(i)
    }

    /// Reads the element at `idx`.
    pub fn get(&self, idx: [i64; N]) -> Result<T> {
        leaf(self.reg.root(false), idx)?.get()
    }
}
