//! Model-based property tests of the three heaps: random alloc/free
//! sequences against a reference model of the live blocks. Each heap sees
//! CASES x OPS = 12,800 operations per run.
//!
//! Checked after every step: blocks are aligned, inside the heap and
//! disjoint; frees of live blocks succeed; double and foreign frees are
//! refused without changing anything; the use counter equals the model's;
//! and after freeing everything one allocation of the whole heap succeeds.

use neuron_runtime::heap::{DataRamHeap, HbmHeap, LibcHeap, HEAP_ALIGN};
use neuron_runtime::Error;
use proptest::prelude::*;

/// Fewer under Miri, which runs each case thousands of times slower.
const CASES: u32 = if cfg!(miri) { 1 } else { 64 };
/// Fewer under Miri too: 200 operations over a 60 KiB arena take minutes there.
const OPS: usize = if cfg!(miri) { 30 } else { 200 };

#[derive(Clone, Debug)]
enum Op {
    Alloc { size: usize, align_shift: u8 },
    Free { pick: usize },
    /// Free a live block a second time right after freeing it.
    DoubleFree { pick: usize },
    /// Free a pointer inside a live block.
    Interior { pick: usize },
}

fn ops(max_size: usize) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        5 => (1..=max_size, 0u8..4).prop_map(|(size, align_shift)| Op::Alloc { size, align_shift }),
        4 => any::<usize>().prop_map(|pick| Op::Free { pick }),
        1 => any::<usize>().prop_map(|pick| Op::DoubleFree { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Interior { pick }),
    ];
    proptest::collection::vec(op, OPS..=OPS)
}

/// What every heap offers the model, in addresses.
trait ModelHeap {
    fn alloc(&mut self, size: usize, align: usize) -> Result<u64, Error>;
    fn free(&mut self, addr: u64) -> Result<(), Error>;
    fn in_use(&self) -> u64;
    fn range(&self) -> (u64, u64);
    /// Largest single request that must succeed on an empty heap.
    fn whole(&self) -> usize;
    /// Bytes a live block of `size` occupies in the use counter.
    fn charged(&self, size: usize) -> u64;
    fn check(&self) {}
}

fn run<H: ModelHeap>(h: &mut H, ops: &[Op]) -> Result<(), TestCaseError> {
    let (lo, len) = h.range();
    let mut live: Vec<(u64, usize)> = Vec::new();
    let mut charged = 0u64;
    for op in ops {
        match *op {
            Op::Alloc { size, align_shift } => {
                let align = HEAP_ALIGN << align_shift;
                match h.alloc(size, align) {
                    Ok(a) => {
                        prop_assert_eq!(a % align as u64, 0);
                        prop_assert!(a >= lo && a + size as u64 <= lo + len);
                        for &(b, bs) in &live {
                            prop_assert!(a + size as u64 <= b || b + bs as u64 <= a, "overlap");
                        }
                        live.push((a, size));
                        charged += h.charged(size);
                    }
                    Err(e) => prop_assert!(matches!(e, Error::OutOfMemory | Error::BlockTableFull), "{:?}", e),
                }
            }
            Op::Free { pick } | Op::DoubleFree { pick } if !live.is_empty() => {
                let (a, size) = live.swap_remove(pick % live.len());
                prop_assert_eq!(h.free(a), Ok(()));
                charged -= h.charged(size);
                if matches!(op, Op::DoubleFree { .. }) {
                    let used = h.in_use();
                    prop_assert_eq!(h.free(a), Err(Error::DoubleFree));
                    prop_assert_eq!(h.in_use(), used);
                }
            }
            Op::Interior { pick } if !live.is_empty() => {
                let (a, _) = live[pick % live.len()];
                let used = h.in_use();
                prop_assert_eq!(h.free(a + 8), Err(Error::ForeignPointer));
                prop_assert_eq!(h.free(lo + len + 4096), Err(Error::ForeignPointer));
                prop_assert_eq!(h.in_use(), used);
            }
            _ => {}
        }
        prop_assert_eq!(h.in_use(), charged);
        h.check();
    }
    for (a, _) in live.drain(..) {
        prop_assert_eq!(h.free(a), Ok(()));
    }
    prop_assert_eq!(h.in_use(), 0);
    let whole = h.whole();
    let a = h.alloc(whole, 0);
    prop_assert!(a.is_ok(), "whole-heap allocation failed: {:?}", a);
    prop_assert_eq!(h.free(a.unwrap()), Ok(()));
    Ok(())
}

