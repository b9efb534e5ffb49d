//! The heap behind `malloc`/`free`/`calloc`/`realloc` (and Rust's `alloc`
//! on the device).
//!
//! Two arenas: a small bootstrap arena, which is the "default malloc" the
//! init prologue forces on while the neuron heaps are being built, and the
//! main arena in hbm_scratch (reached through the pinned window, so it is
//! directly addressable). `free` finds the arena by address. Each block
//! carries a 64-byte header in front of it, so `free(p)` needs no size; the
//! header's magic and state turn foreign pointers and double frees into
//! errors instead of corruption.

use super::first_fit::{FirstFit, FreeError};
use super::{effective_align, HeapStats, HEAP_ALIGN};
use crate::error::{Error, Result};
use core::alloc::Layout;
use core::ptr::NonNull;

/// Bytes in front of every block (keeps user pointers 64-byte aligned).
const HEADER: usize = HEAP_ALIGN;
/// The header sits at the end of that prefix: a freed block's first bytes
/// become the allocator's hole node, and must not be the header.
const HEADER_AT: usize = core::mem::size_of::<Header>();
const MAGIC: u32 = 0x4E43_4F50; // "NCOP"
const LIVE: u32 = 0x1;
const FREED: u32 = 0x2;

#[derive(Clone, Copy)]
#[repr(C)]
struct Header {
    magic: u32,
    state: u32,
    /// Bytes the user asked for.
    size: usize,
    /// Distance from the allocation's start to the user pointer.
    offset: usize,
    /// Alignment of the allocation.
    align: usize,
}

const _: () = assert!(core::mem::size_of::<Header>() <= HEADER / 2);

struct Arena {
    heap: FirstFit,
    base: usize,
    size: usize,
}

impl Arena {
    const fn empty() -> Self {
        Self { heap: FirstFit::empty(), base: 0, size: 0 }
    }

    fn contains(&self, addr: usize) -> bool {
        addr >= self.base && addr < self.base + self.size
    }
}

/// Which arena `malloc` serves from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArenaKind {
    /// The bootstrap arena (default malloc during init).
    Bootstrap,
    /// The main arena in hbm_scratch.
    Main,
}

/// The libc heap of one core.
pub struct LibcHeap {
    boot: Arena,
    main: Arena,
    use_default: bool,
    stats: HeapStats,
}

impl core::fmt::Debug for LibcHeap {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LibcHeap").field("use_default", &self.use_default).field("stats", &self.stats).finish()
    }
}

impl Default for LibcHeap {
    fn default() -> Self {
        Self::new()
    }
}

impl LibcHeap {
    /// A heap with no arenas.
    pub const fn new() -> Self {
        Self {
            boot: Arena::empty(),
            main: Arena::empty(),
            use_default: false,
            stats: HeapStats { capacity: 0, in_use: 0, high_water: 0, allocs: 0, frees: 0, failures: 0 },
        }
    }

    /// Gives the bootstrap arena its memory (once).
    ///
    /// # Safety
    /// As for [`LibcHeap::init_main`].
    pub unsafe fn init_bootstrap(&mut self, bottom: *mut u8, size: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { Self::init_arena(&mut self.boot, &mut self.stats, bottom, size) }
    }

    /// Where the bootstrap arena starts (0 before it has memory).
    pub fn bootstrap_base(&self) -> usize {
        self.boot.base
    }

    /// `_init_libc_heap_allocator`: gives the main arena its memory (once;
    /// later calls keep it as it is).
    ///
    /// # Safety
    /// `bottom..bottom+size` must be readable and writable by the core and
    /// used by nothing else for as long as this heap lives.
    pub unsafe fn init_main(&mut self, bottom: *mut u8, size: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { Self::init_arena(&mut self.main, &mut self.stats, bottom, size) }
    }

    unsafe fn init_arena(a: &mut Arena, stats: &mut HeapStats, bottom: *mut u8, size: usize) {
        if a.size != 0 || bottom.is_null() || size < 2 * HEADER {
            return;
        }
        // SAFETY: the caller hands us the range exclusively.
        unsafe { a.heap.init(bottom, size) };
        a.base = bottom as usize;
        a.size = size;
        stats.capacity += size as u64;
    }

    /// Forces (or releases) the default malloc, as the init prologue does.
    pub fn set_use_default(&mut self, on: bool) {
        self.use_default = on;
    }

    /// The arena `malloc` serves from now.
    pub fn active(&self) -> ArenaKind {
        if self.use_default || self.main.size == 0 {
            ArenaKind::Bootstrap
        } else {
            ArenaKind::Main
        }
    }

