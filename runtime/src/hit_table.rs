//! The translator's hit table: a translate hit at the same cost for every
//! record.
//!
//! The context's five records (SPEC §3) make a hit a scan: up to five
//! 64-bit tag compares on a 32-bit core. This table sits next to the
//! context and answers a hit with one indexed load, one compare and one
//! add, whichever record maps the address. It is a cache of the records,
//! never a second source of truth: a slot names one 16 MiB granule by its
//! index and its tag together, so a slot either maps exactly that granule
//! through the record that shows it, or is empty; anything the table does
//! not answer goes to the scan, which decides as before.
//!
//! Index and tag: a granule is `addr >> 24`; its slot is
//! `(addr as u32 >> 24) + (addr >> 32)` and its tag the high word
//! `addr >> 32`. Given the index and the tag the granule is determined
//! (`top = index - hi`), so one compare of the tag suffices. Adding the
//! high word spreads granules 4 GiB apart over different slots (SBUF and
//! hbm_scratch both start at a 4 GiB boundary; with the low word's top
//! byte alone their first granules would share a slot). Only addresses
//! below [`HIT_HI_LIMIT`] `<< 32` use the table (every platform's SBUF and
//! HBM do, const-asserted). A larger high word either indexes past the
//! table or, wrapping, meets only tags below the limit or the empty tag
//! (2³¹), so neither it nor an empty slot ever hits.

use neuron_hal::platform::{DYNAMIC_WINDOW_SIZE, PINNED_WINDOW_SIZE, Q7, QEMU};
use static_assertions::const_assert;

/// Address high words the table serves: below 256, so that an index
/// (low word's top byte + high word) stays below [`HIT_SLOTS`]. The hit
/// has no limit test of its own: the slot lookup's bound test (`movi` +
/// `bltu` on Xtensa) refuses every larger high word.
pub const HIT_HI_LIMIT: u32 = 256;
/// Slots: every index `top + hi` with `top < 256` and `hi < 256`.
pub const HIT_SLOTS: usize = 2 * HIT_HI_LIMIT as usize - 1;
/// Address bits below a granule's (the dynamic window size, 16 MiB).
pub const GRANULE_SHIFT: u32 = 24;
/// Tag of an empty slot: an address with this high word has an index
/// (`top + hi`, wrapping) past the table, so it never reaches a compare.
const EMPTY_HI: u32 = 1 << 31;

const_assert!(DYNAMIC_WINDOW_SIZE == 1 << GRANULE_SHIFT);
// The pinned windows are whole granules, so each granule of theirs is
// wholly in or out of the window.
const_assert!(PINNED_WINDOW_SIZE.is_multiple_of(DYNAMIC_WINDOW_SIZE));
// Every platform's mappable memory is served by the table.
const_assert!(((Q7.hbm_soc_base + Q7.hbm_size - 1) >> 32) < HIT_HI_LIMIT as u64);
const_assert!(((Q7.sbuf_soc_base + PINNED_WINDOW_SIZE - 1) >> 32) < HIT_HI_LIMIT as u64);
const_assert!(((QEMU.hbm_soc_base + QEMU.hbm_size - 1) >> 32) < HIT_HI_LIMIT as u64);
const_assert!(((QEMU.sbuf_soc_base + PINNED_WINDOW_SIZE - 1) >> 32) < HIT_HI_LIMIT as u64);

/// One slot (8 bytes on the device: the hit reads two words of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(8))]
pub struct HitSlot {
    /// The granule's high word; [`EMPTY_HI`] when the slot maps nothing.
    tag_hi: u32,
    /// `nx - granule`, wrapping, at pointer width, where `nx` is where the
    /// granule starts for the core: the pointer is `addr + delta`.
    delta: usize,
}

impl HitSlot {
    const EMPTY: Self = Self { tag_hi: EMPTY_HI, delta: 0 };

    /// The tag and the delta. On the device one 64-bit read: LLVM then
    /// addresses both words from the slot with the table's offset folded
    /// into each load, where two field reads got the offset added once in
    /// a register (two instructions more).
    #[inline(always)]
    fn words(&self) -> (u32, usize) {
        #[cfg(target_pointer_width = "32")]
        {
            // SAFETY: `HitSlot` is two 32-bit words, `repr(C)` and 8-aligned
            // on a 32-bit target (asserted below): a `u64` read of it is in
            // bounds and aligned, of initialised bytes.
            let w = unsafe { core::ptr::from_ref(self).cast::<u64>().read() };
            (w as u32, (w >> 32) as usize)
        }
        #[cfg(not(target_pointer_width = "32"))]
        {
            (self.tag_hi, self.delta)
        }
    }
}

#[cfg(target_pointer_width = "32")]
static_assertions::const_assert!(core::mem::size_of::<HitSlot>() == 8 && core::mem::align_of::<HitSlot>() == 8 && core::mem::offset_of!(HitSlot, delta) == 4);

/// The table (see the module's documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct HitTable {
    slots: [HitSlot; HIT_SLOTS],
}

impl Default for HitTable {
    fn default() -> Self {
        Self::new()
    }
}

/// The slot index of `addr`, if the table serves its high word.
#[inline(always)]
fn index(addr: u64) -> Option<usize> {
    let hi = (addr >> 32) as u32;
    (hi < HIT_HI_LIMIT).then(|| ((addr as u32) >> GRANULE_SHIFT) as usize + hi as usize)
}

