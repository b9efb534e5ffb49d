//! The state's façade: what the crates above the runtime (the C shell,
//! the Rust kernel API, the simulator, the tests) reach a core's state
//! through, instead of its fields.
//!
//! The state lends each self-contained part that keeps its own invariants
//! (the printf ring) by `&mut`; a heap is lent as a [`HeapMut`], its
//! operations and never the heap itself (which could be replaced). The translator is lent read-only:
//! its records and the hit table that caches them change together, only
//! through the translate methods here. The HAL is lent by `&H` for its
//! queries: what programs the core (a window register, the DMA engine's
//! arming and doorbell, the stack limit) is `unsafe` on the HAL, and the
//! translator's and the DMA queue's programming methods are this crate's,
//! so nothing safe holding the state moves a window or starts a transfer
//! behind them. The DMA queue, the argument cursor and the accessor state are
//! lent read-only: changing them takes the state's other parts, so it is
//! done by the state's own methods. The hit paths that must not form a
//! reference to a state they only read in place get raw places
//! ([`CoreState::translator_of`], [`CoreState::hal_of`]).

use crate::access::AccessState;
use crate::dma::DmaQueue;
use crate::error::Result;
use crate::heap::{DataRamHeap, HbmHeap, HeapMut, LibcHeap};
use crate::marshal::ArgState;
use crate::printf::PrintfRing;
use crate::translate::{TranslationCtx, Translator, SBUF_RECORD, SCRATCH_RECORD};
use crate::CoreState;
use neuron_hal::{DmaDirection, Hal};

impl<H: Hal> CoreState<H> {
    /// The core's hardware, for its queries (platform table, core id,
    /// stack, and the mock's counters). Programming it through this
    /// borrow takes `unsafe`, whose contract only the runtime keeps, and
    /// the runtime's own programming paths are not public, so safe code
    /// cannot reach them with the lent HAL:
    ///
    /// ```compile_fail,E0624
    /// fn f<H: neuron_hal::Hal>(s: &neuron_runtime::CoreState<H>) {
    ///     let mut t = neuron_runtime::Translator::default();
    ///     let _ = t.translate(s.hal(), 0x1000);
    /// }
    /// ```
    ///
    /// ```compile_fail,E0624
    /// fn f<H: neuron_hal::Hal>(s: &neuron_runtime::CoreState<H>) {
    ///     let mut q = neuron_runtime::dma::DmaQueue::default();
    ///     let _ = q.init(s.hal(), 0);
    /// }
    /// ```
    ///
    /// ```compile_fail,E0133
    /// fn f<H: neuron_hal::Hal>(s: &mut neuron_runtime::CoreState<H>) {
    ///     let _ = s.dma_submit(neuron_hal::DmaDirection::S2M, 0x1000, 0x2000, 64);
    /// }
    /// ```
    #[inline(always)]
    pub fn hal(&self) -> &H {
        &self.hal
    }

    /// The translator, read-only: the context, the counts, the generation.
    #[inline(always)]
    pub fn translator(&self) -> &Translator {
        &self.translator
    }

    /// The context pointer kernels hold (`Q7PtrType.ctx`,
    /// `neuron_translate_ctx`).
    #[inline]
    pub fn translate_ctx(&mut self) -> *mut TranslationCtx {
        self.translator.ctx_ptr()
    }

    /// A miss an in-place probe saw on this core's own context: the
    /// region check and the install, no second lookup.
    #[inline]
    pub fn translate_miss(&mut self, addr: u64) -> Result<*mut u8> {
        self.translator.miss(&self.hal, addr)
    }

    /// `neuron_translate_pinned`: the pointer to `addr` when all of
    /// `[addr, addr + bytes)` lies in one pinned window of this core
    /// (hbm_scratch, or SBUF up to its end) and `ctx` is this core's
    /// context; `None` otherwise (an answer, not an error). Pinned records
    /// never change after init, so the pointer stays valid.
    #[inline]
    pub fn translate_pinned(&self, ctx: *const TranslationCtx, addr: u64, bytes: u64) -> Option<*mut u8> {
        let t = &self.translator;
        let last = bytes.checked_sub(1).and_then(|n| addr.checked_add(n))?;
        if ctx != core::ptr::from_ref(t.ctx()) {
            return None;
        }
        let ((i, p), (j, _)) = (t.ctx().lookup_all(addr)?, t.ctx().lookup_all(last)?);
        let pinned = i == j && matches!(i, SBUF_RECORD | SCRATCH_RECORD);
        (pinned && !Translator::past_sbuf(t.ctx(), &self.hal, i, last)).then_some(p)
    }

