//! The device HAL: volatile MMIO and special registers of one Xtensa core
//! (`target_arch = "xtensa"` only).
//!
//! [`MmioHal`] is the same code on the Q7 and on QEMU; what differs is the
//! [`Platform`] table and, on QEMU, the [`Soc::Qemu`] model of what the
//! emulated core lacks (see [`crate::platform::QEMU`]): core-private RAM
//! slices, a RAM register block, ISL in RAM and an SDMA engine run in
//! software when the completion counter is polled (`emulated`). That
//! model is built only with the crate's `qemu` feature (the root crate's
//! `qemu` feature turns it on), so a Q7 build carries none of it.
//!
//! MMIO is only ever touched through raw pointers with
//! `read_volatile`/`write_volatile`; no Rust reference to a register or to
//! memory the engine writes is formed.

#[cfg(feature = "qemu")]
mod emulated;
#[cfg(feature = "qemu")]
pub use emulated::trace;

use crate::dma::DmaDirection;
use crate::platform::{dma_regs, Platform, Q7};
#[cfg(feature = "qemu")]
use crate::platform::{qemu, QEMU};
use crate::Hal;

/// Which SoC the core sits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Soc {
    /// The real Q7: registers are hardware, ISL is a special register.
    Q7,
    /// `qemu-system-xtensa -cpu de212`: registers, ISL and the DMA engine
    /// are emulated in RAM; `cpu` selects the core's private RAM slice
    /// (feature `qemu`).
    #[cfg(feature = "qemu")]
    Qemu {
        /// The core (its PRID) this HAL stands for.
        cpu: u32,
    },
}

/// Special register number of the Q7's stack-limit register ISL.
/// *Assumed*: the references name ISL but not its number. One constant, so
/// that better data changes one line.
pub const Q7_ISL_SR: u32 = 0xA3;

/// The HAL of one Xtensa core: the platform table and the SoC model.
///
/// Owned, neither `Clone` nor `Copy`, and made only by an `unsafe`
/// constructor: a second handle could reprogram the core's windows behind
/// its translator. The device binding moves the one handle into the
/// core's state.
#[derive(Debug, PartialEq, Eq)]
pub struct MmioHal {
    platform: Platform,
    soc: Soc,
}

// A handle cannot be duplicated (checked on every Xtensa build).
static_assertions::assert_not_impl_any!(MmioHal: Clone, Copy);

/// Safe code cannot make a handle (checked on every Xtensa build): a
/// safe `fn() -> MmioHal` item would implement `Fn() -> MmioHal`, and
/// method resolution would then pick [`SafeCtor::probe`], whose answer is
/// not `()`; an `unsafe fn` item implements no `Fn` trait.
#[allow(dead_code)]
fn constructors_are_unsafe() {
    let () = (&Probe(core::marker::PhantomData::<()>, MmioHal::q7)).probe();
    #[cfg(feature = "qemu")]
    let () = (&Probe(core::marker::PhantomData::<u32>, MmioHal::qemu)).probe();
}

// Only the type checker uses these.
#[allow(dead_code)]
/// A constructor under test (autoref specialisation: the impl on
/// `Probe<F>` is preferred to the one on `&Probe<F>` where it applies).
struct Probe<A, F>(core::marker::PhantomData<A>, F);
/// A safe constructor was found.
#[allow(dead_code)]
struct SafeCtorFound;
#[allow(dead_code)]
trait SafeCtor {
    fn probe(&self) -> SafeCtorFound {
        SafeCtorFound
    }
}
impl<F: Fn() -> MmioHal> SafeCtor for Probe<(), F> {}
impl<F: Fn(u32) -> MmioHal> SafeCtor for Probe<u32, F> {}
trait UnsafeCtor {
    fn probe(&self) {}
}
impl<A, F> UnsafeCtor for &Probe<A, F> {}

/// The processor id of the calling core (`rsr.prid`), without a HAL.
#[inline]
pub fn prid() -> u32 {
    let prid: u32;
    // SAFETY: reading PRID (SR 235) has no side effects; the target has
    // the `prid` feature.
    unsafe { core::arch::asm!("rsr {0}, prid", out(reg) prid, options(nomem, nostack, preserves_flags)) };
    prid
}

