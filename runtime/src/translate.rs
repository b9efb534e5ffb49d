//! Address translation (SPEC §3): `Q7PtrType`, the 5-record context and
//! `neuron_translate`.
//!
//! A hit is pure arithmetic on the context. A miss evicts one of the three
//! dynamic records round-robin and reprograms its hardware window; from then
//! on an NX pointer obtained earlier through that window shows the new
//! region. Callers therefore translate at the point of access and hold no
//! NX pointer across another translate. The translator that owns the
//! context and keeps the hit table with it is in `translate/translator.rs`.

use core::mem::{align_of, offset_of, size_of};
use neuron_hal::platform::{DYNAMIC_WINDOWS, DYNAMIC_WINDOW_SIZE, PINNED_WINDOW_SIZE};
use neuron_hal::Hal;
use static_assertions::const_assert_eq;

mod translator;
pub use translator::{TranslateStats, Translator, TranslatorAbi, DEVICE_HIT_SLOT_BYTES, DEVICE_HIT_TABLE_OFFSET, GENERATION_EXHAUSTED};

/// Number of records: three dynamic windows, then SBUF and hbm_scratch.
pub const RECORDS: usize = 5;
/// Record index of the pinned SBUF window.
pub const SBUF_RECORD: usize = 3;
/// Record index of the pinned hbm_scratch window.
pub const SCRATCH_RECORD: usize = 4;
/// Tag of a record that maps nothing: its low bits are set, and
/// `addr & mask` never has them, so it never hits.
const EMPTY_TAG: u64 = u64::MAX;

/// One window of the context (32 bytes, C layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct MapRecord {
    /// SoC base of the region the window shows (`addr & mask`).
    pub ptr: u64,
    /// Where the window starts for the core (an NX address on the device;
    /// the mock's host address for it on the host).
    pub window: u64,
    /// Bits of an address that select the region.
    pub mask: u64,
    /// NX address of the window's register (0 for pinned windows).
    pub reg_location: u64,
}

/// The per-core translation context (168 bytes, C layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct TranslationCtx {
    /// Dynamic windows 0..3, then SBUF, then hbm_scratch.
    pub records: [MapRecord; RECORDS],
    /// Round-robin cursor over the dynamic records (`% 3`).
    pub next_alloc: u8,
    /// The dynamic record installed last (`0..3`), checked first by a
    /// lookup: a kernel walking a tensor hits it almost always. Lives in
    /// what was padding, so the layout (168 bytes) is unchanged.
    pub last_installed: u8,
}

const_assert_eq!(size_of::<MapRecord>(), 32);
const_assert_eq!(offset_of!(MapRecord, window), 8);
const_assert_eq!(offset_of!(MapRecord, mask), 16);
const_assert_eq!(offset_of!(MapRecord, reg_location), 24);
const_assert_eq!(offset_of!(TranslationCtx, next_alloc), 160);
const_assert_eq!(offset_of!(TranslationCtx, last_installed), 161);
const_assert_eq!(size_of::<TranslationCtx>(), 168);
const_assert_eq!(align_of::<TranslationCtx>(), 8);
// The C++ accessor (include/ATen/core/TensorAccessor.h) static_asserts the
// same layout; its inline hit reads the hit table past the context
// (`DEVICE_HIT_TABLE_OFFSET`).
const_assert_eq!(offset_of!(MapRecord, ptr), 0);
const_assert_eq!(offset_of!(TranslationCtx, records), 0);

/// A tensor's storage as the kernel holds it: a 64-bit SoC address and the
/// context that translates it (16 bytes, C layout). Arithmetic on it is
/// 64-bit arithmetic and touches neither memory nor windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Q7PtrType {
    /// SoC (HBM or SBUF) address.
    pub addr: u64,
    /// The core's translation context.
    pub ctx: *mut TranslationCtx,
}

const_assert_eq!(size_of::<Q7PtrType>(), 16);
const_assert_eq!(offset_of!(Q7PtrType, ctx), 8);

impl Q7PtrType {
    /// The pointer `bytes` further on (wrapping 64-bit arithmetic).
    #[inline]
    pub const fn byte_add(self, bytes: u64) -> Self {
        Self { addr: self.addr.wrapping_add(bytes), ctx: self.ctx }
    }

    /// The pointer to element `idx` of `T`s starting here.
    #[inline]
    pub const fn element<T>(self, idx: u64) -> Self {
        self.byte_add(idx.wrapping_mul(size_of::<T>() as u64))
    }
}

/// Bytes of SBUF the pinned SBUF window shows from its record's base.
#[inline(always)]
fn sbuf_bytes_on(p: &neuron_hal::Platform) -> u64 {
    (p.sbuf_soc_base & (PINNED_WINDOW_SIZE - 1)) + p.sbuf_size.min(PINNED_WINDOW_SIZE)
}

impl MapRecord {
    /// The pointer for `addr` if this record's region (of `size` bytes,
    /// the record's constant mask `!(size - 1)`) holds it. On a hit
    /// `addr - ptr` is the offset in the region, so a 32-bit core computes
    /// only the low word; the tag compare is the high word plus the masked
    /// low word.
    #[inline(always)]
    fn hit_sized(&self, addr: u64, size: u64) -> Option<*mut u8> {
        if addr & region_mask(size) == self.ptr {
            Some((self.window as usize).wrapping_add((addr as usize).wrapping_sub(self.ptr as usize)) as *mut u8)
        } else {
            None
        }
    }
}

const_assert_eq!(DYNAMIC_WINDOW_SIZE, 1 << 24);

