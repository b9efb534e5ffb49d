//! Heap operation sequences against a reference model, for each of the
//! three heaps (HBM, data RAM, libc).
//!
//! Input: byte 0 picks the heap (and a small or the default block table),
//! then operations of a few bytes each. The model keeps every live block
//! (address, size, fill byte). After every operation: blocks are aligned,
//! inside the heap and pairwise disjoint; every live block of the
//! addressable heaps still holds its fill byte (no corruption by the
//! allocator's own bookkeeping); the use counter equals the model's;
//! refused requests change nothing and carry the documented error:
//! a double free is `DoubleFree`, a pointer inside a live block or
//! outside the heap `ForeignPointer`, a bad alignment `BadAlignment`, and
//! an allocation may fail only with `OutOfMemory`, `BlockTableFull` or
//! `SizeOverflow`. At the end everything is freed and one allocation of
//! the whole heap must succeed (coalescing is complete).

use crate::input::Input;
use neuron_runtime::heap::{DataRamHeap, HbmHeap, LibcHeap, HEAP_ALIGN};
use neuron_runtime::Error;

const HBM_BASE: u64 = 0x40_0100_0000;
const HBM_SIZE: u64 = 256 << 10;
const DATARAM_SIZE: usize = 60 << 10;
const LIBC_SIZE: usize = 128 << 10;
/// Most operations one input runs (keeps an execution short).
const MAX_OPS: usize = 512;

/// What the model needs from a heap, in addresses.
trait Heap {
    fn alloc(&mut self, size: usize, align: usize) -> Result<u64, Error>;
    fn free(&mut self, addr: u64) -> Result<(), Error>;
    /// `Some` for the heap with a realloc (libc).
    fn realloc(&mut self, _addr: u64, _size: usize) -> Option<Result<Option<u64>, Error>> {
        None
    }
    fn in_use(&self) -> u64;
    fn range(&self) -> (u64, u64);
    /// Whether the blocks are real memory the model may fill and check.
    fn addressable(&self) -> bool;
    /// What the use counter charges for a block of `size`.
    fn charged(&self, size: usize) -> u64;
    /// Largest request that must succeed on an empty heap.
    fn whole(&self) -> usize;
    fn check(&self) {}
}

#[derive(Clone, Copy, Debug)]
struct Live {
    addr: u64,
    size: usize,
    fill: u8,
}

fn fill(b: &Live) {
    // SAFETY: the block is live, `size` bytes of real memory (addressable heaps only).
    unsafe { (b.addr as usize as *mut u8).write_bytes(b.fill, b.size) };
}

fn intact(b: &Live) -> bool {
    // SAFETY: as in `fill`.
    let s = unsafe { core::slice::from_raw_parts(b.addr as usize as *const u8, b.size) };
    s.iter().all(|&x| x == b.fill)
}

