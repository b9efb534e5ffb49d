//! What one core keeps for the kernel-facing accessors: the coherency
//! table, the stream slots and the TCM pool, with the data-RAM block it
//! is carved from (taken from the data-RAM heap at first use, so a kernel
//! that never uses it pays nothing).
//!
//! One pool, as on the device (SPEC §12): `tcm_malloc` blocks and the
//! open streams' buffers come from the same 16 KiB, so a stream's 4 KiB
//! is taken from it at open and given back at close, and `tcm_malloc`
//! returns null exactly where the device's would.

use super::coherency::{AccessorKind, Admission, CoherencePolicy};
use super::coherency_table::CoherencyTable;
use super::stream_pool::{StreamPool, MAX_STREAM_BUFFERS};
use crate::core_state::CoreState;
use crate::error::{Error, Result};
use crate::heap::DataRamHeap;
use crate::printf::LineBuf;
use core::fmt::Write;
use core::ptr::NonNull;
use neuron_hal::Hal;

/// Default size of the TCM pool that `tcm_malloc` and the stream buffers
/// share (reference: 16 KiB per core).
pub const DEFAULT_TCM_POOL_BYTES: u32 = 16 << 10;
/// Live `tcm_malloc` blocks at once (defined here): the data-RAM heap's
/// own table size, so both heaps are one monomorphisation of
/// `DataRamHeap` (one copy of its code in a linked image).
pub const TCM_LIVE_BLOCKS: usize = crate::heap::dataram::DEFAULT_LIVE_BLOCKS;

/// The accessors' per-core state.
#[derive(Debug)]
pub struct AccessState {
    /// Enforcers keyed by storage address.
    pub coherency: CoherencyTable,
    /// Stream buffer slots.
    pub streams: StreamPool,
    /// Each taken slot's buffer, a block of the TCM pool.
    stream_bufs: [Option<NonNull<u8>>; MAX_STREAM_BUFFERS as usize],
    /// Streams opened without a buffer since the last reset (the pool had
    /// none: they run per element, as the device's 5th stream does).
    pub unbuffered_opens: u32,
    /// Set by the host simulator for a multicore run: element and stream
    /// accessors are refused (SPEC §12: undefined on the device).
    pub multicore_strict: bool,
    /// The storage address of the first accessor refused by
    /// `multicore_strict` (the simulator names the tensor).
    pub multicore_refused: Option<u64>,
    /// The TCM pool (`tcm_malloc` and stream buffers), over `tcm_mem`.
    pub tcm: DataRamHeap<TCM_LIVE_BLOCKS>,
    tcm_mem: Option<NonNull<u8>>,
    tcm_bytes: u32,
}

// SAFETY: the two pointers are blocks of this core's own data RAM, which
// the core state owns together with this table; moving the state to
// another thread (the host simulator lends a core to one worker at a time)
// moves the ownership with it. Nothing here is shared between cores.
unsafe impl Send for AccessState {}

impl Default for AccessState {
    fn default() -> Self {
        Self::new()
    }
}

impl AccessState {
    /// Nothing carved yet, default geometry.
    pub const fn new() -> Self {
        Self {
            coherency: CoherencyTable::new(),
            streams: StreamPool::new(),
            stream_bufs: [None; MAX_STREAM_BUFFERS as usize],
            unbuffered_opens: 0,
            multicore_strict: false,
            multicore_refused: None,
            tcm: DataRamHeap::new(),
            tcm_mem: None,
            tcm_bytes: DEFAULT_TCM_POOL_BYTES,
        }
    }

    /// Size of the TCM pool.
    pub fn tcm_pool_bytes(&self) -> u32 {
        self.tcm_bytes
    }
}

impl<H: Hal> CoreState<H> {
    /// Registers an accessor of `kind` on the tensor at `addr`; under
    /// `INCOHERENT_VERBOSE` a forbidden combination prints a warning to the
    /// printf ring.
    pub fn accessor_register(&mut self, addr: u64, kind: AccessorKind) -> Result<()> {
        if self.access.multicore_strict && kind != AccessorKind::Tcm {
            self.access.multicore_refused.get_or_insert(addr);
            return Err(Error::MulticoreAccessor);
        }
        if self.access.coherency.register(addr, kind)? == Admission::Warned {
            let mut line = LineBuf::<128>::new();
            let _ = write!(line, "coherency warning: {} on tensor 0x{addr:x} while incompatible accessors are live (INCOHERENT_VERBOSE)", kind.name());
            self.printf.print(&mut self.libc, line.as_bytes());
        }
        Ok(())
    }

    /// Deregisters an accessor of `kind` on the tensor at `addr`.
    pub fn accessor_release(&mut self, addr: u64, kind: AccessorKind) -> Result<()> {
        self.access.coherency.release(addr, kind)
    }

    /// `get_accessor_coherence_policy`.
    pub fn coherence_policy(&self, addr: u64) -> CoherencePolicy {
        self.access.coherency.policy(addr)
    }

    /// `set_accessor_coherence_policy`.
    pub fn set_coherence_policy(&mut self, addr: u64, p: CoherencePolicy) -> Result<()> {
        self.access.coherency.set_policy(addr, p)
    }