impl MmioHal {
    /// The Q7 (SPEC §2 addresses).
    ///
    /// # Safety
    /// The calling core is a Q7 core, and no other `MmioHal` for it is
    /// alive: this one becomes the only handle on its window registers,
    /// DMA engine and stack limit.
    pub const unsafe fn q7() -> Self {
        Self { platform: Q7, soc: Soc::Q7 }
    }

    /// Core `cpu` of the emulated cluster (the [`QEMU`] table; feature
    /// `qemu`).
    ///
    /// # Safety
    /// As [`MmioHal::q7`], for core `cpu` of the emulated cluster.
    #[cfg(feature = "qemu")]
    pub const unsafe fn qemu(cpu: u32) -> Self {
        Self { platform: QEMU, soc: Soc::Qemu { cpu } }
    }

    /// The SoC model.
    pub const fn soc(&self) -> Soc {
        self.soc
    }

    /// Puts the emulated registers in their reset state (QEMU starts with
    /// zeroed RAM, the Q7's `MEM_WINDOW0_LO` reads `SUNDA_APB_BASE`): a
    /// no-op on the Q7. The device binding runs it once per core before
    /// the first entry point.
    pub fn power_on(&self) {
        #[cfg(feature = "qemu")]
        if let Soc::Qemu { .. } = self.soc {
            emulated::reset(self);
        }
    }

    /// QEMU only (the test image plays the loader): posts the SoC address
    /// of the next invocation block in this core's mailbox register.
    pub fn post_invocation(&self, block: u64) {
        let m = self.platform.invocation_mailbox_nx;
        self.write_reg(m, block as u32);
        self.write_reg(m + 4, (block >> 32) as u32);
    }

    fn reg(&self, nx: u32) -> *mut u32 {
        self.nx_ptr(nx).cast::<u32>()
    }

    fn write_reg(&self, nx: u32, v: u32) {
        // SAFETY: every `nx` passed here comes from the platform table (a
        // register of this core, 4-byte aligned): device MMIO on the Q7,
        // this core's RAM register block on QEMU. Volatile, no reference.
        unsafe { self.reg(nx).write_volatile(v) }
    }

    fn read_reg(&self, nx: u32) -> u32 {
        // SAFETY: as in `write_reg`.
        unsafe { self.reg(nx).read_volatile() }
    }

    fn bank(&self, dir: DmaDirection) -> u32 {
        self.platform.dma_regs_nx + dir.index() as u32 * dma_regs::BANK_STRIDE
    }
}

// SAFETY: on the Q7 `nx_ptr` is the identity and the platform table is
// the hardware's (SPEC §2): the data-RAM heap and the pinned scratch
// window are this core's own memory. Under QEMU a core's private slice is
// relocated to its own RAM (`qemu::private_base`), the rest is the one
// RAM all cores see, laid out by the `QEMU` table. The constructors are
// `unsafe` and promise one `MmioHal` per core.
unsafe impl Hal for MmioHal {
    #[inline]
    fn platform(&self) -> &Platform {
        &self.platform
    }

    #[inline]
    fn prid(&self) -> u32 {
        prid()
    }

    #[inline]
    fn nx_ptr(&self, nx: u32) -> *mut u8 {
        match self.soc {
            Soc::Q7 => nx as usize as *mut u8,
            #[cfg(feature = "qemu")]
            Soc::Qemu { cpu } => {
                // The private slice is per core on the Q7 (same NX
                // address, different memory); QEMU has one RAM for all
                // cores, so core c's slice lives c MiB further on.
                if nx.wrapping_sub(qemu::PRIVATE_NX) < qemu::PRIVATE_SIZE {
                    (nx - qemu::PRIVATE_NX + qemu::private_base(cpu)) as usize as *mut u8
                } else {
                    nx as usize as *mut u8
                }
            }
        }
    }