/// Runs the operations of `inp` on `h` against the model; returns how many
/// ran.
fn model<H: Heap>(h: &mut H, inp: &mut Input<'_>) -> usize {
    let (lo, len) = h.range();
    let mut live: Vec<Live> = Vec::new();
    let mut charged = 0u64;
    let mut next_fill = 1u8;
    let mut ops = 0;
    while !inp.is_empty() && ops < MAX_OPS {
        ops += 1;
        let op = inp.u8();
        let used = h.in_use();
        match op % 7 {
            // Allocate: size up to 64 KiB (or a huge one), alignment 64 << 0..8
            // or, rarely, not a power of two.
            0 | 1 => {
                let raw = inp.u16() as usize;
                let a = inp.u8();
                let size = if a & 0x80 != 0 && raw == 0xFFFF { usize::MAX - (a as usize) } else { raw + 1 };
                let align = if a & 0x40 != 0 { 3 * HEAP_ALIGN } else { HEAP_ALIGN << (a % 8) };
                match h.alloc(size, align) {
                    Ok(addr) => {
                        assert!(align.is_power_of_two(), "alignment {align} accepted");
                        assert_eq!(addr % align as u64, 0, "misaligned block");
                        assert!(addr >= lo && addr + size as u64 <= lo + len, "block outside the heap");
                        for b in &live {
                            assert!(addr + size as u64 <= b.addr || b.addr + b.size as u64 <= addr, "overlapping blocks");
                        }
                        let b = Live { addr, size, fill: next_fill };
                        next_fill = next_fill.wrapping_add(1).max(1);
                        if h.addressable() {
                            fill(&b);
                        }
                        live.push(b);
                        charged += h.charged(size);
                    }
                    Err(e) => {
                        if !align.is_power_of_two() {
                            assert_eq!(e, Error::BadAlignment);
                        } else {
                            assert!(matches!(e, Error::OutOfMemory | Error::BlockTableFull | Error::SizeOverflow), "{e:?}");
                        }
                        assert_eq!(h.in_use(), used, "a refused allocation changed the heap");
                    }
                }
            }
            // Free a live block; with bit 3, free it a second time.
            2 | 3 if !live.is_empty() => {
                let i = inp.u8() as usize % live.len();
                let b = live.swap_remove(i);
                if h.addressable() {
                    assert!(intact(&b), "block {:#x} ({} bytes) corrupted", b.addr, b.size);
                }
                assert_eq!(h.free(b.addr), Ok(()));
                charged -= h.charged(b.size);
                if op & 8 != 0 {
                    let used = h.in_use();
                    assert_eq!(h.free(b.addr), Err(Error::DoubleFree));
                    assert_eq!(h.in_use(), used);
                }
            }
            // A pointer inside a live block (64-byte granular, not its start).
            4 if !live.is_empty() => {
                let b = live[inp.u8() as usize % live.len()];
                let k = 1 + inp.u8() as u64;
                let p = b.addr + HEAP_ALIGN as u64 * k;
                if p < b.addr + b.size as u64 {
                    assert_eq!(h.free(p), Err(Error::ForeignPointer), "interior pointer");
                    assert_eq!(h.in_use(), used);
                }
            }
            // An arbitrary address: outside the heap it is foreign; inside,
            // refused unless it is a live block's start.
            5 => {
                let mut p = inp.u64();
                if op & 0x10 != 0 {
                    p = lo + p % (len + 4096);
                }
                if p == 0 || live.iter().any(|b| b.addr == p) {
                    continue;
                }
                let r = h.free(p);
                if p < lo || p >= lo + len {
                    assert_eq!(r, Err(Error::ForeignPointer), "{p:#x} outside the heap");
                } else {
                    assert!(matches!(r, Err(Error::ForeignPointer | Error::DoubleFree)), "{p:#x}: {r:?}");
                }
                assert_eq!(h.in_use(), used);
            }
            // realloc (libc): contents kept up to the smaller size.
            6 if !live.is_empty() => {
                let i = inp.u8() as usize % live.len();
                let b = live[i];
                let size = inp.u16() as usize;
                let Some(r) = h.realloc(b.addr, size) else { continue };
                match r {
                    Ok(Some(q)) => {
                        // SAFETY: q is live and holds at least min(old, new) bytes.
                        let kept = unsafe { core::slice::from_raw_parts(q as usize as *const u8, b.size.min(size)) };
                        assert!(kept.iter().all(|&x| x == b.fill), "realloc lost the contents");
                        charged = charged - h.charged(b.size) + h.charged(size);
                        live.swap_remove(i);
                        for o in &live {
                            assert!(q + size as u64 <= o.addr || o.addr + o.size as u64 <= q, "realloc overlaps");
                        }
                        let nb = Live { addr: q, size, fill: b.fill };
                        fill(&nb);
                        live.push(nb);
                    }
                    Ok(None) => {
                        assert_eq!(size, 0);
                        charged -= h.charged(b.size);
                        live.swap_remove(i);
                    }
                    Err(e) => {
                        assert!(matches!(e, Error::OutOfMemory), "{e:?}");
                        assert!(intact(&b), "a failed realloc changed the block");
                        assert_eq!(h.in_use(), used);
                    }
                }
            }
            _ => {}
        }
        assert_eq!(h.in_use(), charged, "use counter drifted");
        h.check();
    }
    for b in live.drain(..) {
        if h.addressable() {
            assert!(intact(&b), "block {:#x} corrupted", b.addr);
        }
        assert_eq!(h.free(b.addr), Ok(()));
    }
    assert_eq!(h.in_use(), 0);
    let whole = h.whole();
    let a = h.alloc(whole, 0);
    assert!(a.is_ok(), "whole-heap allocation after freeing everything: {a:?}");
    assert_eq!(h.free(a.unwrap()), Ok(()));
    ops
}

struct Hbm<const N: usize>(HbmHeap<N>);

impl<const N: usize> Heap for Hbm<N> {
    fn alloc(&mut self, size: usize, align: usize) -> Result<u64, Error> {
        self.0.allocate(size as u64, align)
    }
    fn free(&mut self, addr: u64) -> Result<(), Error> {
        self.0.free(addr)
    }
    fn in_use(&self) -> u64 {
        self.0.stats().in_use
    }
    fn range(&self) -> (u64, u64) {
        self.0.range()
    }
    fn addressable(&self) -> bool {
        false
    }
    fn charged(&self, size: usize) -> u64 {
        size.div_ceil(HEAP_ALIGN) as u64 * HEAP_ALIGN as u64
    }
    fn whole(&self) -> usize {
        self.0.range().1 as usize
    }
    fn check(&self) {
        self.0.check_invariants().unwrap();
    }
}

