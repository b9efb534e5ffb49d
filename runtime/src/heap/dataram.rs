//! The data-RAM (TCM) heap: directly dereferenceable NX memory, on
//! [`FirstFit`] (first-fit, address-ordered, coalescing). The
//! allocator needs each block's layout back and cannot tell a live pointer
//! from a stale one, so a small out-of-band table of live blocks answers
//! both: frees of unknown pointers are refused, never passed on.

use super::first_fit::{FirstFit, FreeError};
use super::{effective_align, round_up, HeapStats, HEAP_ALIGN};
use crate::error::{Error, Result};
use core::alloc::Layout;
use core::ptr::NonNull;
use heapless::Vec;

/// Live blocks the heap tracks at once (defined here).
pub const DEFAULT_LIVE_BLOCKS: usize = 64;

#[derive(Clone, Copy, Debug)]
struct Live {
    addr: usize,
    layout: Layout,
}

/// The data-RAM heap of one core.
pub struct DataRamHeap<const LIVE: usize = DEFAULT_LIVE_BLOCKS> {
    heap: FirstFit,
    live: Vec<Live, LIVE>,
    stats: HeapStats,
}

impl<const LIVE: usize> core::fmt::Debug for DataRamHeap<LIVE> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DataRamHeap").field("range", &self.range()).field("live", &self.live.len()).field("stats", &self.stats).finish()
    }
}

impl<const LIVE: usize> Default for DataRamHeap<LIVE> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const LIVE: usize> DataRamHeap<LIVE> {
    /// A heap with no memory yet.
    pub const fn new() -> Self {
        Self { heap: FirstFit::empty(), live: Vec::new(), stats: HeapStats { capacity: 0, in_use: 0, high_water: 0, allocs: 0, frees: 0, failures: 0 } }
    }

    /// `init_neuron_dataram_allocator`: manage `size` bytes at `bottom`.
    /// Runs once; later calls keep the heap as it is.
    ///
    /// # Safety
    /// `bottom..bottom+size` must be memory the core can read and write,
    /// used by nothing else for as long as this heap lives.
    pub unsafe fn init(&mut self, bottom: *mut u8, size: usize) {
        if self.is_ready() {
            return;
        }
        let start = round_up(bottom as usize as u64, HEAP_ALIGN as u64).unwrap_or(0) as usize;
        let skip = start.wrapping_sub(bottom as usize);
        if bottom.is_null() || skip >= size {
            return;
        }
        let len = (size - skip) & !(HEAP_ALIGN - 1);
        // SAFETY: the caller hands us this range exclusively; start is
        // inside it and len fits after it.
        unsafe { self.heap.init(bottom.add(skip), len) };
        self.stats.capacity = len as u64;
    }

    /// Whether `init` gave the heap memory.
    pub fn is_ready(&self) -> bool {
        self.heap.size() != 0
    }

    /// The managed range `(base, size)` as addresses.
    pub fn range(&self) -> (usize, usize) {
        (self.heap.base_addr(), self.heap.size())
    }

    /// Use counters.
    pub fn stats(&self) -> HeapStats {
        self.stats
    }

    /// Restarts the counters and the high-water mark (see
    /// [`HeapStats::restart`]).
    pub fn restart_stats(&mut self) {
        self.stats.restart();
    }

    /// `neuron_dataram_allocate` / `tcm_malloc`: `size` bytes aligned to
    /// `align` (at least 64).
    pub fn allocate(&mut self, size: usize, align: usize) -> Result<NonNull<u8>> {
        if !self.is_ready() {
            return self.stats.on_failure(Error::HeapNotReady);
        }
        let align = match effective_align(align) {
            Ok(a) => a,
            Err(e) => return self.stats.on_failure(e),
        };
        let Some(need) = round_up(size.max(1) as u64, HEAP_ALIGN as u64).filter(|n| *n <= isize::MAX as u64) else {
            return self.stats.on_failure(Error::SizeOverflow);
        };
        let Ok(layout) = Layout::from_size_align(need as usize, align) else {
            return self.stats.on_failure(Error::SizeOverflow);
        };
        if self.live.is_full() {
            return self.stats.on_failure(Error::BlockTableFull);
        }
        let Some(p) = self.heap.allocate_first_fit(layout) else {
            let e = if self.heap.is_corrupt() { Error::HeapCorrupted } else { Error::OutOfMemory };
            return self.stats.on_failure(e);
        };
        let addr = p.as_ptr() as usize;
        let at = self.live.binary_search_by(|l| l.addr.cmp(&addr)).unwrap_or_else(|i| i);
        // Room was checked above.
        let _ = super::table_insert(&mut self.live, at, Live { addr, layout });
        self.stats.on_alloc(need);
        Ok(p)
    }

