//! Everything the runtime keeps for one core, and the init prologue.
//!
//! On the device there is one `CoreState` per core image, in a static; on
//! the host each simulated core owns one. Nothing here is shared between
//! cores.

use crate::access::AccessState;
use crate::dma::DmaQueue;
use crate::error::{Error, Result};
use crate::heap::{DataRamHeap, HbmHeap, LibcHeap};
use crate::marshal::ArgState;
use crate::memcpy::{Copier, MemcpyMethod};
use crate::printf::PrintfRing;
use crate::translate::Translator;
use neuron_hal::platform::{BOOTSTRAP_HEAP_SIZE, LIBC_HEAP_SIZE, SCRATCH_AREA_SIZE};
use neuron_hal::Hal;

/// The runtime state of one core. Its fields are the runtime's: the
/// crates above reach them through the façade (`facade.rs`).
pub struct CoreState<H: Hal> {
    /// The translation context (first: its address is the `ctx` kernels hold).
    pub(crate) translator: Translator,
    /// The core's hardware.
    pub(crate) hal: H,
    /// HBM heap (SoC addresses in this core's hbm_scratch area).
    pub(crate) hbm: HbmHeap,
    /// Data-RAM (TCM) heap.
    pub(crate) dataram: DataRamHeap,
    /// libc heap.
    pub(crate) libc: LibcHeap,
    /// The two DMA rings.
    pub(crate) dma: DmaQueue,
    /// The invocation being marshalled and its argument cursor.
    pub(crate) args: ArgState,
    /// The active `neuron_memcpy` backend.
    pub(crate) memcpy_method: MemcpyMethod,
    /// Accessors: coherency table, stream and TCM pools.
    pub(crate) access: AccessState,
    /// The device printf ring.
    pub(crate) printf: PrintfRing,
    cpu_id: Option<u32>,
}

impl<H: Hal> core::fmt::Debug for CoreState<H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CoreState").field("cpu_id", &self.cpu_id).field("hbm", &self.hbm).field("dataram", &self.dataram).field("libc", &self.libc).finish()
    }
}

impl<H: Hal> CoreState<H> {
    /// Fresh state for the core behind `hal`; nothing initialised yet.
    pub const fn new(hal: H) -> Self {
        Self {
            translator: Translator::new(),
            hal,
            hbm: HbmHeap::new(),
            dataram: DataRamHeap::new(),
            libc: LibcHeap::new(),
            dma: DmaQueue::new(),
            args: ArgState::new(),
            memcpy_method: MemcpyMethod::Dma,
            access: AccessState::new(),
            printf: PrintfRing::new(),
            cpu_id: None,
        }
    }

    /// Writes [`CoreState::new`]`(hal)` into `*p`, field by field, so no
    /// whole state is ever built on the stack (the on-core stack is 4 KiB;
    /// the state is larger). This lets a device keep its state in a
    /// zero-initialised static (`.bss`: RAM the image does not carry) and
    /// build it at the core's first use.
    ///
    /// # Safety
    /// `p` is valid for writes of a `CoreState<H>`, aligned, and every
    /// byte of `*p` is initialised to zero (e.g. a static built with
    /// `MaybeUninit::zeroed`). No reference to `*p` is live. Any previous
    /// value is overwritten without being dropped (`CoreState` has no drop
    /// glue of its own; the HAL's is not run).
    pub unsafe fn init_in_place(p: *mut Self, hal: H) {
        // SAFETY: the caller's contract: `p` is valid, aligned and not
        // referenced, so each field place may be written.
        unsafe {
            Translator::write_new(core::ptr::addr_of_mut!((*p).translator));
            core::ptr::addr_of_mut!((*p).hal).write(hal);
            core::ptr::addr_of_mut!((*p).hbm).write(HbmHeap::new());
            core::ptr::addr_of_mut!((*p).dataram).write(DataRamHeap::new());
            core::ptr::addr_of_mut!((*p).libc).write(LibcHeap::new());
            core::ptr::addr_of_mut!((*p).dma).write(DmaQueue::new());
            core::ptr::addr_of_mut!((*p).args).write(ArgState::new());
            core::ptr::addr_of_mut!((*p).memcpy_method).write(MemcpyMethod::Dma);
            core::ptr::addr_of_mut!((*p).access).write(AccessState::new());
            core::ptr::addr_of_mut!((*p).printf).write(PrintfRing::new());
            core::ptr::addr_of_mut!((*p).cpu_id).write(None);
        }
        // Every field is named here (no `..`): a new field fails to compile
        // until it is written above too.
        #[allow(dead_code)]
        fn all_fields<H: Hal>(s: &CoreState<H>) {
            let CoreState { translator: _, hal: _, hbm: _, dataram: _, libc: _, dma: _, args: _, memcpy_method: _, access: _, printf: _, cpu_id: _ } = s;
        }
    }

