//! A Miri-friendly stand-in for a core: plain heap memory, no `mmap`, no
//! memfd, no aliasing windows.
//!
//! [`crate::MockCore`] maps physical memory into a reserved NX space with
//! `mmap`, which Miri cannot execute. `FakeHal` backs only what the
//! runtime's own bookkeeping dereferences — the data RAM (DMA rings and
//! the data-RAM heap) and this core's libc-heap slice of hbm_scratch —
//! with ordinary boxed memory. Every other NX address yields a pointer
//! with no provenance: the arithmetic on it (translation) is checked,
//! and a dereference is an error Miri reports. Window-register writes are
//! recorded, not mapped; DMA descriptors complete at once and move no
//! bytes. Tests of data movement use the mock.

use core::cell::Cell;
use neuron_hal::dma::DmaDirection;
use neuron_hal::platform::{Platform, BOOTSTRAP_HEAP_SIZE, DATARAM_SIZE, LIBC_HEAP_SIZE, Q7};

/// The libc heap's two arenas, one after the other at the start of the
/// core's scratch area: the main one, then the bootstrap one.
const LIBC_ARENAS: usize = LIBC_HEAP_SIZE as usize + BOOTSTRAP_HEAP_SIZE;
use neuron_hal::Hal;

/// Where NX addresses the fake does not back appear (never dereferenced).
const UNBACKED_BASE: usize = 0x7100_0000_0000;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Chunk([u8; 64]);

/// Zeroed memory owned through a raw pointer, so that writes through
/// pointers handed out from `&self` are not writes through a shared
/// reference (Miri's aliasing model checks exactly that).
struct Backing(*mut [Chunk]);

impl Backing {
    fn zeroed(bytes: usize) -> Self {
        Self(Box::into_raw(vec![Chunk([0; 64]); bytes / 64].into_boxed_slice()))
    }

    fn at(&self, off: usize) -> *mut u8 {
        self.0.cast::<u8>().wrapping_add(off)
    }
}

impl Drop for Backing {
    fn drop(&mut self) {
        // SAFETY: the pointer came from Box::into_raw in `zeroed` and is
        // released once, here.
        drop(unsafe { Box::from_raw(self.0) });
    }
}

/// One fake core (see the module documentation).
pub struct FakeHal {
    platform: Platform,
    cpu: u32,
    dataram: Backing,
    libc: Backing,
    libc_nx: u32,
    window_regs: [Cell<u64>; 3],
    programs: Cell<u64>,
    fences: Cell<u64>,
    rung: [Cell<u32>; 2],
    isl: Cell<usize>,
    mailbox: Cell<u64>,
}

impl core::fmt::Debug for FakeHal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FakeHal").field("cpu", &self.cpu).field("programs", &self.programs.get()).finish()
    }
}

impl FakeHal {
    /// Core `cpu` of the Q7 address map.
    pub fn new(cpu: u32) -> Self {
        let platform = Q7;
        Self {
            libc_nx: platform.scratch_nx(platform.scratch_area_soc(cpu)),
            platform,
            cpu,
            dataram: Backing::zeroed(DATARAM_SIZE as usize),
            libc: Backing::zeroed(LIBC_ARENAS),
            window_regs: Default::default(),
            programs: Cell::new(0),
            fences: Cell::new(0),
            rung: Default::default(),
            isl: Cell::new(0),
            mailbox: Cell::new(0),
        }
    }

    /// Window-register writes so far.
    pub fn window_programs(&self) -> u64 {
        self.programs.get()
    }

    /// `memw` fences so far.
    pub fn fences(&self) -> u64 {
        self.fences.get()
    }

    /// What dynamic window register `i` holds.
    pub fn window_register(&self, i: usize) -> u64 {
        self.window_regs[i].get()
    }

    /// The loader's side of the mailbox.
    pub fn set_invocation_block(&self, soc: u64) {
        self.mailbox.set(soc);
    }
}

// SAFETY: the data-RAM range and the libc heap's two arenas `nx_ptr` maps are this
// fake's own buffers (`dataram`, `libc`), owned for its life and reached
// by nothing else. Other addresses (the windows) are unbacked pointers
// without provenance: the fake has no SoC, and only an `unsafe` copy
// whose caller vouched for the address would reach them. It has no DMA
// engine: nothing is counted done that did not happen.
unsafe impl Hal for FakeHal {
    fn platform(&self) -> &Platform {
        &self.platform
    }

    fn prid(&self) -> u32 {
        self.cpu
    }

    fn nx_ptr(&self, nx: u32) -> *mut u8 {
        let (d0, d1) = self.platform.dataram_range();
        if (d0..d1).contains(&nx) {
            return self.dataram.at((nx - d0) as usize);
        }
        if (self.libc_nx..self.libc_nx + LIBC_ARENAS as u32).contains(&nx) {
            return self.libc.at((nx - self.libc_nx) as usize);
        }
        core::ptr::without_provenance_mut(UNBACKED_BASE + nx as usize)
    }

    unsafe fn write_window_register(&self, w: neuron_hal::WindowId, region_base: u64) {
        self.window_regs[w.index()].set(region_base);
        self.programs.set(self.programs.get() + 1);
    }

    fn memw(&self) {
        self.fences.set(self.fences.get() + 1);
    }

    unsafe fn dma_doorbell(&self, dir: DmaDirection, count: u32) {
        let c = &self.rung[dir as usize];
        c.set(c.get().wrapping_add(count));
    }

    fn dma_completed(&self, dir: DmaDirection) -> u32 {
        self.rung[dir as usize].get()
    }

    unsafe fn dma_arm(&self, dir: DmaDirection) {
        self.rung[dir as usize].set(0);
    }

    fn read_window_register(&self, reg: u32) -> u64 {
        if reg == self.platform.mem_window0_nx {
            return self.platform.apb_base as u64;
        }
        self.platform.dynamic_windows.iter().position(|w| w.register == reg).map_or(0, |i| self.window_regs[i].get())
    }

    fn invocation_block(&self) -> u64 {
        self.mailbox.get()
    }

    fn stack_pointer(&self) -> usize {
        let marker = 0u8;
        core::ptr::addr_of!(marker) as usize
    }

    fn stack_limit(&self) -> usize {
        self.isl.get()
    }

    unsafe fn set_stack_limit(&self, isl: usize) {
        self.isl.set(isl);
    }
}
