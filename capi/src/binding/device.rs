//! The device binding: one static state per image (each Q7 core runs its
//! own image, linked at its own address, on private memory).
//!
//! Under QEMU (feature `qemu`) every emulated core runs the *same* image
//! in one shared RAM, so the image holds one state per core and a core
//! picks its own by PRID: the stand-in for "one image per core".

use super::{CoreHal, CoreSlot};

use neuron_hal::xtensa::MmioHal;

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicBool, Ordering};

/// A core's state in a static, all zeroes until the core's first use
/// builds it in place: so it sits in `.bss` (RAM the image does not
/// carry; the loader zeroes it) rather than in `.data`.
pub struct Slot {
    /// Set once the slot holds its `CoreSlot`.
    ready: AtomicBool,
    slot: UnsafeCell<MaybeUninit<CoreSlot<CoreHal>>>,
}

// SAFETY: a slot is only ever used by the one core it belongs to (on
// the Q7 the image is private to its core; under QEMU a core uses the
// slot of its own PRID), and a core is one thread of control;
// `with_core`'s busy flag refuses re-entry.
unsafe impl Sync for Slot {}

impl Slot {
    const fn new() -> Self {
        Self { ready: AtomicBool::new(false), slot: UnsafeCell::new(MaybeUninit::zeroed()) }
    }

    /// The slot's state, built with `hal()` on first use.
    #[inline(always)]
    fn get(&self, hal: impl FnOnce() -> MmioHal) -> *mut CoreSlot<CoreHal> {
        let p = self.slot.get().cast::<CoreSlot<CoreHal>>();
        if !self.ready.load(Ordering::Relaxed) {
            // SAFETY: not ready: this is the core's first use (the slot
            // is its own, see `Sync`), so no reference to it exists, and
            // its memory is still the zeroes of `new`.
            unsafe { Self::bring_up(p, hal()) };
            self.ready.store(true, Ordering::Relaxed);
        }
        p
    }

    /// Builds the state in place, then (QEMU) puts the core's emulated
    /// registers in their reset state (nothing to do on the Q7).
    ///
    /// # Safety
    /// As [`CoreSlot::init_in_place`].
    #[cold]
    #[inline(never)]
    unsafe fn bring_up(p: *mut CoreSlot<CoreHal>, hal: MmioHal) {
        // SAFETY: forwarded from the caller.
        unsafe { CoreSlot::init_in_place(p, hal) };
        #[cfg(feature = "qemu")]
        {
            // SAFETY: just built; no entry point holds it yet; only the
            // HAL, a plain value, is read.
            unsafe { (*(*p).bound.get()).state.hal().power_on() };
        }
    }
}

#[cfg(not(feature = "qemu"))]
static CORE: Slot = Slot::new();

/// The core's slot, built on first use. Not inlined: the first-use
/// check stays in one place instead of in every entry point.
#[cfg(not(feature = "qemu"))]
#[inline(never)]
pub fn current() -> *mut CoreSlot<CoreHal> {
    // SAFETY: `get` runs the closure once, at the core's first use:
    // the handle it makes is the core's only one, moved into its state.
    CORE.get(|| unsafe { MmioHal::q7() })
}

/// The calling core's PRID, read from the hardware (the abort path
/// must not enter the state, which may be held).
pub fn abort_cpu() -> i32 {
    neuron_hal::xtensa::prid() as i32
}

#[cfg(feature = "qemu")]
static CORES: [Slot; neuron_hal::platform::CORE_COUNT as usize] = [const { Slot::new() }; neuron_hal::platform::CORE_COUNT as usize];

/// The calling core's slot (by PRID); null for a PRID of 8 or more.
/// The first use builds the core's state and puts its emulated
/// registers in their reset state.
#[cfg(feature = "qemu")]
pub fn current() -> *mut CoreSlot<CoreHal> {
    let cpu = neuron_hal::xtensa::prid();
    let Some(slot) = CORES.get(cpu as usize) else {
        return core::ptr::null_mut();
    };
    // SAFETY: the slot of the calling core (its PRID); `get` runs the
    // closure once, at its first use: the core's only handle, moved
    // into its state.
    slot.get(|| unsafe { MmioHal::qemu(cpu) })
}