    /// The core's hardware, the state dropped (a host simulator that stands
    /// the core up afresh on the same hardware).
    pub fn into_hal(self) -> H {
        self.hal
    }

    /// `get_cpu_id`: the PRID, read once and cached.
    pub fn cpu_id(&mut self) -> u32 {
        match self.cpu_id {
            Some(id) => id,
            None => {
                let id = self.hal.prid();
                self.cpu_id = Some(id);
                id
            }
        }
    }

    /// `init_neuron_hbm_allocator`: this core's HBM heap, the part of its
    /// scratch area after the libc heap.
    pub fn init_hbm_allocator(&mut self) {
        let cpu = self.cpu_id();
        let area = self.hal.platform().scratch_area_soc(cpu);
        let start = self.hal.platform().hbm_heap_soc(cpu);
        self.hbm.init(start, SCRATCH_AREA_SIZE - (start - area));
    }

    /// `init_neuron_dataram_allocator`: the data-RAM heap over the staging
    /// window past the runtime's reserve.
    pub fn init_dataram_allocator(&mut self) {
        let (nx, len) = self.hal.platform().dataram_heap();
        let bottom = self.hal.nx_ptr(nx);
        // SAFETY: the platform table reserves this data-RAM range for the
        // heap; it is private to this core and mapped for its lifetime.
        unsafe { self.dataram.init(bottom, len as usize) };
    }

    /// `_init_libc_heap_allocator`: the main libc arena, the first part of
    /// this core's scratch area, reached through the pinned window.
    pub fn init_libc_heap(&mut self) {
        let cpu = self.cpu_id();
        let p = *self.hal.platform();
        let bottom = self.hal.nx_ptr(p.scratch_nx(p.scratch_area_soc(cpu)));
        // SAFETY: the platform table gives this core this scratch range
        // alone, and the pinned window always shows it.
        unsafe { self.libc.init_main(bottom, LIBC_HEAP_SIZE as usize) };
    }

    /// The libc heap's bootstrap arena (once): the core's scratch memory
    /// between its libc and HBM heaps. Not inlined: the prologue runs on
    /// every invocation and this only once.
    #[inline(never)]
    fn init_bootstrap_arena(&mut self) {
        if self.libc.bootstrap_base() != 0 {
            return;
        }
        let cpu = self.cpu_id();
        let p = self.hal.platform();
        let nx = p.scratch_nx(p.bootstrap_arena_soc(cpu));
        let boot = self.hal.nx_ptr(nx);
        // SAFETY: the platform table gives this core this scratch range
        // alone (between its libc and HBM heaps), and the pinned window
        // always shows it. Not memory of this state: the state may move.
        unsafe { self.libc.init_bootstrap(boot, BOOTSTRAP_HEAP_SIZE) };
    }

    /// `_init_translate_ctx`.
    pub fn init_translate_ctx(&mut self) {
        self.translator.init(&self.hal);
    }

    /// The init prologue of SPEC §7: the heaps with the default malloc
    /// forced on, then the neuron heaps, then the translate context. Safe
    /// to run on every invocation: each step runs once.
    pub fn init_prologue(&mut self) {
        self.init_bootstrap_arena();
        self.libc.set_use_default(true);
        self.init_hbm_allocator();
        self.init_dataram_allocator();
        self.init_libc_heap();
        self.libc.set_use_default(false);
        self.init_translate_ctx();
    }

    /// `neuron_translate` for this core.
    #[inline]
    pub fn translate(&mut self, addr: u64) -> crate::Result<*mut u8> {
        self.translator.translate(&self.hal, addr)
    }