/// `v`, opaque to the optimiser on the device: LLVM would fold the
/// index's `>> 24` into the slot's `* 8` as `(lo >> 21) & 0x7f8` (an
/// `extui`, a `movi` and an `and` on Xtensa, where `srli` and `addx8`
/// do it in two). No instruction is emitted.
#[inline(always)]
fn opaque(v: u32) -> u32 {
    #[cfg(target_arch = "xtensa")]
    {
        let mut v = v;
        // SAFETY: an empty template: no instruction, no memory, no stack.
        unsafe { core::arch::asm!("/* {0} */", inout(reg) v, options(pure, nomem, nostack, preserves_flags)) };
        v
    }
    #[cfg(not(target_arch = "xtensa"))]
    {
        v
    }
}

impl HitTable {
    /// A table that maps nothing.
    pub const fn new() -> Self {
        Self { slots: [HitSlot::EMPTY; HIT_SLOTS] }
    }

    /// Writes an empty table into `*p`, slot by slot.
    ///
    /// # Safety
    /// `p` is valid for writes of a `HitTable` and aligned; no reference
    /// to `*p` is live.
    pub unsafe fn write_empty(p: *mut Self) {
        // `repr(C)` with the array as its only field: the slots start at `p`.
        let slots = p.cast::<HitSlot>();
        for i in 0..HIT_SLOTS {
            // SAFETY: the caller's contract; `i` is within the array.
            unsafe { slots.add(i).write(HitSlot::EMPTY) };
        }
    }

    /// Forgets every granule.
    pub fn clear(&mut self) {
        for s in self.slots.iter_mut() {
            *s = HitSlot::EMPTY;
        }
    }

    /// The pointer for `addr` if its granule is in the table. Pure
    /// arithmetic: on the device the limit test, the index, one load and
    /// compare of the tag, one load and add of the delta.
    #[inline(always)]
    pub fn hit(&self, addr: u64) -> Option<*mut u8> {
        let hi = (addr >> 32) as u32;
        // Wrapping: a high word at or past the limit either gives an index
        // past the table or (within 255 of `u32::MAX`) meets only tags
        // below the limit or the empty tag, which it is not. The slot
        // lookup's bound test is the limit test.
        let i = opaque((addr as u32) >> GRANULE_SHIFT).wrapping_add(hi);
        let (tag_hi, delta) = self.slots.get(i as usize)?.words();
        if tag_hi != hi {
            return None;
        }
        Some((addr as usize).wrapping_add(delta) as *mut u8)
    }

    /// Maps the granule holding `addr` to the core's `nx`, where that
    /// granule starts. The caller has checked that one record shows the
    /// whole granule there. A granule the table does not serve is left to
    /// the scan.
    pub fn insert(&mut self, addr: u64, nx: usize) {
        let granule = addr >> GRANULE_SHIFT << GRANULE_SHIFT;
        if let Some(s) = index(addr).and_then(|i| self.slots.get_mut(i)) {
            *s = HitSlot { tag_hi: (addr >> 32) as u32, delta: nx.wrapping_sub(granule as usize) };
        }
    }

    /// Forgets the granule holding `addr` if its slot maps it (a slot that
    /// maps another granule is left as it is).
    pub fn remove(&mut self, addr: u64) {
        if let Some(s) = index(addr).and_then(|i| self.slots.get_mut(i)) {
            if s.tag_hi == (addr >> 32) as u32 {
                *s = HitSlot::EMPTY;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = DYNAMIC_WINDOW_SIZE;

    #[test]
    fn empty_never_hits_even_at_the_empty_tag() {
        let t = HitTable::new();
        for a in [0, 0x40_0000_0040, (EMPTY_HI as u64) << 32, u64::MAX, (255u64 << 32) | 0xFF00_0000] {
            assert_eq!(t.hit(a), None, "{a:#x}");
        }
    }

    #[test]
    fn a_granule_hits_at_its_offset_and_nowhere_else() {
        let mut t = HitTable::new();
        let g = 0x40_0500_0000u64;
        t.insert(g + 0x10, 0x0900_0000);
        assert_eq!(t.hit(g), Some(0x0900_0000 as *mut u8));
        assert_eq!(t.hit(g + G - 1), Some((0x0900_0000 + G as usize - 1) as *mut u8));
        assert_eq!(t.hit(g + G), None, "the next granule");
        assert_eq!(t.hit(g - 1), None, "the previous granule");
        // Same index, other high word (top - 1, hi + 1): another granule.
        assert_eq!(t.hit(0x41_0400_0000), None);
        // Same top byte, other high word.
        assert_eq!(t.hit(0x41_0500_0000), None);
    }

    #[test]
    fn remove_forgets_only_its_own_granule() {
        let mut t = HitTable::new();
        let a = 0x40_0500_0000u64;
        let b = 0x41_0400_0000u64; // the same slot
        t.insert(a, 0x0700_0000);
        t.remove(b);
        assert!(t.hit(a).is_some(), "b's remove left a's slot");
        t.insert(b, 0x0A00_0000);
        assert_eq!(t.hit(a), None, "b took the slot");
        assert_eq!(t.hit(b + 8), Some(0x0A00_0008 as *mut u8));
        t.remove(b);
        assert_eq!(t.hit(b), None);
    }

    #[test]
    fn high_words_past_the_limit_are_never_served() {
        let mut t = HitTable::new();
        let a = (u64::from(HIT_HI_LIMIT) << 32) | 0x0100_0000;
        t.insert(a, 0x0700_0000);
        assert_eq!(t.hit(a), None);
        assert_eq!(t, HitTable::new(), "nothing written");
        // The highest index the table has: top 255, hi 255.
        let top = (255u64 << 32) | 0xFF00_0000;
        t.insert(top, 0x0700_0000);
        assert_eq!(t.hit(top + 4), Some(0x0700_0004 as *mut u8));
        t.clear();
        assert_eq!(t, HitTable::new());
    }
}