    /// Use counters (user bytes).
    pub fn stats(&self) -> HeapStats {
        self.stats
    }

    /// Restarts the counters and the high-water mark (see
    /// [`HeapStats::restart`]).
    pub fn restart_stats(&mut self) {
        self.stats.restart();
    }

    /// `malloc`.
    pub fn malloc(&mut self, size: usize) -> Result<NonNull<u8>> {
        self.memalign(HEAP_ALIGN, size)
    }

    /// `memalign` / Rust's `alloc`: `size` bytes aligned to `align`.
    pub fn memalign(&mut self, align: usize, size: usize) -> Result<NonNull<u8>> {
        let align = match effective_align(align) {
            Ok(a) => a,
            Err(e) => return self.stats.on_failure(e),
        };
        let offset = align.max(HEADER);
        let Some(layout) = size.checked_add(offset).and_then(|t| Layout::from_size_align(t, align).ok()) else {
            return self.stats.on_failure(Error::SizeOverflow);
        };
        let arena = match self.active() {
            ArenaKind::Bootstrap => &mut self.boot,
            ArenaKind::Main => &mut self.main,
        };
        if arena.size == 0 {
            return self.stats.on_failure(Error::HeapNotReady);
        }
        let Some(start) = arena.heap.allocate_first_fit(layout) else {
            let e = if arena.heap.is_corrupt() { Error::HeapCorrupted } else { Error::OutOfMemory };
            return self.stats.on_failure(e);
        };
        // SAFETY: the block is `offset + size` bytes, so the user pointer
        // and the header right below it (offset >= HEADER) are inside it.
        let user = unsafe { start.as_ptr().add(offset) };
        let h = Header { magic: MAGIC, state: LIVE, size, offset, align };
        // SAFETY: the header slot is inside the fresh block and aligned (64).
        unsafe { user.sub(HEADER_AT).cast::<Header>().write(h) };
        self.stats.on_alloc(size as u64);
        // SAFETY: user is inside a non-null block.
        Ok(unsafe { NonNull::new_unchecked(user) })
    }

    /// `calloc`: zeroed, with overflow checked.
    pub fn calloc(&mut self, n: usize, size: usize) -> Result<NonNull<u8>> {
        let Some(total) = n.checked_mul(size) else {
            return self.stats.on_failure(Error::SizeOverflow);
        };
        let p = self.malloc(total)?;
        // SAFETY: the block holds `total` bytes.
        unsafe { p.as_ptr().write_bytes(0, total) };
        Ok(p)
    }

    /// Reads and checks the header of a user pointer; returns the arena
    /// index (0 boot, 1 main) and the header.
    fn header_of(&self, p: *mut u8) -> Result<(usize, Header)> {
        let addr = p as usize;
        let which = if self.boot.contains(addr) {
            0
        } else if self.main.contains(addr) {
            1
        } else {
            return Err(Error::ForeignPointer);
        };
        let a = if which == 0 { &self.boot } else { &self.main };
        if !addr.is_multiple_of(HEAP_ALIGN) || addr - a.base < HEADER {
            return Err(Error::ForeignPointer);
        }
        // SAFETY: the header slot lies inside the arena (checked), which is
        // memory we own; it is read as plain bytes whatever it holds.
        let h = unsafe { p.sub(HEADER_AT).cast::<Header>().read() };
        match (h.magic, h.state) {
            (MAGIC, LIVE) => Ok((which, h)),
            (MAGIC, FREED) => Err(Error::DoubleFree),
            _ => Err(Error::ForeignPointer),
        }
    }

    /// Whether `p` points into one of this heap's arenas. Compares
    /// addresses only (nothing is read), so any pointer may be asked: this
    /// is how a caller that holds blocks of two allocators picks the heap.
    pub fn owns(&self, p: *const u8) -> bool {
        let addr = p as usize;
        self.boot.contains(addr) || self.main.contains(addr)
    }

