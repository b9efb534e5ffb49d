//! Everything the runtime keeps for one core, and the init prologue.
//!
//! On the device there is one `CoreState` per core image, in a static; on
//! the host each simulated core owns one. Nothing here is shared between
//! cores.

use crate::access::AccessState;
use crate::dma::DmaQueue;
use crate::heap::{DataRamHeap, HbmHeap, LibcHeap};
use crate::marshal::ArgState;
use crate::memcpy::MemcpyMethod;
use crate::printf::PrintfRing;
use crate::translate::Translator;
use neuron_hal::platform::{BOOTSTRAP_HEAP_SIZE, LIBC_HEAP_SIZE, SCRATCH_AREA_SIZE};
use neuron_hal::Hal;

/// The bootstrap arena's memory, aligned for the heap.
#[repr(C, align(64))]
pub struct BootstrapArena(pub [u8; BOOTSTRAP_HEAP_SIZE]);

/// The runtime state of one core.
pub struct CoreState<H: Hal> {
    /// The translation context (first: its address is the `ctx` kernels hold).
    pub translator: Translator,
    /// The core's hardware.
    pub hal: H,
    /// HBM heap (SoC addresses in this core's hbm_scratch area).
    pub hbm: HbmHeap,
    /// Data-RAM (TCM) heap.
    pub dataram: DataRamHeap,
    /// libc heap.
    pub libc: LibcHeap,
    /// The two DMA rings.
    pub dma: DmaQueue,
    /// The invocation being marshalled and its argument cursor.
    pub args: ArgState,
    /// The active `neuron_memcpy` backend.
    pub(crate) memcpy_method: MemcpyMethod,
    /// Accessors: coherency table, stream and TCM pools.
    pub access: AccessState,
    /// The device printf ring.
    pub printf: PrintfRing,
    cpu_id: Option<u32>,
    bootstrap: BootstrapArena,
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
            bootstrap: BootstrapArena([0; BOOTSTRAP_HEAP_SIZE]),
        }
    }

    /// Writes [`CoreState::new`]`(hal)` into `*p`, field by field, so no
    /// whole state is ever built on the stack (the on-core stack is 4 KiB;
    /// the state is larger). The bootstrap arena is not written: in zeroed
    /// memory it already holds its initial value (all zeroes). This lets a
    /// device keep its state in a zero-initialised static (`.bss`: RAM the
    /// image does not carry) and build it at the core's first use.
    ///
    /// # Safety
    /// `p` is valid for writes of a `CoreState<H>`, aligned, and every
    /// byte of `*p` is initialised to zero (e.g. a static built with
    /// `MaybeUninit::zeroed`). No reference to `*p` is live. Any previous
    /// value is overwritten without being dropped (`CoreState` has no drop
    /// glue of its own; the HAL's is not run).
    pub unsafe fn init_in_place(p: *mut Self, hal: H) {
        // SAFETY: the caller's contract: `p` is valid, aligned and not
        // referenced, so each field place may be written; the bootstrap
        // arena, left alone, is zeroed memory, a valid `[u8; N]` equal to
        // what `new` puts there.
        unsafe {
            core::ptr::addr_of_mut!((*p).translator).write(Translator::new());
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
            let CoreState {
                translator: _,
                hal: _,
                hbm: _,
                dataram: _,
                libc: _,
                dma: _,
                args: _,
                memcpy_method: _,
                access: _,
                printf: _,
                cpu_id: _,
                bootstrap: _,
            } = s;
        }
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
        self.hbm.init(area + LIBC_HEAP_SIZE, SCRATCH_AREA_SIZE - LIBC_HEAP_SIZE);
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

    /// `_init_translate_ctx`.
    pub fn init_translate_ctx(&mut self) {
        self.translator.init(&self.hal);
    }

    /// The init prologue of SPEC §7: the heaps with the default malloc
    /// forced on, then the neuron heaps, then the translate context. Safe
    /// to run on every invocation: each step runs once.
    pub fn init_prologue(&mut self) {
        let boot = self.bootstrap.0.as_mut_ptr();
        // SAFETY: the bootstrap arena is a field of this state, used by the
        // libc heap alone; the state does not move once initialised (it is
        // a static on the device and boxed on the host).
        unsafe { self.libc.init_bootstrap(boot, BOOTSTRAP_HEAP_SIZE) };
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
}
