//! A first-fit, address-ordered, coalescing free-list allocator over one
//! region, with no panicking path (the runtime links no panic machinery:
//! `linked_list_allocator`, which this replaces, asserts and unwraps).
//!
//! The free list lives in the free memory itself: each hole starts with a
//! [`Hole`] node. Nodes hold offsets from the region's base, not addresses,
//! so every pointer is derived from the one the region was given with.
//! Every offset and size is a multiple of [`GRANULE`], so a hole is always
//! big enough for its node.
//!
//! The nodes sit in memory a kernel can write (a store into freed or
//! never-allocated heap memory lands on them), so each node is checked as
//! it is read: on a granule, inside the region, its hole inside the
//! region and its successor after it. A node that fails is a corrupted
//! heap ([`FirstFit::is_corrupt`]): allocation and free are refused from
//! then on, and no read or write ever leaves the region.

use core::alloc::Layout;
use core::ptr::NonNull;

/// Allocation granule: sizes round up to it, holes start on it, and it
/// holds a [`Hole`] (two words, also on a 64-bit host).
pub const GRANULE: usize = 16;

/// Marks the end of the list in [`Hole::next`] and in the head.
const NONE: usize = usize::MAX;

/// The node at the start of every hole.
#[derive(Clone, Copy)]
#[repr(C)]
struct Hole {
    /// Bytes in this hole (a multiple of [`GRANULE`]).
    size: usize,
    /// Offset of the next hole (higher address), or [`NONE`].
    next: usize,
}

const _: () = assert!(core::mem::size_of::<Hole>() <= GRANULE);
const _: () = assert!(core::mem::align_of::<Hole>() <= GRANULE);

/// Why a free was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreeError {
    /// The block is not inside the region, or not on a granule.
    Outside,
    /// The block overlaps memory that is already free.
    Overlap,
    /// The free list in the region's memory was overwritten.
    Corrupt,
}

/// One region's allocator.
pub struct FirstFit {
    base: *mut u8,
    len: usize,
    head: usize,
    free: usize,
    /// A node failed its check: nothing more is allocated or freed.
    corrupt: bool,
}

// SAFETY: the allocator owns its region exclusively (`init`'s contract);
// moving it to another thread moves that ownership with it.
unsafe impl Send for FirstFit {}

const fn round_up(n: usize, align: usize) -> Option<usize> {
    match n.checked_add(align - 1) {
        Some(v) => Some(v & !(align - 1)),
        None => None,
    }
}

impl FirstFit {
    /// An allocator with no memory: every allocation fails.
    pub const fn empty() -> Self {
        Self { base: core::ptr::null_mut(), len: 0, head: NONE, free: 0, corrupt: false }
    }

    /// Manages `size` bytes at `bottom` (the part from the first granule
    /// boundary on, in whole granules). Replaces any earlier region.
    ///
    /// # Safety
    /// `bottom..bottom+size` must be readable and writable, and used by
    /// nothing else for as long as this allocator lives.
    pub unsafe fn init(&mut self, bottom: *mut u8, size: usize) {
        *self = Self::empty();
        let skip = bottom.align_offset(GRANULE);
        if bottom.is_null() || skip >= size {
            return;
        }
        let len = (size - skip) & !(GRANULE - 1);
        if len == 0 {
            return;
        }
        self.base = bottom.wrapping_add(skip);
        self.len = len;
        self.head = 0;
        self.free = len;
        // SAFETY: offset 0 is inside the region and granule-aligned.
        unsafe { self.write(0, Hole { size: len, next: NONE }) };
    }

    /// Bytes in holes.
    pub fn free(&self) -> usize {
        self.free
    }

    /// Bytes managed.
    pub fn size(&self) -> usize {
        self.len
    }

    /// Address of the managed region's first byte (0 before `init`).
    pub fn base_addr(&self) -> usize {
        self.base as usize
    }

    /// Whether a node of the free list was found overwritten (every
    /// allocation and free fails from then on).
    pub fn is_corrupt(&self) -> bool {
        self.corrupt
    }