    /// The buffer of taken stream slot `slot` (`None`: not taken).
    #[inline]
    pub(crate) fn stream_buffer(&self, slot: u32) -> Option<*mut u8> {
        self.access.stream_bufs.get(slot as usize).copied().flatten().map(NonNull::as_ptr)
    }

    /// Gives slot `slot` its buffer, a block of the TCM pool; `false` (and
    /// nothing taken) when the pool has no room for it.
    pub(crate) fn stream_buffer_take(&mut self, slot: u32) -> bool {
        let bytes = self.access.streams.buffer_bytes() as usize;
        let got = crate::trace::quietly!(self.tcm_malloc(bytes));
        match (got, self.access.stream_bufs.get_mut(slot as usize)) {
            (Ok(p), Some(b)) => {
                *b = Some(p);
                crate::trace::library_block(p.as_ptr(), bytes);
                true
            }
            (Ok(p), None) => {
                let _ = crate::trace::quietly!(self.tcm_free(p.as_ptr()));
                false
            }
            (Err(_), _) => false,
        }
    }

    /// Gives slot `slot`'s buffer back to the TCM pool.
    pub(crate) fn stream_buffer_give(&mut self, slot: u32) -> Result<()> {
        match self.access.stream_bufs.get_mut(slot as usize).and_then(Option::take) {
            Some(p) => {
                let r = crate::trace::quietly!(self.tcm_free(p.as_ptr()));
                crate::trace::freed(p.as_ptr());
                r
            }
            None => Ok(()),
        }
    }

    /// Changes the stream buffers' geometry (refused while a stream holds
    /// a buffer): at most `pool_bytes / buffer_bytes` buffered streams at
    /// once, each taking `buffer_bytes` of the TCM pool while open.
    pub fn configure_stream_pool(&mut self, pool_bytes: u32, buffer_bytes: u32) -> Result<()> {
        self.access.streams.configure(pool_bytes, buffer_bytes)
    }

    /// `tcm_malloc(n)`: `n` bytes of the TCM pool (carved from data RAM at
    /// first use), 64-byte aligned. Open streams' buffers are blocks of the
    /// same pool.
    pub fn tcm_malloc(&mut self, n: usize) -> Result<NonNull<u8>> {
        if self.access.tcm_mem.is_none() {
            let bytes = self.access.tcm_bytes as usize;
            let p = self.dataram.allocate(bytes, 64)?;
            self.access.tcm = DataRamHeap::new();
            // SAFETY: `p` is a live data-RAM block of `bytes`, owned by the
            // TCM pool until `set_tcm_pool_size` frees it.
            unsafe { self.access.tcm.init(p.as_ptr(), bytes) };
            self.access.tcm_mem = Some(p);
        }
        self.access.tcm.allocate(n, 64)
    }

    /// Where the TCM pool lies (its first byte and length), once carved.
    pub fn tcm_pool_span(&self) -> Option<(*const u8, usize)> {
        self.access.tcm_mem.map(|p| (p.as_ptr().cast_const(), self.access.tcm_bytes as usize))
    }

    /// Bytes of the TCM pool free (all of it before it is carved), and
    /// its size.
    pub fn tcm_free_bytes(&self) -> (usize, usize) {
        let total = self.access.tcm_bytes as usize;
        match self.access.tcm_mem {
            Some(_) => (self.access.tcm.free_bytes(), total),
            None => (total, total),
        }
    }

    /// `tcm_free(p)`: null is harmless.
    pub fn tcm_free(&mut self, p: *mut u8) -> Result<()> {
        self.access.tcm.free(p)
    }

    /// Resizes the TCM pool (refused while a block is live). The pool is
    /// carved again at the next `tcm_malloc`.
    pub fn set_tcm_pool_size(&mut self, bytes: u32) -> Result<()> {
        if bytes == 0 || !bytes.is_multiple_of(64) || self.access.tcm.stats().in_use != 0 {
            return Err(Error::BadPoolConfig);
        }
        if let Some(p) = self.access.tcm_mem.take() {
            self.access.tcm = DataRamHeap::new();
            self.dataram.free(p.as_ptr())?;
        }
        self.access.tcm_bytes = bytes;
        Ok(())
    }

    /// Multicore strictness (the host simulator sets it for a multicore
    /// run): element and stream accessors are refused with
    /// [`Error::MulticoreAccessor`]. Clears the last refusal.
    pub fn set_multicore_strict(&mut self, on: bool) {
        self.access.multicore_strict = on;
        self.access.multicore_refused = None;
    }

    /// The storage address of the first accessor refused by multicore
    /// strictness since [`set_multicore_strict`](Self::set_multicore_strict).
    pub fn multicore_refused(&self) -> Option<u64> {
        self.access.multicore_refused
    }

    /// Streams opened without a buffer since the stats were restarted.
    pub fn unbuffered_opens(&self) -> u32 {
        self.access.unbuffered_opens
    }

    /// Prints one entry to the printf ring.
    pub fn printf(&mut self, text: &[u8]) {
        self.printf.print(&mut self.libc, text);
    }
}
