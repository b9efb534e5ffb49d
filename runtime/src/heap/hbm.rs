//! The HBM heap: hands out 64-bit SoC addresses of memory the core cannot
//! dereference directly, so every block header lives outside it, in a
//! fixed table (the original keeps 32).

use super::{effective_align, round_up, HeapStats, HEAP_ALIGN};
use crate::error::{Error, Result};
use heapless::Vec;

/// The original's block-header count; our default is larger.
pub const ORIGINAL_BLOCK_HEADERS: usize = 32;
/// Default block-header capacity.
pub const DEFAULT_BLOCK_HEADERS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    start: u64,
    size: u64,
    used: bool,
}

/// First-fit over address-ordered blocks that tile `[base, base+size)`;
/// free neighbours are always merged, so no two free blocks touch.
#[derive(Debug)]
pub struct HbmHeap<const N: usize = DEFAULT_BLOCK_HEADERS> {
    blocks: Vec<Block, N>,
    base: u64,
    size: u64,
    stats: HeapStats,
}

impl<const N: usize> Default for HbmHeap<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> HbmHeap<N> {
    /// A heap that manages nothing yet.
    pub const fn new() -> Self {
        Self { blocks: Vec::new(), base: 0, size: 0, stats: HeapStats { capacity: 0, in_use: 0, high_water: 0, allocs: 0, frees: 0, failures: 0 } }
    }

    /// `init_neuron_hbm_allocator`: manage `[base, base+size)`. Runs once;
    /// later calls leave the heap (and its live blocks) as they are.
    /// `base` is rounded up and `size` down to 64 bytes.
    pub fn init(&mut self, base: u64, size: u64) {
        if self.is_ready() {
            return;
        }
        let start = round_up(base, HEAP_ALIGN as u64).unwrap_or(u64::MAX);
        let end = base.saturating_add(size) & !(HEAP_ALIGN as u64 - 1);
        if N == 0 || end <= start {
            return;
        }
        self.base = start;
        self.size = end - start;
        self.blocks.clear();
        // Cannot fail: N >= 1 was checked.
        let _ = self.blocks.push(Block { start, size: self.size, used: false });
        self.stats.capacity = self.size;
    }

    /// Whether `init` gave the heap memory.
    pub fn is_ready(&self) -> bool {
        !self.blocks.is_empty()
    }