    /// Counts `n` translate hits on `record` that were made without the
    /// state (the host accessors' cached hits, folded in when the state is
    /// taken). A record past the last is not counted.
    pub fn count_translate_hits(&mut self, record: usize, n: u64) {
        self.translator.count_hits(record, n);
    }

    /// Zeroes the translate counts and every heap's statistics (the
    /// simulator, at the start of a run); nothing else changes.
    pub fn restart_stats(&mut self) {
        self.translator.restart_stats();
        self.hbm.restart_stats();
        self.dataram.restart_stats();
        self.libc.restart_stats();
        self.access.unbuffered_opens = 0;
    }

    /// The HBM heap's operations (never the heap: see [`HeapMut`]).
    #[inline(always)]
    pub fn hbm(&mut self) -> HeapMut<'_, HbmHeap> {
        HeapMut::new(&mut self.hbm)
    }

    /// The data-RAM (TCM) heap's operations.
    #[inline(always)]
    pub fn dataram(&mut self) -> HeapMut<'_, DataRamHeap> {
        HeapMut::new(&mut self.dataram)
    }

    /// The libc heap's operations (`malloc` and friends).
    #[inline(always)]
    pub fn libc(&mut self) -> HeapMut<'_, LibcHeap> {
        HeapMut::new(&mut self.libc)
    }

    /// The device printf ring.
    pub fn printf_ring(&mut self) -> &mut PrintfRing {
        &mut self.printf
    }

    /// `neuron_set_printf_buffer_size`: the ring, reallocated from the
    /// libc heap.
    pub fn set_printf_size(&mut self, bytes: usize) -> Result<()> {
        self.printf.set_size(&mut self.libc, bytes)
    }

    /// The argument cursor of the invocation being marshalled, read-only.
    pub fn args(&self) -> &ArgState {
        &self.args
    }

    /// The DMA queue, read-only (its rings, what is outstanding).
    pub fn dma(&self) -> &DmaQueue {
        &self.dma
    }

    /// Queues one transfer on this core's DMA queue (no wait).
    ///
    /// # Safety
    /// The engine writes SoC `[dst, dst + len)` when it gets to the
    /// descriptors, with no check of whose it is: the caller owns those
    /// bytes until the queue is drained, and no Rust reference covers them
    /// meanwhile (not a TCM buffer, not a heap block another owner holds).
    pub unsafe fn dma_submit(&mut self, dir: DmaDirection, dst: u64, src: u64, len: u64) -> Result<()> {
        self.dma.submit(&self.hal, dir, dst, src, len)
    }

    /// Lowers the DMA descriptor size (see
    /// [`DmaQueue::set_max_descriptor_bytes`]).
    pub fn set_dma_max_descriptor_bytes(&mut self, n: u32) {
        self.dma.set_max_descriptor_bytes(n);
    }

    /// The accessors' state (coherency table, stream and TCM pools),
    /// read-only.
    pub fn access(&self) -> &AccessState {
        &self.access
    }

    /// The translator of the state at `p`, as a place: for the hit paths
    /// that read (and count hits or refill the hit table) in place without
    /// forming a reference to the state. The pointer keeps `p`'s
    /// permissions.
    ///
    /// # Safety
    /// `p` points to a live `CoreState` (the place is computed in it).
    #[inline(always)]
    pub unsafe fn translator_of(p: *mut Self) -> *mut Translator {
        // SAFETY: the caller's contract; only the field's address is taken.
        unsafe { core::ptr::addr_of_mut!((*p).translator) }
    }

    /// The HAL of the state at `p`, as a place (see
    /// [`CoreState::translator_of`]).
    ///
    /// # Safety
    /// `p` points to a live `CoreState`.
    #[inline(always)]
    pub unsafe fn hal_of(p: *const Self) -> *const H {
        // SAFETY: the caller's contract; only the field's address is taken.
        unsafe { core::ptr::addr_of!((*p).hal) }
    }
}
