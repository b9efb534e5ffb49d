//! The address map of a Q7 core, as data.
//!
//! Values marked *reference* come from the analyses of the original library
//! (SPEC §2); values marked *defined here* fill gaps the references leave
//! and are ours. Each lives in exactly one constant so that better data
//! changes one line.

/// Size of a dynamic translation window (reference: 16 MiB).
pub const DYNAMIC_WINDOW_SIZE: u64 = 16 << 20;
/// Size of a pinned translation window (reference: 64 MiB).
pub const PINNED_WINDOW_SIZE: u64 = 64 << 20;
/// Number of dynamic windows (reference).
pub const DYNAMIC_WINDOWS: usize = 3;
/// Number of pinned windows (reference: SBUF and hbm_scratch).
pub const PINNED_WINDOWS: usize = 2;
/// Width of a SoC address (reference: 64-bit addresses, 57 bits used).
pub const SOC_ADDRESS_BITS: u32 = 57;
/// Cores per POOL cluster (reference).
pub const CORE_COUNT: u32 = 8;
/// Private data RAM per core (reference: 256 KiB).
pub const DATARAM_SIZE: u32 = 256 << 10;
/// Size of the DMA staging window in data RAM and of the core's SoC
/// aperture onto it (reference: 64 KiB).
pub const DMA_WINDOW_SIZE: u32 = 64 << 10;
/// Bytes at the start of the staging window the runtime keeps for itself:
/// the two DMA descriptor rings, then the invocation block (defined here;
/// the layout inside is `neuron_runtime::dma`'s).
pub const DATARAM_RUNTIME_RESERVED: u32 = 4 << 10;
/// Per-core code window in hbm_scratch (reference: 2 MiB per core).
pub const CODE_WINDOW_SIZE: u64 = 2 << 20;
/// The code windows of all cores together (8 x 2 MiB; a single-core
/// image may use 32 MiB from the same origin).
pub const CODE_REGION_SIZE: u64 = CODE_WINDOW_SIZE * CORE_COUNT as u64;
/// Per-core hbm_scratch area after the code region (defined here): the
/// libc heap followed by the HBM heap.
pub const SCRATCH_AREA_SIZE: u64 = 6 << 20;
/// Part of the per-core scratch area backing `malloc` (defined here).
pub const LIBC_HEAP_SIZE: u64 = 1 << 20;
/// Bootstrap arena `malloc` uses while the heaps are being initialised
/// (the original's "default malloc"; defined here).
pub const BOOTSTRAP_HEAP_SIZE: usize = 4 << 10;

/// One dynamic window: where it shows up in NX space and the register
/// that selects its SoC region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSpec {
    /// NX base address of the window.
    pub nx_base: u32,
    /// NX address of its `MEM_WINDOWn_LO` register.
    pub register: u32,
}

/// The address map and register table of one core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Platform {
    /// The three dynamic 16 MiB windows (reference).
    pub dynamic_windows: [WindowSpec; DYNAMIC_WINDOWS],
    /// NX base of the pinned SBUF window (reference: 0x8000_0000).
    pub sbuf_window_nx: u32,
    /// SoC base the SBUF window shows (defined here).
    pub sbuf_soc_base: u64,
    /// Bytes of SBUF behind the window (defined here: 24 MiB, the trn1 size).
    pub sbuf_size: u64,
    /// NX base of the pinned hbm_scratch window (reference: 0x8400_0000).
    pub scratch_window_nx: u32,
    /// SoC base the hbm_scratch window shows (defined here: the start of HBM).
    pub scratch_soc_base: u64,
    /// SoC base of HBM (defined here).
    pub hbm_soc_base: u64,
    /// Bytes of HBM the translate may map (defined here).
    pub hbm_size: u64,
    /// NX base of the core's data RAM (defined here; the staging window
    /// 0x8_0000 is its start).
    pub dataram_nx: u32,
    /// NX base of the DMA staging window (reference: 0x8_0000).
    pub dma_window_nx: u32,
    /// SoC base of the first data-RAM aperture; core `c` is reached at
    /// `aperture_soc_base + (2c + 9) * 64 KiB` (index from the reference,
    /// base defined here).
    pub aperture_soc_base: u64,
    /// NX base of the DMA engine's register block (assumed, defined here).
    pub dma_regs_nx: u32,
    /// NX address of `MEM_WINDOW0_LO`, which must read back
    /// [`Platform::apb_base`] (reference).
    pub mem_window0_nx: u32,
    /// `SUNDA_APB_BASE`, the value `MEM_WINDOW0_LO` holds (assumed).
    pub apb_base: u32,
    /// NX address of the 64-bit mailbox register through which the loader
    /// passes the invocation block's SoC address (assumed: the reference
    /// pulls arguments from the instruction stream, which we do not model).
    pub invocation_mailbox_nx: u32,
}