    /// `free`. Null is a no-op.
    ///
    /// A pointer outside both arenas is refused untouched
    /// ([`Error::ForeignPointer`]), and a header marked freed gives
    /// [`Error::DoubleFree`]; those checks are a diagnosis, not a guard: the
    /// header they read is in-band, and a store that forged one would make
    /// this hand a bogus block to the allocator.
    ///
    /// # Safety
    /// If `p` lies in one of this heap's arenas, the header slot just below
    /// it holds a live header only if this heap wrote it there for the
    /// block at `p` (handed out by `malloc`, `calloc`, `memalign` or
    /// `realloc`), and the caller no longer uses that block. Null, a
    /// pointer outside the arenas, a double free and a slot holding
    /// anything but a live header are refused untouched.
    ///
    /// Safe code cannot call it (the header it trusts can be forged):
    ///
    /// ```compile_fail,E0133
    /// let mut h = neuron_runtime::heap::LibcHeap::new();
    /// let _ = h.free(core::ptr::null_mut());
    /// ```
    pub unsafe fn free(&mut self, p: *mut u8) -> Result<()> {
        if p.is_null() {
            return Ok(());
        }
        let (which, h) = match self.header_of(p) {
            Ok(v) => v,
            Err(e) => return self.stats.on_failure(e),
        };
        // SAFETY: the header was validated as live; mark it freed before
        // handing the block back so a second free is recognised.
        unsafe { p.sub(HEADER_AT).cast::<Header>().write(Header { state: FREED, ..h }) };
        let arena = if which == 0 { &mut self.boot } else { &mut self.main };
        // SAFETY: start and layout are exactly those of the live block.
        unsafe {
            let start = NonNull::new_unchecked(p.sub(h.offset));
            let layout = Layout::from_size_align_unchecked(h.size + h.offset, h.align);
            if let Err(e) = arena.heap.deallocate(start, layout) {
                // A header that passed the checks over a block the list
                // holds as free, or a free list that fails its checks:
                // corrupted memory. Refused, and the header put back as it
                // was (the block stays live).
                p.sub(HEADER_AT).cast::<Header>().write(h);
                let e = if e == FreeError::Corrupt { Error::HeapCorrupted } else { Error::ForeignPointer };
                return self.stats.on_failure(e);
            }
        }
        self.stats.on_free(h.size as u64);
        Ok(())
    }

    /// `realloc`: null `p` allocates; size 0 frees and returns `Ok(None)`.
    /// Misuse is diagnosed as [`LibcHeap::free`] does.
    ///
    /// # Safety
    /// As [`LibcHeap::free`]; the block's bytes are read, so nothing else
    /// writes them meanwhile.
    ///
    /// ```compile_fail,E0133
    /// let mut h = neuron_runtime::heap::LibcHeap::new();
    /// let _ = h.realloc(core::ptr::null_mut(), 8);
    /// ```
    pub unsafe fn realloc(&mut self, p: *mut u8, size: usize) -> Result<Option<NonNull<u8>>> {
        if p.is_null() {
            return self.malloc(size).map(Some);
        }
        let (_, h) = match self.header_of(p) {
            Ok(v) => v,
            Err(e) => return self.stats.on_failure(e),
        };
        if size == 0 {
            // SAFETY: forwarded from the caller.
            unsafe { self.free(p)? };
            return Ok(None);
        }
        let q = self.memalign(h.align, size)?;
        // SAFETY: both blocks are live and distinct; copy what both hold.
        unsafe { core::ptr::copy_nonoverlapping(p, q.as_ptr(), h.size.min(size)) };
        // SAFETY: forwarded from the caller.
        unsafe { self.free(p)? };
        Ok(Some(q))
    }