    /// What a copy borrows of this state (the HAL, the translator, the DMA
    /// queue, the data-RAM heap): `memcpy` and `dma` take that, not the
    /// whole state.
    #[inline(always)]
    pub fn copier(&mut self) -> Copier<'_, H> {
        Copier { hal: &self.hal, translator: &mut self.translator, dma: &mut self.dma, dataram: &mut self.dataram }
    }

    /// `init_dma_queue` for this core: what is outstanding is drained
    /// first (re-arming would forget it while the engine still moves its
    /// bytes); a fault found there is the answer, and the rings stay armed.
    pub fn init_dma_queue(&mut self) -> Result<()> {
        if self.dma.is_armed() {
            self.dma_drain()?;
        }
        let cpu = self.cpu_id();
        self.dma.init(&self.hal, cpu)
    }

    /// Drains both DMA directions.
    pub fn dma_drain(&mut self) -> Result<()> {
        self.dma.drain(&self.hal)
    }

    /// [`crate::dma::DmaQueue::read`] with this core's HAL and heap.
    ///
    /// # Safety
    /// As [`crate::dma::DmaQueue::read`].
    pub unsafe fn dma_read(&mut self, dst: *mut u8, src: u64, n: u32) -> Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { self.dma.read(&self.hal, &mut self.dataram, dst, src, n) }
    }

    /// [`crate::dma::DmaQueue::write`] with this core's HAL and heap.
    ///
    /// # Safety
    /// As [`crate::dma::DmaQueue::write`].
    pub unsafe fn dma_write(&mut self, dst: u64, src: *const u8, n: u32) -> Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { self.dma.write(&self.hal, &mut self.dataram, dst, src, n) }
    }

    /// The active memcpy method.
    pub fn memcpy_method(&self) -> MemcpyMethod {
        self.memcpy_method
    }

    /// `neuron_set_memcpy_method`: any `m >= 3` is refused and the active
    /// method stays as it was.
    pub fn set_memcpy_method(&mut self, m: u32) -> Result<()> {
        match MemcpyMethod::from_u32(m) {
            Some(method) => {
                self.memcpy_method = method;
                Ok(())
            }
            None => Err(Error::BadMemcpyMethod),
        }
    }

    /// `neuron_memcpy(void* dst, u64 src, u32 n)` with an explicit method
    /// ([`Copier::from_soc`]).
    ///
    /// # Safety
    /// As [`Copier::from_soc`].
    #[inline(always)]
    pub unsafe fn memcpy_from_soc_with(&mut self, method: MemcpyMethod, dst: *mut u8, src: u64, n: u32) -> Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { self.copier().from_soc(method, dst, src, n) }
    }

    /// `neuron_memcpy(u64 dst, const void* src, u32 n)` with an explicit
    /// method ([`Copier::to_soc`]).
    ///
    /// # Safety
    /// As [`Copier::to_soc`].
    #[inline(always)]
    pub unsafe fn memcpy_to_soc_with(&mut self, method: MemcpyMethod, dst: u64, src: *const u8, n: u32) -> Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { self.copier().to_soc(method, dst, src, n) }
    }

    /// `neuron_memcpy(void* dst, u64 src, u32 n)`: SoC (HBM/SBUF) → local,
    /// with the active method.
    ///
    /// # Safety
    /// As [`Copier::from_soc`].
    pub unsafe fn memcpy_from_soc(&mut self, dst: *mut u8, src: u64, n: u32) -> Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { self.memcpy_from_soc_with(self.memcpy_method, dst, src, n) }
    }

    /// `neuron_memcpy(u64 dst, const void* src, u32 n)`: local → SoC, with
    /// the active method.
    ///
    /// # Safety
    /// As [`Copier::to_soc`].
    pub unsafe fn memcpy_to_soc(&mut self, dst: u64, src: *const u8, n: u32) -> Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { self.memcpy_to_soc_with(self.memcpy_method, dst, src, n) }
    }

    /// SoC → Rust slice with the active method.
    pub fn read_soc(&mut self, dst: &mut [u8], src: u64) -> Result<()> {
        let n = u32::try_from(dst.len()).map_err(|_| Error::SizeOverflow)?;
        // SAFETY: a slice is valid for writes of its length and, being
        // Rust memory, is neither a window view nor a heap block in use.
        unsafe { self.memcpy_from_soc(dst.as_mut_ptr(), src, n) }
    }

    /// Rust slice → SoC with the active method.
    ///
    /// # Safety
    /// As [`CoreState::memcpy_soc_to_soc`] for `[dst, dst + src.len())`:
    /// nothing Rust owns lies there (the libc heap's arena is in HBM).
    ///
    /// ```compile_fail,E0133
    /// fn f(s: &mut neuron_runtime::CoreState<impl neuron_hal::Hal>) {
    ///     let _ = s.write_soc(0x1000, &[0; 8]);
    /// }
    /// ```
    pub unsafe fn write_soc(&mut self, dst: u64, src: &[u8]) -> Result<()> {
        let n = u32::try_from(src.len()).map_err(|_| Error::SizeOverflow)?;
        // SAFETY: as in `read_soc`, for reads; the destination is the
        // caller's.
        unsafe { self.memcpy_to_soc(dst, src.as_ptr(), n) }
    }

    /// SoC → SoC copy of `n` bytes with the active method
    /// ([`Copier::soc_to_soc`]).
    ///
    /// # Safety
    /// As [`Copier::soc_to_soc`]: the destination may be any SoC address,
    /// including the arena of the heap Rust allocates from. Safe code
    /// cannot call it:
    ///
    /// ```compile_fail,E0133
    /// fn f(s: &mut neuron_runtime::CoreState<impl neuron_hal::Hal>) {
    ///     let _ = s.memcpy_soc_to_soc(0x1000, 0x2000, 64);
    /// }
    /// ```
    #[inline(always)]
    pub unsafe fn memcpy_soc_to_soc(&mut self, dst: u64, src: u64, n: u64) -> Result<()> {
        let method = self.memcpy_method;
        // SAFETY: forwarded from the caller.
        unsafe { self.copier().soc_to_soc(method, dst, src, n) }
    }
}