impl Platform {
    /// The SoC window index of core `cpu`'s data-RAM aperture (reference).
    pub const fn aperture_index(cpu: u32) -> u64 {
        2 * cpu as u64 + 9
    }

    /// SoC address at which the DMA engine sees core `cpu`'s staging window.
    pub const fn aperture_soc(&self, cpu: u32) -> u64 {
        self.aperture_soc_base + Self::aperture_index(cpu) * DMA_WINDOW_SIZE as u64
    }

    /// SoC base of core `cpu`'s scratch area: its libc heap's main arena
    /// ([`LIBC_HEAP_SIZE`]), then the libc heap's bootstrap arena
    /// ([`BOOTSTRAP_HEAP_SIZE`], see [`Platform::bootstrap_arena_soc`]),
    /// then its HBM heap (the rest).
    pub const fn scratch_area_soc(&self, cpu: u32) -> u64 {
        self.scratch_soc_base + CODE_REGION_SIZE + cpu as u64 * SCRATCH_AREA_SIZE
    }

    /// SoC base of core `cpu`'s bootstrap arena (the default malloc of the
    /// init prologue), right after its libc heap's main arena. Memory of
    /// the core's scratch area rather than of the runtime's state, so the
    /// heap holds no pointer into the state (which is a movable value).
    pub const fn bootstrap_arena_soc(&self, cpu: u32) -> u64 {
        self.scratch_area_soc(cpu) + LIBC_HEAP_SIZE
    }

    /// SoC base of core `cpu`'s HBM heap, past both libc arenas; it runs
    /// to the end of the scratch area.
    pub const fn hbm_heap_soc(&self, cpu: u32) -> u64 {
        self.bootstrap_arena_soc(cpu) + BOOTSTRAP_HEAP_SIZE as u64
    }

    /// The NX address range `[start, end)` of the data RAM.
    pub const fn dataram_range(&self) -> (u32, u32) {
        (self.dataram_nx, self.dataram_nx + DATARAM_SIZE)
    }

    /// The NX address the ring of `dir` starts at: the DMA staging
    /// window's start plus [`crate::dma::ring_offset`].
    pub const fn dma_ring_nx(&self, dir: crate::dma::DmaDirection) -> u32 {
        self.dma_window_nx + crate::dma::ring_offset(dir)
    }

    /// The NX range `(start, len)` of the data-RAM heap: the staging window
    /// after the runtime's reserve, so every block is DMA-reachable.
    pub const fn dataram_heap(&self) -> (u32, u32) {
        (self.dma_window_nx + DATARAM_RUNTIME_RESERVED, DMA_WINDOW_SIZE - DATARAM_RUNTIME_RESERVED)
    }

    /// The NX address at which the pinned hbm_scratch window shows SoC
    /// address `soc` (which must lie in the window).
    pub const fn scratch_nx(&self, soc: u64) -> u32 {
        self.scratch_window_nx + (soc - self.scratch_soc_base) as u32
    }

    /// Whether `addr` lies in HBM as this platform knows it.
    pub const fn is_hbm(&self, addr: u64) -> bool {
        addr >= self.hbm_soc_base && addr - self.hbm_soc_base < self.hbm_size
    }
}

