//! One Q7 core of the mock SoC.

use crate::claim::CoreClaim;
use crate::counters::CoreCounters;
use crate::dma_engine::DmaEngine;
use crate::nx_space::NxSpace;
use crate::soc::MockSoc;
use neuron_hal::dma::DmaDirection;
use neuron_hal::platform::{Platform, DATARAM_SIZE, DYNAMIC_WINDOW_SIZE, PINNED_WINDOW_SIZE};
use neuron_hal::Hal;
use std::cell::{Cell, RefCell};
use std::io;
use std::sync::Arc;

/// A core: its own NX space (data RAM, five windows), window registers,
/// stack-limit register and DMA engine. Driven by one thread at a time
/// (`Send`, not `Sync`), like the hardware thread it stands for.
#[derive(Debug)]
pub struct MockCore {
    soc: Arc<MockSoc>,
    cpu: u32,
    nx: NxSpace,
    window_regs: [Cell<u64>; 3],
    isl: Cell<usize>,
    mailbox: Cell<u64>,
    engine: RefCell<DmaEngine>,
    counters: CoreCounters,
    /// This core's view of the sanitizer's regions.
    watch: RefCell<crate::sanitizer::CoreView>,
    /// Dynamic windows (bit per window) shown onto memory since
    /// [`drop_window_pages`](MockCore::drop_window_pages): the ones whose
    /// pages may be populated.
    shown: Cell<u8>,
    /// An accessor on this core reads and writes through the memory's own
    /// view ([`lend_view`](MockCore::lend_view)) until the run ends.
    view_lent: Cell<bool>,
    /// This cpu's claim on the SoC: no second core for it while this one
    /// lives.
    _claim: CoreClaim,
}

impl MockCore {
    pub(crate) fn new(soc: Arc<MockSoc>, cpu: u32) -> io::Result<Self> {
        let claim = CoreClaim::take(&soc, cpu)?;
        let p = *soc.platform();
        let nx = NxSpace::reserve()?;
        nx.map_private(p.dataram_nx, DATARAM_SIZE)?;
        // The pinned windows show fixed regions from reset.
        nx.map_phys(p.sbuf_window_nx, p.sbuf_size.min(PINNED_WINDOW_SIZE), soc.sbuf(), 0)?;
        let scratch_off = p.scratch_soc_base - p.hbm_soc_base;
        nx.map_phys(p.scratch_window_nx, PINNED_WINDOW_SIZE, soc.hbm(), scratch_off)?;
        Ok(Self {
            soc,
            cpu,
            nx,
            window_regs: Default::default(),
            isl: Cell::new(0),
            mailbox: Cell::new(0),
            engine: RefCell::default(),
            counters: CoreCounters::default(),
            watch: RefCell::default(),
            shown: Cell::new(0),
            view_lent: Cell::new(false),
            _claim: claim,
        })
    }

    /// The SoC this core belongs to.
    /// Brings the core back to what [`MockSoc::core`] makes, keeping its
    /// NX space (issue 28: a reused simulator's reset; a new reservation
    /// and its unmapping cost more than the run of a small op): data RAM
    /// zeros, no dynamic window shown, registers, engine, counters and
    /// sanitizer view as new. The pinned windows stay as they were made.
    pub fn reset(&mut self) -> io::Result<()> {
        let p = *self.soc.platform();
        self.nx.zero_private(p.dataram_nx, DATARAM_SIZE)?;
        // Only a window that was programmed shows anything (an unmapping
        // of one that never did would only split and merge mappings).
        for (i, w) in p.dynamic_windows.iter().enumerate() {
            if self.window_regs[i].get() != 0 || self.counters.window_programs(i) != 0 {
                self.nx.unmap(w.nx_base, DYNAMIC_WINDOW_SIZE)?;
            }
        }
        self.window_regs = Default::default();
        self.isl = Cell::new(0);
        self.mailbox = Cell::new(0);
        self.engine = RefCell::default();
        self.counters = CoreCounters::default();
        self.watch = RefCell::default();
        self.shown = Cell::new(0);
        self.view_lent = Cell::new(false);
        // Every field is named here: a new one fails to compile until the
        // reset above handles it too.
        let Self { soc: _, cpu: _, nx: _, window_regs: _, isl: _, mailbox: _, engine: _, counters: _, watch: _, shown: _, view_lent: _, _claim: _ } = self;
        Ok(())
    }

    pub fn soc(&self) -> &Arc<MockSoc> {
        &self.soc
    }

    /// Says an accessor of this core's run reaches memory through the
    /// memory's own view (the host fast path): the windows programmed for
    /// it until the run ends leave the view's pages mapped.
    pub fn lend_view(&self) {
        self.view_lent.set(true);
    }

    /// Drops the page-table entries of the dynamic windows shown since the
    /// last call (a kernel's run is over: what it touched through them
    /// stays in memory, and RSS no longer counts it twice, once through
    /// the window and once through the memory's own view). Advisory: a
    /// failure leaves the pages mapped, nothing else.
    pub fn drop_window_pages(&self) {
        self.view_lent.set(false);
        let shown = self.shown.replace(0);
        for (i, w) in self.soc.platform().dynamic_windows.iter().enumerate() {
            if shown & (1 << i) != 0 {
                let _ = self.nx.drop_window_pages(w.nx_base, DYNAMIC_WINDOW_SIZE);
            }
        }
    }