/// The "open translator": the address of this core's `Translator`
/// (whose first field is the context kernels hold) while no entry
/// point holds the state, else 0. `with_core` closes it on entry and
/// opens it on exit; the translate hit path compares the `ctx` it is
/// given with it and then reads the context in place. On the Q7 a
/// static word; under QEMU (one image, eight cores) the core's own
/// `MISC0` special register, so no PRID arithmetic is needed.
#[cfg(not(feature = "qemu"))]
static OPEN: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// The open translator's address, or 0.
#[cfg(not(feature = "qemu"))]
#[inline(always)]
pub fn open_translator() -> usize {
    OPEN.load(core::sync::atomic::Ordering::Relaxed)
}

/// Sets the open translator (0: closed).
#[cfg(not(feature = "qemu"))]
#[inline(always)]
pub fn set_open_translator(v: usize) {
    OPEN.store(v, core::sync::atomic::Ordering::Relaxed);
}

/// The open translator's address, or 0 (`MISC0`, 0 at reset).
#[cfg(feature = "qemu")]
#[inline(always)]
pub fn open_translator() -> usize {
    let v: usize;
    // SAFETY: reads the core's MISC0 special register, which only this
    // module writes; no memory is touched (not `nomem`, so the
    // compiler keeps it ordered with the reads of the context).
    unsafe { core::arch::asm!("rsr.misc0 {0}", out(reg) v, options(nostack, preserves_flags)) };
    v
}

/// Sets the open translator (0: closed).
#[cfg(feature = "qemu")]
#[inline(always)]
pub fn set_open_translator(v: usize) {
    // SAFETY: writes MISC0, a scratch special register this module
    // owns; a compiler memory barrier, so every write to the state
    // made before is emitted before it.
    unsafe { core::arch::asm!("wsr.misc0 {0}", "rsync", in(reg) v, options(nostack, preserves_flags)) };
}

/// Errors with no core bound cannot happen on the device except for a
/// PRID out of range (QEMU); they are kept here.
static UNBOUND_ERROR: core::sync::atomic::AtomicI32 = core::sync::atomic::AtomicI32::new(0);

pub fn set_unbound_error(code: i32) {
    UNBOUND_ERROR.store(code, core::sync::atomic::Ordering::Relaxed);
}

pub fn unbound_error() -> i32 {
    UNBOUND_ERROR.load(core::sync::atomic::Ordering::Relaxed)
}

/// A copy of the calling core's `view` (zeroes when no core is bound).
#[cfg(target_arch = "xtensa")]
pub fn read_view() -> neuron_runtime::marshal::tensor::TensorView {
    let p = current();
    if p.is_null() {
        // SAFETY: plain data; all zeroes is valid (see `Bound::new`).
        return unsafe { core::mem::zeroed() };
    }
    // SAFETY: as in with_core; no entry point holds the state now (this
    // runs between entry points, `busy` is checked), and only a plain
    // field is copied.
    unsafe {
        if (*p).busy.get() {
            return core::mem::zeroed();
        }
        copy_view(core::ptr::addr_of!((*(*p).bound.get()).view))
    }
}

/// A copy of the view at `src`, built field by field (and array element
/// by element) in the return place. A plain `read` — or a word loop, which
/// LLVM turns back into one — is a `memcpy` call into a local and a
/// second into the caller's return slot (~240 instructions each for the
/// 168 bytes); this is one load and one store per word.
///
/// # Safety
/// `src` is valid for reads of a `TensorView`, aligned, and not written
/// while this runs.
#[cfg(target_arch = "xtensa")]
#[inline(always)]
unsafe fn copy_view(src: *const neuron_runtime::marshal::tensor::TensorView) -> neuron_runtime::marshal::tensor::TensorView {
    use neuron_runtime::marshal::tensor::TensorView;
    use neuron_runtime::translate::Q7PtrType;
    // SAFETY: the caller's contract: `*src` is a readable, aligned view
    // of plain data (the core's own state, not MMIO) that nothing writes
    // while the reference lives.
    // The view lies past l32i's reach in the state: one opaque base (else
    // every field is an `l32r` + `add` of its own).
    let v = unsafe { &*core::hint::black_box(src) };
    let (z, t) = (&v.sizes, &v.strides);
    TensorView {
        storage: Q7PtrType { addr: v.storage.addr, ctx: v.storage.ctx },
        sizes: [z[0], z[1], z[2], z[3], z[4], z[5], z[6], z[7]],
        strides: [t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]],
        numel: v.numel,
        nbytes: v.nbytes,
        dtype: v.dtype,
        num_dim: v.num_dim,
        elem_size: v.elem_size,
        location: v.location,
        reserved: v.reserved,
    }
}