/// DMA engine register offsets from [`Platform::dma_regs_nx`]
/// (assumed: the references do not decode the SDMA block; defined here
/// and implemented exactly by the mock). One bank per direction,
/// [`dma_regs::BANK_STRIDE`] apart, M2S first.
pub mod dma_regs {
    /// Bytes between the M2S and the S2M bank.
    pub const BANK_STRIDE: u32 = 0x40;
    /// W: NX address of the descriptor ring (must lie in the staging window).
    pub const RING_BASE: u32 = 0x00;
    /// W: ring length in descriptors; writing it re-arms the queue.
    pub const RING_LEN: u32 = 0x04;
    /// W: doorbell, the number of descriptors appended (the "increment
    /// register" of the reference).
    pub const INCREMENT: u32 = 0x08;
    /// R: free-running count of completed descriptors.
    pub const COMPLETED: u32 = 0x0C;
}

/// The Q7 core (SPEC §2). HBM and SBUF placement, the apertures and the
/// DMA block are assumed values of ours.
pub const Q7: Platform = Platform {
    dynamic_windows: [
        WindowSpec { nx_base: 0x0700_0000, register: 0x0010_0218 },
        WindowSpec { nx_base: 0x0900_0000, register: 0x0010_0228 },
        WindowSpec { nx_base: 0x0A00_0000, register: 0x0010_0230 },
    ],
    sbuf_window_nx: 0x8000_0000,
    sbuf_soc_base: 0x0020_0000_0000,
    sbuf_size: 24 << 20,
    scratch_window_nx: 0x8400_0000,
    scratch_soc_base: 0x0040_0000_0000,
    hbm_soc_base: 0x0040_0000_0000,
    hbm_size: 64 << 30,
    dataram_nx: 0x0008_0000,
    dma_window_nx: 0x0008_0000,
    aperture_soc_base: 0x0010_0000_0000,
    dma_regs_nx: 0x0010_1000,
    mem_window0_nx: 0x0010_0200,
    apb_base: 0x0010_0000,
    invocation_mailbox_nx: 0x0010_1100,
};

/// The emulated core (`qemu-system-xtensa -cpu de212`, machines `sim` and
/// `virt`), *defined here*: QEMU has none of the Q7's windows, SDMA block
/// or HBM, so this table places what a runtime test needs in the
/// emulator's 128 MiB of RAM at 0x6000_0000 (NX address = physical
/// address; every core sees the same RAM):
///
/// | NX range | what |
/// |---|---|
/// | 0x6000_0000..0x6080_0000 | the image (vectors, code, data, board stacks) |
/// | 0x6080_0000..0x6090_0000 | the core-private slice as the core sees it (see [`qemu`]) |
/// | 0x6080_0000 + c·1 MiB | where core `c`'s private slice really is |
/// | 0x6100_0000..0x6500_0000 | hbm_scratch (the pinned 64 MiB window), SoC 0x40_0000_0000 |
///
/// The private slice holds the data RAM (256 KiB at its start, the DMA
/// staging window first) and, at [`qemu::REGS_OFFSET`], a RAM block
/// standing in for the core's registers, at the Q7's offsets from the APB
/// base: `MEM_WINDOW0_LO` at +0x200, the window registers at +0x218,
/// +0x228, +0x230, the DMA banks at +0x1000, the invocation mailbox at
/// +0x1100, ISL at +0x2000.
///
/// Only hbm_scratch is backed by memory. The dynamic windows keep the
/// Q7's NX bases, which QEMU leaves unmapped, and so does SBUF: a miss
/// programs the (RAM) window register exactly as on the Q7, but a
/// dereference through a dynamic window or the SBUF window faults, loudly,
/// instead of showing the wrong bytes. HBM and SBUF SoC bases are the
/// Q7's.
pub const QEMU: Platform = Platform {
    dynamic_windows: Q7.dynamic_windows_at(qemu::APB_BASE),
    sbuf_window_nx: Q7.sbuf_window_nx,
    sbuf_soc_base: Q7.sbuf_soc_base,
    sbuf_size: Q7.sbuf_size,
    scratch_window_nx: qemu::SCRATCH_NX,
    scratch_soc_base: Q7.scratch_soc_base,
    hbm_soc_base: Q7.hbm_soc_base,
    hbm_size: Q7.hbm_size,
    dataram_nx: qemu::PRIVATE_NX,
    dma_window_nx: qemu::PRIVATE_NX,
    aperture_soc_base: Q7.aperture_soc_base,
    dma_regs_nx: qemu::APB_BASE + (Q7.dma_regs_nx - Q7.apb_base),
    mem_window0_nx: qemu::APB_BASE + (Q7.mem_window0_nx - Q7.apb_base),
    apb_base: qemu::APB_BASE,
    invocation_mailbox_nx: qemu::APB_BASE + (Q7.invocation_mailbox_nx - Q7.apb_base),
};