    /// The managed range `(base, size)`.
    pub fn range(&self) -> (u64, u64) {
        (self.base, self.size)
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

    /// Block headers in use (the fixed table's fill).
    pub fn headers_used(&self) -> usize {
        self.blocks.len()
    }

    /// `neuron_hbm_allocate`: `size` bytes aligned to `align` (at least 64).
    pub fn allocate(&mut self, size: u64, align: usize) -> Result<u64> {
        if !self.is_ready() {
            return self.stats.on_failure(Error::HeapNotReady);
        }
        let align = match effective_align(align) {
            Ok(a) => a as u64,
            Err(e) => return self.stats.on_failure(e),
        };
        let Some(need) = round_up(size.max(1), HEAP_ALIGN as u64) else {
            return self.stats.on_failure(Error::SizeOverflow);
        };
        let mut table_full = false;
        for i in 0..self.blocks.len() {
            let Some(&b) = self.blocks.get(i) else { break };
            if b.used {
                continue;
            }
            let Some(start) = round_up(b.start, align) else { continue };
            let pad = start - b.start;
            if pad.checked_add(need).is_none_or(|n| n > b.size) {
                continue;
            }
            let tail = b.size - pad - need;
            let extra = (pad > 0) as usize + (tail > 0) as usize;
            if self.blocks.len() + extra > N {
                table_full = true;
                continue;
            }
            self.split(i, b, pad, need, tail);
            self.stats.on_alloc(need);
            return Ok(start);
        }
        self.stats.on_failure(if table_full { Error::BlockTableFull } else { Error::OutOfMemory })
    }

    /// Replaces free block `i` (`b`) by `[pad free][need used][tail free]`.
    fn split(&mut self, i: usize, b: Block, pad: u64, need: u64, tail: u64) {
        let mut at = i;
        let head = if pad > 0 { Block { start: b.start, size: pad, used: false } } else { Block { start: b.start, size: need, used: true } };
        if let Some(slot) = self.blocks.get_mut(at) {
            *slot = head;
        }
        if pad > 0 {
            at += 1;
            // Room was checked by the caller.
            let _ = super::table_insert(&mut self.blocks, at, Block { start: b.start + pad, size: need, used: true });
        }
        if tail > 0 {
            let _ = super::table_insert(&mut self.blocks, at + 1, Block { start: b.start + pad + need, size: tail, used: false });
        }
    }

    /// `neuron_hbm_deallocate`: frees the block that starts at `addr`.
    pub fn free(&mut self, addr: u64) -> Result<()> {
        if !self.is_ready() {
            return self.stats.on_failure(Error::HeapNotReady);
        }
        let (i, size) = match self.blocks.binary_search_by(|b| b.start.cmp(&addr)) {
            Ok(i) => match self.blocks.get_mut(i) {
                Some(b) if b.used => {
                    b.used = false;
                    (i, b.size)
                }
                _ => return self.stats.on_failure(Error::DoubleFree),
            },
            Err(after) => {
                // Inside a free block: freed already (its header merged
                // away) or never handed out. Inside a used one, or
                // outside the heap: not a pointer this heap returned.
                let inside_free = after.checked_sub(1).and_then(|k| self.blocks.get(k)).is_some_and(|b| !b.used && addr < b.start + b.size);
                let e = if inside_free { Error::DoubleFree } else { Error::ForeignPointer };
                return self.stats.on_failure(e);
            }
        };
        self.stats.on_free(size);
        // Merge with the next block, then with the previous one.
        self.merge_next(i);
        if let Some(p) = i.checked_sub(1) {
            self.merge_next(p);
        }
        Ok(())
    }

    /// Merges block `k + 1` into block `k` when both are free.
    fn merge_next(&mut self, k: usize) {
        let Some([a, b]) = self.blocks.get_mut(k..).and_then(|t| t.first_chunk_mut::<2>()) else { return };
        if a.used || b.used {
            return;
        }
        a.size += b.size;
        let _ = super::table_remove(&mut self.blocks, k + 1);
    }

    /// Size of the live block starting at `addr`.
    pub fn block_size(&self, addr: u64) -> Option<u64> {
        let i = self.blocks.binary_search_by(|b| b.start.cmp(&addr)).ok()?;
        self.blocks.get(i).and_then(|b| b.used.then_some(b.size))
    }

    /// Size of the largest free block.
    pub fn largest_free(&self) -> u64 {
        self.blocks.iter().filter(|b| !b.used).map(|b| b.size).max().unwrap_or(0)
    }

    /// Checks the tiling invariants (tests and fuzzing).
    pub fn check_invariants(&self) -> core::result::Result<(), &'static str> {
        let mut at = self.base;
        let mut used = 0;
        for (k, b) in self.blocks.iter().enumerate() {
            if b.start != at {
                return Err("blocks do not tile the heap");
            }
            if b.size == 0 || b.start % HEAP_ALIGN as u64 != 0 || b.size % HEAP_ALIGN as u64 != 0 {
                return Err("block not 64-byte granular");
            }
            if !b.used && k.checked_sub(1).and_then(|p| self.blocks.get(p)).is_some_and(|p| !p.used) {
                return Err("two free blocks touch");
            }
            if b.used {
                used += b.size;
            }
            at += b.size;
        }
        if self.is_ready() && at != self.base + self.size {
            return Err("blocks do not cover the heap");
        }
        if used != self.stats.in_use {
            return Err("in_use counter drifted");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: u64 = 0x40_0100_0000;

    fn heap<const N: usize>(size: u64) -> HbmHeap<N> {
        let mut h = HbmHeap::<N>::new();
        h.init(BASE, size);
        h
    }

    #[test]
    fn allocations_are_aligned_disjoint_and_first_fit() {
        let mut h = heap::<32>(4096);
        let a = h.allocate(1, 0).unwrap();
        let b = h.allocate(100, 0).unwrap();
        assert_eq!(a, BASE);
        assert_eq!(b, BASE + 64);
        assert_eq!(h.stats().in_use, 64 + 128);
        h.free(a).unwrap();
        // First fit: the hole at the bottom is reused.
        assert_eq!(h.allocate(64, 0).unwrap(), BASE);
        h.check_invariants().unwrap();
    }

    #[test]
    fn larger_alignment_leaves_a_free_pad() {
        let mut h = heap::<32>(8192);
        h.allocate(64, 0).unwrap();
        let a = h.allocate(64, 1024).unwrap();
        assert_eq!(a % 1024, 0);
        assert_eq!(h.allocate(64, 0).unwrap(), BASE + 64, "pad is reusable");
        assert_eq!(h.allocate(1, 3), Err(Error::BadAlignment));
        h.check_invariants().unwrap();
    }

    #[test]
    fn out_of_memory_is_an_error_and_changes_nothing() {
        let mut h = heap::<32>(4096);
        assert_eq!(h.allocate(4097, 0), Err(Error::OutOfMemory));
        assert_eq!(h.allocate(u64::MAX, 0), Err(Error::SizeOverflow));
        assert_eq!(h.allocate(4096, 0), Ok(BASE));
        assert_eq!(h.allocate(1, 0), Err(Error::OutOfMemory));
        assert_eq!(h.stats().failures, 3);
    }

    #[test]
    fn double_and_foreign_frees_are_refused() {
        let mut h = heap::<32>(4096);
        let a = h.allocate(128, 0).unwrap();
        let b = h.allocate(128, 0).unwrap();
        assert_eq!(h.free(a + 64), Err(Error::ForeignPointer), "interior of a live block");
        assert_eq!(h.free(0x1234), Err(Error::ForeignPointer));
        h.free(a).unwrap();
        assert_eq!(h.free(a), Err(Error::DoubleFree));
        h.free(b).unwrap();
        assert_eq!(h.free(b), Err(Error::DoubleFree), "merged away, still detected");
        h.check_invariants().unwrap();
        assert_eq!(h.allocate(4096, 0), Ok(BASE));
    }

    #[test]
    fn a_full_header_table_is_reported_as_such() {
        // 4 headers: three 64-byte blocks and the free tail.
        let mut h = heap::<4>(4096);
        for _ in 0..3 {
            h.allocate(64, 0).unwrap();
        }
        assert_eq!(h.allocate(64, 0), Err(Error::BlockTableFull));
        // An exact fit needs no new header.
        assert_eq!(h.allocate(4096 - 192, 0), Ok(BASE + 192));
    }

    #[test]
    fn init_is_idempotent_and_uninit_heap_refuses() {
        let mut h = HbmHeap::<32>::new();
        assert_eq!(h.allocate(64, 0), Err(Error::HeapNotReady));
        assert_eq!(h.free(BASE), Err(Error::HeapNotReady));
        h.init(BASE + 1, 4096);
        assert_eq!(h.range(), (BASE + 64, 4032));
        let a = h.allocate(64, 0).unwrap();
        h.init(0, 1 << 20);
        assert_eq!(h.block_size(a), Some(64), "second init keeps live blocks");
    }

    #[test]
    fn default_capacity_is_at_least_the_originals() {
        const { assert!(DEFAULT_BLOCK_HEADERS >= ORIGINAL_BLOCK_HEADERS) };
        let mut h: HbmHeap = HbmHeap::new();
        h.init(BASE, 1 << 20);
        // Fill the default heap with small blocks until it refuses: room
        // for 16 Ki of them, so the header table is what runs out, and
        // not before the original's count (its last header is the tail).
        let mut live = std::vec::Vec::new();
        let refusal = loop {
            match h.allocate(64, 0) {
                Ok(a) => live.push(a),
                Err(e) => break e,
            }
        };
        assert_eq!(refusal, Error::BlockTableFull);
        assert_eq!(live.len(), DEFAULT_BLOCK_HEADERS - 1, "one header holds the free tail");
        assert!(live.len() >= ORIGINAL_BLOCK_HEADERS);
        assert!(live.windows(2).all(|w| w[1] >= w[0] + 64), "distinct, disjoint blocks");
        h.check_invariants().unwrap();
    }
}
