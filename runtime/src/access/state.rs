//! What one core keeps for the kernel-facing accessors: the coherency
//! table, the stream buffer pool and the TCM pool, with the data-RAM
//! blocks they are carved from (taken from the data-RAM heap at first use,
//! so a kernel that never streams pays nothing).

use super::coherency::{AccessorKind, Admission, CoherencePolicy};
use super::coherency_table::CoherencyTable;
use super::stream_pool::StreamPool;
use crate::core_state::CoreState;
use crate::error::{Error, Result};
use crate::heap::DataRamHeap;
use crate::printf::LineBuf;
use core::fmt::Write;
use core::ptr::NonNull;
use neuron_hal::Hal;

/// Default size of the `tcm_malloc` pool (reference: 16 KiB).
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
    stream_mem: Option<NonNull<u8>>,
    /// The `tcm_malloc` heap, over `tcm_mem`.
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
            stream_mem: None,
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

    /// The data-RAM pointer of stream buffer `slot`, carving the pool on
    /// first use. `None` if data RAM has no room for the pool.
    pub(crate) fn stream_buffer(&mut self, slot: u32) -> Option<*mut u8> {
        if self.access.stream_mem.is_none() {
            let bytes = self.access.streams.pool_bytes() as usize;
            self.access.stream_mem = self.dataram.allocate(bytes, 64).ok();
        }
        let base = self.access.stream_mem?;
        // The slot is below `buffers()`, so the offset is inside the block.
        Some(base.as_ptr().wrapping_add(self.access.streams.offset(slot)))
    }

    /// Changes the stream pool's geometry (refused while a stream holds a
    /// buffer). The pool is carved again at the next stream.
    pub fn configure_stream_pool(&mut self, pool_bytes: u32, buffer_bytes: u32) -> Result<()> {
        self.access.streams.configure(pool_bytes, buffer_bytes)?;
        if let Some(p) = self.access.stream_mem.take() {
            self.dataram.free(p.as_ptr())?;
        }
        Ok(())
    }

    /// `tcm_malloc(n)`: `n` bytes of the TCM pool (carved from data RAM at
    /// first use), 64-byte aligned.
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

    /// Prints one entry to the printf ring.
    pub fn printf(&mut self, text: &[u8]) {
        self.printf.print(&mut self.libc, text);
    }
}