    /// The node at `off` (taken from the list), checked: on a granule, its
    /// hole inside the region, the next hole at or after its end. None
    /// (and the heap marked corrupt) when it is not.
    fn read(&mut self, off: usize) -> Option<Hole> {
        let node = off.is_multiple_of(GRANULE) && off.checked_add(GRANULE).is_some_and(|e| e <= self.len);
        if !node {
            self.corrupt = true;
            return None;
        }
        // SAFETY: a node's worth of bytes at a granule boundary inside the
        // region, which this allocator owns (`init`'s contract); any bits
        // are a valid `Hole`.
        let h = unsafe { self.base.add(off).cast::<Hole>().read() };
        let end = off.checked_add(h.size).filter(|&e| h.size != 0 && h.size.is_multiple_of(GRANULE) && e <= self.len);
        let ok = end.is_some_and(|e| h.next == NONE || (h.next >= e && h.next < self.len));
        if !ok {
            self.corrupt = true;
            return None;
        }
        Some(h)
    }

    /// Writes the node at `off`.
    ///
    /// # Safety
    /// `off` is a granule-aligned offset inside this region whose bytes
    /// (a node's worth) are free memory.
    unsafe fn write(&mut self, off: usize, h: Hole) {
        // SAFETY: the caller's contract: in the region, aligned, free.
        unsafe { self.base.add(off).cast::<Hole>().write(h) }
    }

    /// Points the link before a hole (the head, or `prev`'s node, read
    /// as its `Hole`) at `to`.
    ///
    /// # Safety
    /// `prev`, when some, is a hole of this region checked by [`read`](Self::read).
    unsafe fn link(&mut self, prev: Option<(usize, Hole)>, to: usize) {
        match prev {
            None => self.head = to,
            Some((p, h)) => {
                // SAFETY: forwarded; a hole's node is free memory.
                unsafe { self.write(p, Hole { next: to, ..h }) };
            }
        }
    }

    /// The first hole (lowest address) that fits `layout`: the block is
    /// cut from it, the front and back remainders stay holes. `None` when
    /// no hole fits.
    pub fn allocate_first_fit(&mut self, layout: Layout) -> Option<NonNull<u8>> {
        let size = round_up(layout.size().max(1), GRANULE)?;
        let align = layout.align().max(GRANULE);
        // The base's own alignment beyond the granule decides which
        // offsets give aligned addresses.
        let mis = (self.base as usize) & (align - 1);
        let mut prev: Option<(usize, Hole)> = None;
        let mut cur = self.head;
        while cur != NONE && !self.corrupt {
            let hole = self.read(cur)?;
            let hole_end = cur + hole.size;
            // First offset >= cur whose address is `align`-aligned.
            let start = round_up(cur.wrapping_add(mis), align).map(|v| v.wrapping_sub(mis));
            if let Some(start) = start.filter(|s| *s >= cur) {
                if let Some(end) = start.checked_add(size).filter(|e| *e <= hole_end) {
                    let front = start - cur;
                    let back = hole_end - end;
                    let after = if back != 0 {
                        // SAFETY: `end` is granule-aligned, inside this
                        // hole, and not part of the block.
                        unsafe { self.write(end, Hole { size: back, next: hole.next }) };
                        end
                    } else {
                        hole.next
                    };
                    if front != 0 {
                        // SAFETY: `cur` is a hole; it keeps its front part.
                        unsafe { self.write(cur, Hole { size: front, next: after }) };
                    } else {
                        // SAFETY: `prev` is a checked hole or the head.
                        unsafe { self.link(prev, after) };
                    }
                    self.free -= size;
                    // `start + size <= len`, so the add stays in the region.
                    return NonNull::new(self.base.wrapping_add(start));
                }
            }
            prev = Some((cur, hole));
            cur = hole.next;
        }
        None
    }

