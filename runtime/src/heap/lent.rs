//! [`HeapMut`]: how the state lends one of its heaps. The operations, not
//! the heap: a `&mut` heap could be replaced (`mem::replace`, `mem::swap`
//! with another core's) while its arena holds live blocks, and the next
//! `init_prologue` would build a second allocator over that arena.

use super::{DataRamHeap, HbmHeap, LibcHeap};
use crate::error::Result;
use core::ptr::NonNull;

/// One of a core's heaps, lent for its operations: reads through `Deref`,
/// allocation safely, freeing (which hands memory a live handle may still
/// hold back to the allocator) as `unsafe`. Never the heap itself.
///
/// A heap cannot be replaced through it (issue 43, hole 4):
///
/// ```compile_fail,E0308
/// # fn f(s: &mut neuron_runtime::CoreState<neuron_hal_mock::FakeHal>) {
/// let _old = core::mem::replace(s.libc(), neuron_runtime::heap::LibcHeap::new());
/// # }
/// ```
pub struct HeapMut<'a, H>(&'a mut H);

impl<'a, H> HeapMut<'a, H> {
    /// Lends `h` (the state's accessors).
    #[inline(always)]
    pub(crate) fn new(h: &'a mut H) -> Self {
        Self(h)
    }
}

impl<H> core::ops::Deref for HeapMut<'_, H> {
    type Target = H;
    #[inline(always)]
    fn deref(&self) -> &H {
        self.0
    }
}

impl HeapMut<'_, HbmHeap> {
    /// [`HbmHeap::allocate`].
    #[inline(always)]
    pub fn allocate(&mut self, size: u64, align: usize) -> Result<u64> {
        self.0.allocate(size, align)
    }

    /// [`HbmHeap::free`].
    ///
    /// # Safety
    /// `addr` is not a block a live handle (an `OwnedTensor`, a view or
    /// accessor over it) still uses: the next allocation may return it.
    #[inline(always)]
    pub unsafe fn free(&mut self, addr: u64) -> Result<()> {
        self.0.free(addr)
    }

    /// [`HbmHeap::init`] (once; later calls keep the heap).
    ///
    /// # Safety
    /// `[base, base+size)` is HBM this core owns and nothing else uses:
    /// its blocks are written through translated pointers.
    #[inline(always)]
    pub unsafe fn init(&mut self, base: u64, size: u64) {
        self.0.init(base, size)
    }

    /// [`HbmHeap::restart_stats`].
    pub fn restart_stats(&mut self) {
        self.0.restart_stats()
    }
}

impl<const LIVE: usize> HeapMut<'_, DataRamHeap<LIVE>> {
    /// [`DataRamHeap::allocate`].
    #[inline(always)]
    pub fn allocate(&mut self, size: usize, align: usize) -> Result<NonNull<u8>> {
        self.0.allocate(size, align)
    }

    /// [`DataRamHeap::free`].
    ///
    /// # Safety
    /// `p` is not a block that anything still reads or writes (the TCM
    /// pool is one: its `TcmBuf`s and stream buffers live in it).
    #[inline(always)]
    pub unsafe fn free(&mut self, p: *mut u8) -> Result<()> {
        self.0.free(p)
    }

    /// [`DataRamHeap::restart_stats`].
    pub fn restart_stats(&mut self) {
        self.0.restart_stats()
    }
}

impl HeapMut<'_, LibcHeap> {
    /// [`LibcHeap::malloc`].
    #[inline(always)]
    pub fn malloc(&mut self, size: usize) -> Result<NonNull<u8>> {
        self.0.malloc(size)
    }

    /// [`LibcHeap::memalign`].
    #[inline(always)]
    pub fn memalign(&mut self, align: usize, size: usize) -> Result<NonNull<u8>> {
        self.0.memalign(align, size)
    }

    /// [`LibcHeap::calloc`].
    #[inline(always)]
    pub fn calloc(&mut self, n: usize, size: usize) -> Result<NonNull<u8>> {
        self.0.calloc(n, size)
    }

    /// [`LibcHeap::free`].
    ///
    /// # Safety
    /// As [`LibcHeap::free`].
    #[inline(always)]
    pub unsafe fn free(&mut self, p: *mut u8) -> Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.free(p) }
    }

    /// [`LibcHeap::realloc`].
    ///
    /// # Safety
    /// As [`LibcHeap::realloc`].
    #[inline(always)]
    pub unsafe fn realloc(&mut self, p: *mut u8, size: usize) -> Result<Option<NonNull<u8>>> {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.realloc(p, size) }
    }

    /// [`LibcHeap::set_use_default`].
    #[inline(always)]
    pub fn set_use_default(&mut self, on: bool) {
        self.0.set_use_default(on)
    }

    /// [`LibcHeap::restart_stats`].
    pub fn restart_stats(&mut self) {
        self.0.restart_stats()
    }
}