    unsafe fn write_window_register(&self, w: crate::WindowId, region_base: u64) {
        // A `WindowId` names one of the platform's dynamic windows.
        let Some(reg) = self.platform().dynamic_windows.get(w.index()).map(|d| d.register) else { return };
        // MEM_WINDOWn_LO, then _HI at +4 (assumed register pair).
        self.write_reg(reg, region_base as u32);
        self.write_reg(reg + 4, (region_base >> 32) as u32);
    }

    #[inline]
    fn memw(&self) {
        // SAFETY: `memw` only orders memory accesses.
        unsafe { core::arch::asm!("memw", options(nostack, preserves_flags)) };
    }

    unsafe fn dma_doorbell(&self, dir: DmaDirection, count: u32) {
        let bank = self.bank(dir);
        self.write_reg(bank + dma_regs::INCREMENT, count);
        #[cfg(feature = "qemu")]
        if let Soc::Qemu { .. } = self.soc {
            emulated::doorbell(self, bank, count);
        }
    }

    fn dma_completed(&self, dir: DmaDirection) -> u32 {
        let bank = self.bank(dir);
        #[cfg(feature = "qemu")]
        if let Soc::Qemu { cpu } = self.soc {
            emulated::step(self, cpu, bank);
        }
        self.read_reg(bank + dma_regs::COMPLETED)
    }

    unsafe fn dma_arm(&self, dir: DmaDirection) {
        let bank = self.bank(dir);
        self.write_reg(bank + dma_regs::RING_BASE, self.platform().dma_ring_nx(dir));
        self.write_reg(bank + dma_regs::RING_LEN, crate::dma::RING_LEN);
        #[cfg(feature = "qemu")]
        if let Soc::Qemu { .. } = self.soc {
            emulated::arm(self, bank);
        }
    }

    fn read_window_register(&self, reg: u32) -> u64 {
        self.read_reg(reg) as u64 | (self.read_reg(reg + 4) as u64) << 32
    }

    fn invocation_block(&self) -> u64 {
        let m = self.platform.invocation_mailbox_nx;
        self.read_reg(m) as u64 | (self.read_reg(m + 4) as u64) << 32
    }

    #[inline]
    fn stack_pointer(&self) -> usize {
        let sp: usize;
        // SAFETY: copies a1; no memory access.
        unsafe { core::arch::asm!("mov {0}, a1", out(reg) sp, options(nomem, nostack, preserves_flags)) };
        sp
    }

    fn stack_limit(&self) -> usize {
        match self.soc {
            Soc::Q7 => {
                let v: usize;
                // SAFETY: reads the stack-limit special register (no side
                // effects).
                // LLVM's assembler only knows named special registers, so
                // `rsr a8, ISL` is encoded by hand (RSR: op1 = 3, op2 = 0,
                // sr in bits 8..16, t = 8).
                unsafe {
                    core::arch::asm!(
                        ".byte 0x80, {lo}, 0x03",
                        lo = const Q7_ISL_SR & 0xFF,
                        out("a8") v,
                        options(nomem, nostack, preserves_flags),
                    )
                };
                v
            }
            #[cfg(feature = "qemu")]
            Soc::Qemu { .. } => self.read_reg(self.platform.apb_base + qemu::ISL_OFFSET) as usize,
        }
    }

    unsafe fn set_stack_limit(&self, isl: usize) {
        match self.soc {
            Soc::Q7 => {
                // SAFETY: writes the stack-limit register; the caller (the
                // stack switch) keeps SP above it. `rsync` makes it take
                // effect before the next instruction.
                // `wsr a8, ISL` encoded by hand (WSR: op1 = 3, op2 = 1).
                unsafe {
                    core::arch::asm!(
                        ".byte 0x80, {lo}, 0x13",
                        "rsync",
                        lo = const Q7_ISL_SR & 0xFF,
                        in("a8") isl,
                        options(nostack, preserves_flags),
                    )
                };
            }
            #[cfg(feature = "qemu")]
            Soc::Qemu { .. } => self.write_reg(self.platform.apb_base + qemu::ISL_OFFSET, isl as u32),
        }
    }
}