    /// The user size of the live block at `p` (`None` for a pointer the
    /// header checks refuse). To ask whether a pointer is this heap's at
    /// all, [`LibcHeap::owns`] reads nothing.
    ///
    /// # Safety
    /// As [`LibcHeap::free`] for the header slot below `p` (a forged
    /// header gives a size the block does not have); the block may still
    /// be in use.
    ///
    /// ```compile_fail,E0133
    /// let h = neuron_runtime::heap::LibcHeap::new();
    /// let _ = h.usable_size(core::ptr::null_mut());
    /// ```
    pub unsafe fn usable_size(&self, p: *mut u8) -> Option<usize> {
        self.header_of(p).ok().map(|(_, h)| h.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(align(64))]
    struct Mem<const N: usize>([u8; N]);

    /// `free` in these tests: every pointer is a block of `h`, a double
    /// free, or outside the arenas; the one forged header (below) is over
    /// a block the allocator holds as free, a case it detects.
    fn free(h: &mut LibcHeap, p: *mut u8) -> Result<()> {
        // SAFETY: see above.
        unsafe { h.free(p) }
    }

    /// `realloc` in these tests, as `free`.
    fn realloc(h: &mut LibcHeap, p: *mut u8, size: usize) -> Result<Option<NonNull<u8>>> {
        // SAFETY: as `free`.
        unsafe { h.realloc(p, size) }
    }

    #[test]
    fn owns_compares_addresses_only() {
        let mut main = Mem([0u8; 8192]);
        let mut h = LibcHeap::new();
        assert!(!h.owns(main.0.as_ptr()), "no arena yet");
        // SAFETY: the buffer outlives the heap.
        unsafe { h.init_main(main.0.as_mut_ptr(), 8192) };
        let p = h.malloc(100).unwrap().as_ptr();
        assert!(h.owns(p) && h.owns(main.0.as_ptr()) && h.owns(main.0.as_ptr().wrapping_add(8191)));
        assert!(!h.owns(main.0.as_ptr().wrapping_add(8192)) && !h.owns(core::ptr::null()));
        let outside = [0u8; 4];
        assert!(!h.owns(outside.as_ptr()));
        free(&mut h, p).unwrap();
    }

    #[test]
    fn default_malloc_during_init_then_main_arena() {
        let mut boot = Mem([0u8; 1024]);
        let mut main = Mem([0u8; 8192]);
        let mut h = LibcHeap::new();
        // SAFETY: both buffers outlive the heap and are used by nothing else.
        unsafe { h.init_bootstrap(boot.0.as_mut_ptr(), 1024) };
        h.set_use_default(true);
        let early = h.malloc(100).unwrap();
        assert!(boot.0.as_ptr_range().contains(&(early.as_ptr() as *const u8)));
        // SAFETY: as above.
        unsafe { h.init_main(main.0.as_mut_ptr(), 8192) };
        assert_eq!(h.active(), ArenaKind::Bootstrap, "still forced");
        h.set_use_default(false);
        let late = h.malloc(100).unwrap();
        assert!(main.0.as_ptr_range().contains(&(late.as_ptr() as *const u8)));
        // An early block is freed into the arena it came from.
        free(&mut h, early.as_ptr()).unwrap();
        free(&mut h, late.as_ptr()).unwrap();
        assert_eq!(h.stats().in_use, 0);
    }

    #[test]
    fn a_free_the_allocator_refuses_leaves_the_header_live() {
        let mut main = Mem([0u8; 8192]);
        let mut h = LibcHeap::new();
        // SAFETY: the buffer outlives the heap.
        unsafe { h.init_main(main.0.as_mut_ptr(), 8192) };
        let p = h.malloc(100).unwrap().as_ptr();
        free(&mut h, p).unwrap();
        // A stray store forges the freed block's header back to live: the
        // header checks pass, the allocator sees a block it holds as free.
        // SAFETY: the header slot is inside the arena (test memory).
        let hp = unsafe { p.sub(HEADER_AT).cast::<Header>() };
        // SAFETY: as above.
        unsafe { hp.write(Header { state: LIVE, ..hp.read() }) };
        assert_eq!(free(&mut h, p), Err(Error::ForeignPointer));
        // Refused untouched: still live, so the same answer again (not
        // `DoubleFree`, which a header left marked freed would give).
        // SAFETY: as above.
        assert_eq!(unsafe { hp.read() }.state, LIVE);
        assert_eq!(free(&mut h, p), Err(Error::ForeignPointer));
    }

    #[test]
    fn calloc_realloc_and_misuse() {
        let mut main = Mem([0xFFu8; 8192]);
        let mut h = LibcHeap::new();
        // SAFETY: the buffer outlives the heap.
        unsafe { h.init_main(main.0.as_mut_ptr(), 8192) };
        let p = h.calloc(10, 10).unwrap();
        // SAFETY: 100 live bytes.
        assert!(unsafe { core::slice::from_raw_parts(p.as_ptr(), 100) }.iter().all(|b| *b == 0));
        // SAFETY: as above.
        unsafe { p.as_ptr().write(7) };
        let q = realloc(&mut h, p.as_ptr(), 1000).unwrap().unwrap();
        // SAFETY: q holds the copied bytes.
        assert_eq!(unsafe { q.as_ptr().read() }, 7);
        assert_eq!(free(&mut h, p.as_ptr()), Err(Error::DoubleFree));
        assert_eq!(free(&mut h, q.as_ptr().wrapping_add(64)), Err(Error::ForeignPointer));
        assert_eq!(free(&mut h, 0x40 as *mut u8), Err(Error::ForeignPointer));
        assert_eq!(h.calloc(usize::MAX, 2), Err(Error::SizeOverflow));
        assert_eq!(h.malloc(1 << 20), Err(Error::OutOfMemory));
        assert_eq!(realloc(&mut h, q.as_ptr(), 0), Ok(None));
        assert_eq!(h.stats().in_use, 0);
        let a = h.memalign(1024, 10).unwrap();
        assert_eq!(a.as_ptr() as usize % 1024, 0);
        free(&mut h, a.as_ptr()).unwrap();
    }
}