    /// Returns the block at `ptr` of `layout` (as it was allocated) to the
    /// list, merged with its neighbours. A block outside the region or
    /// overlapping a hole is refused and the list is left as it was.
    ///
    /// # Safety
    /// `ptr..ptr+layout.size()` must not be in use any more (the caller's
    /// bookkeeping says it was handed out with this layout).
    pub unsafe fn deallocate(&mut self, ptr: NonNull<u8>, layout: Layout) -> Result<(), FreeError> {
        let size = round_up(layout.size().max(1), GRANULE).ok_or(FreeError::Outside)?;
        let off = (ptr.as_ptr() as usize).wrapping_sub(self.base as usize);
        let end = off.checked_add(size).ok_or(FreeError::Outside)?;
        if self.len == 0 || !off.is_multiple_of(GRANULE) || end > self.len {
            return Err(FreeError::Outside);
        }
        if self.corrupt {
            return Err(FreeError::Corrupt);
        }
        // Find the holes either side (address order).
        let mut prev: Option<(usize, Hole)> = None;
        let mut next = self.head;
        while next != NONE && next < off {
            let h = self.read(next).ok_or(FreeError::Corrupt)?;
            prev = Some((next, h));
            next = h.next;
        }
        if prev.is_some_and(|(p, h)| p + h.size > off) || (next != NONE && next < end) {
            return Err(FreeError::Overlap);
        }
        let mut node = Hole { size, next };
        if next != NONE && next == end {
            let n = self.read(next).ok_or(FreeError::Corrupt)?;
            node = Hole { size: size + n.size, next: n.next };
        }
        match prev {
            Some((p, h)) if p + h.size == off => {
                // SAFETY: `p` is a hole; it grows over the block.
                unsafe { self.write(p, Hole { size: h.size + node.size, next: node.next }) };
            }
            _ => {
                // SAFETY: `off` is the freed block's start: in the region,
                // aligned, no longer in use.
                unsafe { self.write(off, node) };
                // SAFETY: `prev` is a checked hole or the head.
                unsafe { self.link(prev, off) };
            }
        }
        self.free += size;
        Ok(())
    }