/// The QEMU platform's placement constants (defined here; see [`QEMU`]).
pub mod qemu {
    /// QEMU's system RAM (machines `sim` and `virt`).
    pub const RAM_NX: u32 = 0x6000_0000;
    /// Bytes of QEMU's system RAM.
    pub const RAM_SIZE: u32 = 128 << 20;
    /// Bytes at the start of RAM for the image itself.
    pub const IMAGE_SIZE: u32 = 8 << 20;
    /// NX base of the core-private slice (data RAM, then the register
    /// block) as every core addresses it.
    pub const PRIVATE_NX: u32 = RAM_NX + IMAGE_SIZE;
    /// Bytes of one core's private slice.
    pub const PRIVATE_SIZE: u32 = 1 << 20;
    /// Offset of the register block in the private slice (after the
    /// 256 KiB data RAM).
    pub const REGS_OFFSET: u32 = super::DATARAM_SIZE;
    /// The register block's base: plays `SUNDA_APB_BASE`, which
    /// `MEM_WINDOW0_LO` reads back.
    pub const APB_BASE: u32 = PRIVATE_NX + REGS_OFFSET;
    /// Offset of the emulated ISL word from [`APB_BASE`] (the de212 has no
    /// stack-limit register).
    pub const ISL_OFFSET: u32 = 0x2000;
    /// Offset, inside each DMA bank, of the emulated engine's private
    /// count of descriptors announced (not part of the Q7 register table).
    pub const DMA_SUBMITTED: u32 = 0x10;
    /// Where core `cpu`'s private slice really lies.
    pub const fn private_base(cpu: u32) -> u32 {
        PRIVATE_NX + cpu * PRIVATE_SIZE
    }
    /// NX base of the pinned hbm_scratch window (backed by RAM).
    pub const SCRATCH_NX: u32 = PRIVATE_NX + super::CORE_COUNT * PRIVATE_SIZE;
    /// The trace port: RAM after the scratch window that nothing else
    /// uses. The runtime tells the emulated run's checking plugin what it
    /// hands out by the ADDRESSES of byte stores here (QEMU 7.2's plugins
    /// see a store's address, not its value): a store to
    /// `TRACE_PORT_NX + (field << 16 | value)` passes 16 bits of a field.
    pub const TRACE_PORT_NX: u32 = SCRATCH_NX + super::PINNED_WINDOW_SIZE as u32;
    /// Fields of the trace port (each 64 KiB of addresses).
    pub const TRACE_PORT_FIELDS: u32 = 8;
}

impl Platform {
    /// These dynamic windows with their registers moved to the same
    /// offsets from `apb_base` (used to derive the QEMU table).
    const fn dynamic_windows_at(&self, apb_base: u32) -> [WindowSpec; DYNAMIC_WINDOWS] {
        let mut w = self.dynamic_windows;
        let mut i = 0;
        while i < DYNAMIC_WINDOWS {
            w[i].register = apb_base + (w[i].register - self.apb_base);
            i += 1;
        }
        w
    }
}

// The tables' layout rules, checked by the compiler on every build (host
// and Xtensa): a table that breaks one does not compile.

/// Half-open spans `a` and `b` do not overlap.
const fn disjoint(a: (u64, u64), b: (u64, u64)) -> bool {
    a.1 <= b.0 || b.1 <= a.0
}