    /// The sanitizer's element states of this core's accessor over SoC
    /// `[addr, addr + len)` (see `Sanitizer::lend_states`).
    pub fn lend_states(&self, addr: u64, len: u64, elem: u64, store: bool) -> crate::sanitizer::Watched {
        self.soc.sanitizer().lend_states(&mut self.watch.borrow_mut(), self.cpu, addr, len, elem, store)
    }

    /// What the hardware saw so far.
    pub fn counters(&self) -> &CoreCounters {
        &self.counters
    }

    /// Descriptors rung in but not processed yet in `dir`.
    pub fn dma_pending(&self, dir: DmaDirection) -> u32 {
        self.engine.borrow().pending(dir)
    }

    /// The loader's side of the mailbox: the invocation block the next call
    /// serves (what the host simulator writes before launching an op).
    pub fn set_invocation_block(&self, soc: u64) {
        self.mailbox.set(soc);
    }

    fn window_index(&self, reg: u32) -> Option<usize> {
        self.soc.platform().dynamic_windows.iter().position(|w| w.register == reg)
    }
}

// SAFETY: `nx_ptr` answers from the core's own NX reservation (`NxSpace`),
// which lives as long as the core: data RAM and the scratch window are
// mapped onto the mock SoC's memory at construction, a dynamic window onto
// the region its register names (and only it: `write_window_register`
// remaps that window's pages alone). The engine copies only between the
// addresses its descriptors name and counts a descriptor once its copy is
// done. `MockSoc::core` hands out one `MockCore` per core.
unsafe impl Hal for MockCore {
    #[inline]
    fn platform(&self) -> &Platform {
        self.soc.platform()
    }

    fn prid(&self) -> u32 {
        self.cpu
    }

    fn nx_ptr(&self, nx: u32) -> *mut u8 {
        self.nx.ptr(nx)
    }

    unsafe fn write_window_register(&self, w: neuron_hal::WindowId, region_base: u64) {
        let i = w.index();
        self.window_regs[i].set(region_base);
        CoreCounters::bump(&self.counters.window_programs[i], 1);
        let win = self.soc.platform().dynamic_windows[i].nx_base;
        // Remapping the window's pages is what the register does in hardware.
        let nx = &self.nx;
        let shown = match self.soc.resolve(region_base, DYNAMIC_WINDOW_SIZE) {
            Some((mem, off)) => {
                self.shown.set(self.shown.get() | 1 << i);
                // The window now shows these pages: the memory's own view
                // lets go of them (they fault back in where it touches
                // them), so RSS counts each page once (issue 28), unless
                // an accessor reads them through the view in this run
                // (then it is the window that is never touched, and a
                // drop would only have the accessor fault every page back
                // in). Advisory: a failure only leaves them counted twice.
                let keep = self.view_lent.get();
                nx.map_phys(win, DYNAMIC_WINDOW_SIZE, mem, off).inspect(|()| {
                    if !keep {
                        let _ = mem.drop_view_pages(off, DYNAMIC_WINDOW_SIZE);
                    }
                })
            }
            None => nx.unmap(win, DYNAMIC_WINDOW_SIZE),
        };
        if let Err(e) = shown {
            panic!("mock window remap failed: {e}");
        }
    }

    fn read_window_register(&self, reg: u32) -> u64 {
        let p = self.soc.platform();
        if reg == p.mem_window0_nx {
            return p.apb_base as u64;
        }
        self.window_index(reg).map_or(0, |i| self.window_regs[i].get())
    }

    fn memw(&self) {
        CoreCounters::bump(&self.counters.fences, 1);
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }

    unsafe fn dma_doorbell(&self, dir: DmaDirection, count: u32) {
        self.engine.borrow_mut().doorbell(dir, count);
    }

    fn dma_completed(&self, dir: DmaDirection) -> u32 {
        self.engine.borrow_mut().poll(dir, self.cpu, &self.nx, &self.soc, &self.counters)
    }

    unsafe fn dma_arm(&self, dir: DmaDirection) {
        let nx = self.soc.platform().dma_ring_nx(dir);
        self.engine.borrow_mut().arm(dir, nx, neuron_hal::dma::RING_LEN);
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

    #[inline]
    fn note_soc_read(&self, addr: u64, len: u64) {
        let s = self.soc.sanitizer();
        if s.is_on() {
            s.read(&self.soc, &mut self.watch.borrow_mut(), self.cpu, addr, len);
        }
    }

    #[inline]
    fn note_soc_write(&self, addr: u64, len: u64) {
        let s = self.soc.sanitizer();
        if s.is_on() {
            s.write(&mut self.watch.borrow_mut(), self.cpu, addr, len);
        }
    }

    #[inline]
    fn reads_zero(&self, addr: u64, len: u64) -> bool {
        self.soc.zero_fills_elided() && self.soc.is_hole(addr, len)
    }

    #[inline]
    fn note_soc_copy(&self, dst: u64, src: u64, len: u64) {
        let s = self.soc.sanitizer();
        if s.is_on() {
            s.copy(&mut self.watch.borrow_mut(), self.cpu, dst, src, len);
        }
    }

    #[inline]
    fn note_raw_pointer(&self) {
        self.soc.sanitizer().raw_pointer(&self.soc);
    }
}