    /// The holes as `(offset, size)`, lowest first (for checks); ends at
    /// a node that fails its check (marking the heap corrupt).
    pub fn holes(&mut self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let mut cur = self.head;
        core::iter::from_fn(move || {
            if cur == NONE {
                return None;
            }
            let h = self.read(cur)?;
            let r = (cur, h.size);
            cur = h.next;
            Some(r)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    #[repr(align(64))]
    struct Mem([u8; 4096]);

    fn make(mem: &mut Mem, skip: usize) -> FirstFit {
        let mut a = FirstFit::empty();
        // SAFETY: the buffer outlives the allocator and is used by nothing else.
        unsafe { a.init(mem.0.as_mut_ptr().wrapping_add(skip), mem.0.len() - skip) };
        a
    }

    #[test]
    fn empty_refuses_everything() {
        let mut a = FirstFit::empty();
        assert!(a.allocate_first_fit(Layout::from_size_align(8, 8).unwrap()).is_none());
        let p = NonNull::<u8>::dangling();
        // SAFETY: refused before any memory is touched.
        assert_eq!(unsafe { a.deallocate(p, Layout::from_size_align(8, 8).unwrap()) }, Err(FreeError::Outside));
    }

    #[test]
    fn cuts_merges_and_refuses_double_frees() {
        let mut mem = Mem([0; 4096]);
        let mut a = make(&mut mem, 0);
        let l = Layout::from_size_align(100, 64).unwrap();
        let x = a.allocate_first_fit(l).unwrap();
        let y = a.allocate_first_fit(l).unwrap();
        assert_eq!(a.free(), 4096 - 2 * 112);
        // SAFETY: `x` was allocated with `l` and is not used.
        unsafe { a.deallocate(x, l).unwrap() };
        // SAFETY: as above; the second free is refused.
        assert_eq!(unsafe { a.deallocate(x, l) }, Err(FreeError::Overlap));
        // SAFETY: `y` was allocated with `l`.
        unsafe { a.deallocate(y, l).unwrap() };
        assert_eq!(a.holes().collect::<Vec<_>>(), [(0, 4096)]);
    }

    #[test]
    fn an_overwritten_free_list_is_a_corrupt_heap_not_a_wild_write() {
        let l = Layout::from_size_align(64, 16).unwrap();
        // A hole's size past the region, a successor before the hole (a
        // loop), a successor off the granule, a zero size.
        for (size, next) in [(usize::MAX - 8, NONE), (16, 0), (16, 72), (0, NONE)] {
            let mut mem = Mem([0; 4096]);
            let mut a = make(&mut mem, 0);
            let x = a.allocate_first_fit(l).unwrap();
            let y = a.allocate_first_fit(l).unwrap();
            // SAFETY: `x` was allocated with `l` and is not used.
            unsafe { a.deallocate(x, l).unwrap() };
            // SAFETY: `x`'s block is freed memory of the region (its
            // node), aligned: written as a kernel's stray store would.
            unsafe { x.as_ptr().cast::<[usize; 2]>().write([size, next]) };
            assert!(a.allocate_first_fit(l).is_none(), "size {size} next {next}");
            assert!(a.is_corrupt());
            // SAFETY: `y` was allocated with `l`; refused, nothing touched.
            assert_eq!(unsafe { a.deallocate(y, l) }, Err(FreeError::Corrupt));
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Alloc(usize, u32),
        Free(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![(1usize..700, 0u32..8).prop_map(|(s, a)| Op::Alloc(s, a)), any::<usize>().prop_map(Op::Free)]
    }

    proptest! {
        /// Against a model of the live blocks: blocks are aligned, inside
        /// the region and disjoint; the holes are sorted, merged, disjoint
        /// from every block and add up to `free()`; an allocation fails only
        /// when no hole fits; all freed gives back the one region.
        #[test]
        fn matches_model(skip in 0usize..48, ops in proptest::collection::vec(op(), 1..64)) {
            let mut mem = Mem([0; 4096]);
            let mut a = make(&mut mem, skip);
            let base = a.base as usize;
            let mut live: Vec<(usize, Layout)> = Vec::new();
            for op in ops {
                match op {
                    Op::Alloc(s, a2) => {
                        let l = Layout::from_size_align(s, 1 << a2).unwrap();
                        match a.allocate_first_fit(l) {
                            Some(p) => {
                                let addr = p.as_ptr() as usize;
                                prop_assert_eq!(addr % l.align(), 0);
                                prop_assert!(addr >= base && addr + s <= base + a.size());
                                for &(o, ol) in &live {
                                    prop_assert!(addr + s <= o || o + ol.size() <= addr);
                                }
                                // SAFETY: the block is ours and `s` bytes long.
                                unsafe { p.as_ptr().write_bytes(0x5A, s) };
                                live.push((addr, l));
                            }
                            None => {
                                let need = round_up(s, GRANULE).unwrap();
                                let align = l.align().max(GRANULE);
                                let fits = a.holes().any(|(o, sz)| {
                                    let st = round_up(base + o, align).unwrap();
                                    st + need <= base + o + sz
                                });
                                prop_assert!(!fits, "refused although a hole fits");
                            }
                        }
                    }
                    Op::Free(k) if !live.is_empty() => {
                        let (addr, l) = live.swap_remove(k % live.len());
                        // SAFETY: the block was allocated with `l` and is dropped from the model.
                        prop_assert_eq!(unsafe { a.deallocate(NonNull::new(addr as *mut u8).unwrap(), l) }, Ok(()));
                        // SAFETY: a second free of the same block is refused.
                        prop_assert_eq!(unsafe { a.deallocate(NonNull::new(addr as *mut u8).unwrap(), l) }, Err(FreeError::Overlap));
                    }
                    Op::Free(_) => {}
                }
                let holes: Vec<_> = a.holes().collect();
                let mut sum = 0;
                for w in holes.windows(2) {
                    prop_assert!(w[0].0 + w[0].1 < w[1].0, "holes sorted and merged");
                }
                for &(o, sz) in &holes {
                    sum += sz;
                    for &(b, l) in &live {
                        prop_assert!(base + o + sz <= b || b + l.size() <= base + o);
                    }
                }
                prop_assert_eq!(sum, a.free());
            }
            for (addr, l) in live.drain(..) {
                // SAFETY: every live block was allocated with its layout.
                unsafe { a.deallocate(NonNull::new(addr as *mut u8).unwrap(), l).unwrap() };
            }
            prop_assert_eq!(a.holes().collect::<Vec<_>>(), [(0, a.size())]);
        }
    }
}