impl MapRecord {
    /// [`MapRecord::hit_sized`] with the masked low word and the high word
    /// of the address given, compared one at a time.
    #[inline(always)]
    fn hit_split(&self, addr: u64, lo_masked: u32, hi: u32) -> Option<*mut u8> {
        if self.ptr as u32 == lo_masked && (self.ptr >> 32) as u32 == hi {
            Some((self.window as usize).wrapping_add((addr as usize).wrapping_sub(self.ptr as usize)) as *mut u8)
        } else {
            None
        }
    }
}

const fn region_mask(size: u64) -> u64 {
    !(size - 1)
}

impl TranslationCtx {
    /// A context whose every record maps nothing.
    pub const fn empty() -> Self {
        let r = MapRecord { ptr: EMPTY_TAG, window: 0, mask: 0, reg_location: 0 };
        Self { records: [r; RECORDS], next_alloc: 0, last_installed: 0 }
    }

    /// The context of a freshly initialised core: dynamic windows empty,
    /// pinned windows showing SBUF and hbm_scratch.
    pub fn new<H: Hal>(hal: &H) -> Self {
        let mut ctx = Self::empty();
        ctx.reset(hal);
        ctx
    }

    /// Makes this the context of a freshly initialised core, in place (no
    /// 168-byte temporary on the stack).
    pub fn reset<H: Hal>(&mut self, hal: &H) {
        let p = hal.platform();
        let ctx = self;
        ctx.next_alloc = 0;
        ctx.last_installed = 0;
        for (rec, w) in ctx.records.iter_mut().zip(p.dynamic_windows.iter()) {
            *rec = MapRecord {
                ptr: EMPTY_TAG,
                window: hal.nx_ptr(w.nx_base) as usize as u64,
                mask: region_mask(DYNAMIC_WINDOW_SIZE),
                reg_location: w.register as u64,
            };
        }
        let pinned = [(p.sbuf_soc_base, p.sbuf_window_nx), (p.scratch_soc_base, p.scratch_window_nx)];
        for (rec, (soc, nx)) in ctx.records[DYNAMIC_WINDOWS..].iter_mut().zip(pinned) {
            let mask = region_mask(PINNED_WINDOW_SIZE);
            *rec = MapRecord { ptr: soc & mask, window: hal.nx_ptr(nx) as usize as u64, mask, reg_location: 0 };
        }
    }

    /// The record that maps `addr`, and the pointer it yields (a hit), if
    /// any. Pure arithmetic: the last installed dynamic record first, then
    /// every record in order.
    #[inline(always)]
    pub fn lookup(&self, addr: u64) -> Option<(usize, *mut u8)> {
        let m = self.last_installed as usize;
        if let Some(p) = self.records.get(m).and_then(|r| r.hit_sized(addr, DYNAMIC_WINDOW_SIZE)) {
            return Some((m, p));
        }
        self.lookup_all(addr)
    }

    /// Every record, with the records' constant masks (16 MiB dynamic,
    /// 64 MiB pinned): the masked low word first, then the high word. The
    /// pinned records come first (the records are disjoint: a region is
    /// installed only when no record maps it, and the 16 MiB regions nest
    /// in the 64 MiB ones, so the order changes no result).
    #[inline(always)]
    pub fn lookup_all(&self, addr: u64) -> Option<(usize, *mut u8)> {
        let [d0, d1, d2, sbuf, scratch] = &self.records;
        let hi = (addr >> 32) as u32;
        let pinned = addr as u32 & region_mask(PINNED_WINDOW_SIZE) as u32;
        let dynamic = addr as u32 & region_mask(DYNAMIC_WINDOW_SIZE) as u32;
        // Unrolled by hand: an iterator here stays a loop with a call.
        if let Some(p) = scratch.hit_split(addr, pinned, hi) {
            return Some((SCRATCH_RECORD, p));
        }
        if let Some(p) = sbuf.hit_split(addr, pinned, hi) {
            return Some((SBUF_RECORD, p));
        }
        if let Some(p) = d0.hit_split(addr, dynamic, hi) {
            return Some((0, p));
        }
        if let Some(p) = d1.hit_split(addr, dynamic, hi) {
            return Some((1, p));
        }
        d2.hit_split(addr, dynamic, hi).map(|p| (2, p))
    }

    /// Installs the region of `addr` in the round-robin victim among the
    /// dynamic records and reprograms its window, fenced on both sides.
    /// Returns the record used and the region it showed before (`None`:
    /// it was empty). `addr` must be mappable (checked by the caller).
    // Inline: the caller indexes with the victim, which is then known to
    // be a record (no bounds-check panic is linked).
    #[inline(always)]
    fn install<H: Hal>(&mut self, hal: &H, addr: u64) -> (usize, Option<u64>) {
        let victim = (self.next_alloc % DYNAMIC_WINDOWS as u8) as usize;
        self.next_alloc = (victim as u8 + 1) % DYNAMIC_WINDOWS as u8;
        self.last_installed = victim as u8;
        let r = &mut self.records[victim];
        let evicted = (r.ptr != EMPTY_TAG).then_some(r.ptr);
        r.ptr = addr & r.mask;
        hal.memw();
        // The window by its index, not by the context's `reg_location`
        // (kernels hold the context, so that field is not trusted).
        if let Some(w) = neuron_hal::WindowId::new(victim) {
            // SAFETY: the record for `w` now names `r.ptr`; this context
            // is its core state's (the translator's programming methods
            // are the crate's, called by the state with its own HAL).
            unsafe { hal.write_window_register(w, r.ptr) };
        }
        hal.memw();
        (victim, evicted)
    }
}