struct DataRam<const L: usize>(DataRamHeap<L>);

impl<const L: usize> Heap for DataRam<L> {
    fn alloc(&mut self, size: usize, align: usize) -> Result<u64, Error> {
        self.0.allocate(size, align).map(|p| p.as_ptr() as u64)
    }
    fn free(&mut self, addr: u64) -> Result<(), Error> {
        self.0.free(addr as usize as *mut u8)
    }
    fn in_use(&self) -> u64 {
        self.0.stats().in_use
    }
    fn range(&self) -> (u64, u64) {
        let (b, l) = self.0.range();
        (b as u64, l as u64)
    }
    fn addressable(&self) -> bool {
        true
    }
    fn charged(&self, size: usize) -> u64 {
        size.div_ceil(HEAP_ALIGN) as u64 * HEAP_ALIGN as u64
    }
    fn whole(&self) -> usize {
        self.0.range().1
    }
}

struct Libc(LibcHeap, u64, u64);

impl Heap for Libc {
    fn alloc(&mut self, size: usize, align: usize) -> Result<u64, Error> {
        self.0.memalign(align, size).map(|p| p.as_ptr() as u64)
    }
    fn free(&mut self, addr: u64) -> Result<(), Error> {
        // SAFETY: the harness frees its own blocks, double frees and
        // pointers it never got; it writes no block's header.
        unsafe { self.0.free(addr as usize as *mut u8) }
    }
    fn realloc(&mut self, addr: u64, size: usize) -> Option<Result<Option<u64>, Error>> {
        // SAFETY: as in `free`.
        Some(unsafe { self.0.realloc(addr as usize as *mut u8, size) }.map(|o| o.map(|p| p.as_ptr() as u64)))
    }
    fn in_use(&self) -> u64 {
        self.0.stats().in_use
    }
    fn range(&self) -> (u64, u64) {
        (self.1, self.2)
    }
    fn addressable(&self) -> bool {
        true
    }
    fn charged(&self, size: usize) -> u64 {
        size as u64
    }
    fn whole(&self) -> usize {
        // One header's worth is the allocator's own.
        self.2 as usize - HEAP_ALIGN
    }
}

/// 64-byte aligned host memory for the addressable heaps.
#[repr(C, align(64))]
struct Chunk([u8; 64]);

fn arena(len: usize) -> Vec<Chunk> {
    (0..len / 64).map(|_| Chunk([0; 64])).collect()
}

/// The heap byte 0 of an input selects (`which % 3`).
pub const HBM: u8 = 0;
/// See [`HBM`].
pub const DATARAM: u8 = 1;
/// See [`HBM`].
pub const LIBC: u8 = 2;

/// Runs one input; returns the number of heap operations it made.
pub fn run(data: &[u8]) -> usize {
    let mut inp = Input::new(data);
    let which = inp.u8();
    match which % 3 {
        0 => {
            if which & 0x80 != 0 {
                let mut h = Hbm(HbmHeap::<8>::new());
                h.0.init(HBM_BASE, HBM_SIZE);
                model(&mut h, &mut inp)
            } else {
                let mut h = Hbm(HbmHeap::<64>::new());
                h.0.init(HBM_BASE, HBM_SIZE);
                model(&mut h, &mut inp)
            }
        }
        1 => {
            let mut mem = arena(DATARAM_SIZE);
            let p = mem.as_mut_ptr().cast::<u8>();
            if which & 0x80 != 0 {
                let mut h = DataRam(DataRamHeap::<8>::new());
                // SAFETY: `mem` outlives the heap and is used by nothing else.
                unsafe { h.0.init(p, DATARAM_SIZE) };
                model(&mut h, &mut inp)
            } else {
                let mut h = DataRam(DataRamHeap::<64>::new());
                // SAFETY: as above.
                unsafe { h.0.init(p, DATARAM_SIZE) };
                model(&mut h, &mut inp)
            }
        }
        _ => {
            let mut mem = arena(LIBC_SIZE);
            let p = mem.as_mut_ptr().cast::<u8>();
            let mut h = Libc(LibcHeap::new(), p as u64, LIBC_SIZE as u64);
            // SAFETY: `mem` outlives the heap and is used by nothing else.
            unsafe { h.0.init_main(p, LIBC_SIZE) };
            model(&mut h, &mut inp)
        }
    }
}