/// The Q7 table: windows aligned and apart, scratch areas inside the
/// pinned window, the DMA staging window inside data RAM, the aperture
/// numbering of the reference.
const _: () = {
    let p = Q7;
    let mut spans: [(u64, u64); 5] = [(0, 0); 5];
    let mut i = 0;
    while i < DYNAMIC_WINDOWS {
        let w = p.dynamic_windows[i];
        assert!((w.nx_base as u64).is_multiple_of(DYNAMIC_WINDOW_SIZE), "a dynamic window is not aligned to its size");
        spans[i] = (w.nx_base as u64, w.nx_base as u64 + DYNAMIC_WINDOW_SIZE);
        i += 1;
    }
    spans[3] = (p.sbuf_window_nx as u64, p.sbuf_window_nx as u64 + PINNED_WINDOW_SIZE);
    spans[4] = (p.scratch_window_nx as u64, p.scratch_window_nx as u64 + PINNED_WINDOW_SIZE);
    let mut a = 0;
    while a < 5 {
        let mut b = a + 1;
        while b < 5 {
            assert!(disjoint(spans[a], spans[b]), "two windows overlap");
            b += 1;
        }
        a += 1;
    }
    assert!(scratch_areas_fit(&p), "the scratch areas overflow the pinned window");
    assert!(LIBC_HEAP_SIZE + (BOOTSTRAP_HEAP_SIZE as u64) < SCRATCH_AREA_SIZE);
    assert!(Platform::aperture_index(0) == 9 && Platform::aperture_index(7) == 23);
    assert!(p.aperture_soc(1) - p.aperture_soc(0) == 2 * DMA_WINDOW_SIZE as u64);
    let (lo, hi) = p.dataram_range();
    assert!(p.dma_window_nx >= lo && p.dma_window_nx + DMA_WINDOW_SIZE <= hi, "the DMA window is outside data RAM");
};

/// The QEMU table fits the emulator's RAM: every core's private slice and
/// the scratch window in RAM, data RAM then the registers inside a slice,
/// the dynamic windows' registers at the Q7's offsets and the windows
/// themselves unmapped.
const _: () = {
    use qemu::*;
    let p = QEMU;
    assert!(in_ram(private_base(CORE_COUNT - 1) as u64 + PRIVATE_SIZE as u64 - 1));
    assert!(in_ram(p.scratch_window_nx as u64 + PINNED_WINDOW_SIZE - 1));
    assert!(private_base(CORE_COUNT - 1) + PRIVATE_SIZE <= p.scratch_window_nx);
    assert!(TRACE_PORT_NX as u64 >= p.scratch_window_nx as u64 + PINNED_WINDOW_SIZE);
    assert!(in_ram(TRACE_PORT_NX as u64 + ((TRACE_PORT_FIELDS as u64) << 16) - 1));
    assert!(p.dataram_nx + DATARAM_SIZE <= APB_BASE);
    assert!(APB_BASE + ISL_OFFSET + 4 <= PRIVATE_NX + PRIVATE_SIZE);
    assert!(p.dma_regs_nx + 2 * dma_regs::BANK_STRIDE <= p.invocation_mailbox_nx);
    assert!(p.invocation_mailbox_nx + 8 <= APB_BASE + ISL_OFFSET);
    let mut i = 0;
    while i < DYNAMIC_WINDOWS {
        let w = p.dynamic_windows[i];
        assert!(w.register > p.mem_window0_nx && w.register < p.dma_regs_nx);
        assert!(!in_ram(w.nx_base as u64), "dynamic windows are unmapped on QEMU");
        i += 1;
    }
    assert!(p.dynamic_windows[0].register - p.apb_base == Q7.dynamic_windows[0].register - Q7.apb_base);
    assert!(scratch_areas_fit(&p));
};

/// `a` is in the emulator's RAM.
const fn in_ram(a: u64) -> bool {
    a >= qemu::RAM_NX as u64 && a < qemu::RAM_NX as u64 + qemu::RAM_SIZE as u64
}

/// Every core's scratch area ends inside the pinned scratch window.
const fn scratch_areas_fit(p: &Platform) -> bool {
    p.scratch_area_soc(CORE_COUNT - 1) + SCRATCH_AREA_SIZE - p.scratch_soc_base <= PINNED_WINDOW_SIZE
}