    /// `neuron_dataram_deallocate` / `tcm_free`. Null is a no-op.
    pub fn free(&mut self, p: *mut u8) -> Result<()> {
        let Some(nn) = NonNull::new(p) else { return Ok(()) };
        let addr = p as usize;
        match self.live.binary_search_by(|l| l.addr.cmp(&addr)) {
            Ok(i) => {
                // `i` came from the search, so the entry is there.
                let Some(l) = super::table_remove(&mut self.live, i) else { return self.stats.on_failure(Error::ForeignPointer) };
                // SAFETY: `p` was returned by allocate_first_fit with this
                // layout and is live (it was in the table until now).
                if let Err(e) = unsafe { self.heap.deallocate(nn, l.layout) } {
                    // Only corrupted memory gets here (the table, or the
                    // free list in the pool); the allocator refused the
                    // block and left its list as it was.
                    let e = if e == FreeError::Corrupt { Error::HeapCorrupted } else { Error::ForeignPointer };
                    return self.stats.on_failure(e);
                }
                self.stats.on_free(l.layout.size() as u64);
                Ok(())
            }
            Err(after) => {
                let (base, size) = self.range();
                let in_heap = addr >= base && addr < base + size;
                let in_live = after.checked_sub(1).and_then(|k| self.live.get(k)).is_some_and(|l| addr < l.addr + l.layout.size());
                let e = if in_heap && !in_live { Error::DoubleFree } else { Error::ForeignPointer };
                self.stats.on_failure(e)
            }
        }
    }

    /// Size of the live block at `p`.
    pub fn block_size(&self, p: *const u8) -> Option<usize> {
        let addr = p as usize;
        let i = self.live.binary_search_by(|l| l.addr.cmp(&addr)).ok()?;
        self.live.get(i).map(|l| l.layout.size())
    }

    /// Bytes the allocator itself considers free.
    pub fn free_bytes(&self) -> usize {
        self.heap.free()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(align(64))]
    struct Mem([u8; 8192]);

    fn heap(mem: &mut Mem) -> DataRamHeap<8> {
        let mut h = DataRamHeap::new();
        // SAFETY: the test's buffer outlives the heap and is used by nothing else.
        unsafe { h.init(mem.0.as_mut_ptr(), mem.0.len()) };
        h
    }

    #[test]
    fn allocations_are_aligned_usable_and_disjoint() {
        let mut mem = Mem([0; 8192]);
        let mut h = heap(&mut mem);
        let a = h.allocate(10, 0).unwrap();
        let b = h.allocate(100, 256).unwrap();
        assert_eq!(a.as_ptr() as usize % 64, 0);
        assert_eq!(b.as_ptr() as usize % 256, 0);
        // SAFETY: both blocks are live and at least 10 bytes.
        unsafe {
            a.as_ptr().write_bytes(0xAA, 10);
            b.as_ptr().write_bytes(0xBB, 100);
            assert_eq!(*a.as_ptr().add(9), 0xAA);
        }
        assert_eq!(h.stats().in_use, 64 + 128);
        h.free(a.as_ptr()).unwrap();
        h.free(b.as_ptr()).unwrap();
        assert_eq!(h.stats().in_use, 0);
        assert!(h.allocate(8192, 0).is_ok(), "coalesced back to one block");
    }

    #[test]
    fn misuse_is_refused() {
        let mut mem = Mem([0; 8192]);
        let mut h = heap(&mut mem);
        let a = h.allocate(128, 0).unwrap();
        assert_eq!(h.free(a.as_ptr().wrapping_add(64)), Err(Error::ForeignPointer));
        assert_eq!(h.free(0x10 as *mut u8), Err(Error::ForeignPointer));
        assert_eq!(h.free(core::ptr::null_mut()), Ok(()));
        h.free(a.as_ptr()).unwrap();
        assert_eq!(h.free(a.as_ptr()), Err(Error::DoubleFree));
        assert_eq!(h.allocate(8193, 0), Err(Error::OutOfMemory));
        assert_eq!(h.allocate(1, 48), Err(Error::BadAlignment));
        for _ in 0..8 {
            h.allocate(64, 0).unwrap();
        }
        assert_eq!(h.allocate(64, 0), Err(Error::BlockTableFull));
    }
}