// ---- HBM heap: pure bookkeeping over SoC addresses ----

struct Hbm(HbmHeap<48>);

impl ModelHeap for Hbm {
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
    fn whole(&self) -> usize {
        self.0.range().1 as usize
    }
    fn charged(&self, size: usize) -> u64 {
        size.div_ceil(HEAP_ALIGN) as u64 * HEAP_ALIGN as u64
    }
    fn check(&self) {
        self.0.check_invariants().unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn hbm_heap_matches_model(ops in ops(if cfg!(miri) { 1 << 10 } else { 64 << 10 })) {
        let mut h = Hbm(HbmHeap::new());
        h.0.init(0x40_0100_0000, 1 << 20);
        run(&mut h, &ops)?;
    }

    #[test]
    fn dataram_heap_matches_model(ops in ops(if cfg!(miri) { 1 << 10 } else { 4 << 10 })) {
        let mut mem = Arena::new(60 << 10);
        let mut h = DataRam(DataRamHeap::new());
        // SAFETY: the arena outlives the heap and is used by nothing else.
        unsafe { h.0.init(mem.ptr(), mem.len()) };
        run(&mut h, &ops)?;
    }

    #[test]
    fn libc_heap_matches_model(ops in ops(if cfg!(miri) { 1 << 10 } else { 16 << 10 })) {
        let mut mem = Arena::new(256 << 10);
        let mut h = Libc(LibcHeap::new(), 0, 0);
        // One pointer for both: a second `mem.ptr()` would reborrow the
        // arena mutably and invalidate the heap's (found by Miri).
        let p = mem.ptr();
        // SAFETY: as above.
        unsafe { h.0.init_main(p, mem.len()) };
        h.1 = p as u64;
        h.2 = mem.len() as u64;
        run(&mut h, &ops)?;
    }
}

/// 64-byte aligned host memory for the directly addressable heaps.
struct Arena(Vec<u8>, usize);

impl Arena {
    fn new(len: usize) -> Self {
        let v = vec![0u8; len + HEAP_ALIGN];
        let skip = v.as_ptr().align_offset(HEAP_ALIGN);
        Arena(v, skip)
    }
    fn ptr(&mut self) -> *mut u8 {
        self.0[self.1..].as_mut_ptr()
    }
    fn len(&self) -> usize {
        self.0.len() - HEAP_ALIGN
    }
}

// ---- data-RAM heap ----

struct DataRam(DataRamHeap);

impl ModelHeap for DataRam {
    fn alloc(&mut self, size: usize, align: usize) -> Result<u64, Error> {
        let p = self.0.allocate(size, align)?;
        // Touch both ends: the block must be real memory.
        // SAFETY: the block is live and at least `size` bytes.
        unsafe {
            p.as_ptr().write(0x5A);
            p.as_ptr().add(size - 1).write(0xA5);
        }
        Ok(p.as_ptr() as u64)
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
    fn whole(&self) -> usize {
        self.0.range().1
    }
    fn charged(&self, size: usize) -> u64 {
        size.div_ceil(HEAP_ALIGN) as u64 * HEAP_ALIGN as u64
    }
}

// ---- libc heap ----

struct Libc(LibcHeap, u64, u64);

impl ModelHeap for Libc {
    fn alloc(&mut self, size: usize, align: usize) -> Result<u64, Error> {
        let p = self.0.memalign(align, size)?;
        // SAFETY: the block is live and at least `size` bytes.
        unsafe { p.as_ptr().write_bytes(0xC3, size) };
        Ok(p.as_ptr() as u64)
    }
    fn free(&mut self, addr: u64) -> Result<(), Error> {
        self.0.free(addr as usize as *mut u8)
    }
    fn in_use(&self) -> u64 {
        self.0.stats().in_use
    }
    fn range(&self) -> (u64, u64) {
        (self.1, self.2)
    }
    fn whole(&self) -> usize {
        // One header's worth is the allocator's own.
        self.2 as usize - HEAP_ALIGN
    }
    fn charged(&self, size: usize) -> u64 {
        size as u64
    }
}
