//! The translator: the context kernels hold, the mapping generation and
//! the hit table, kept consistent with each other (every change of a
//! record goes through here), plus the hit/miss diagnostics.

use super::{region_mask, sbuf_bytes_on, TranslationCtx, EMPTY_TAG, RECORDS, SBUF_RECORD, SCRATCH_RECORD};
use crate::error::{Error, Result};
use crate::hit_table::{HitTable, GRANULE_SHIFT};
use core::mem::{offset_of, size_of};
use neuron_hal::platform::{DYNAMIC_WINDOWS, DYNAMIC_WINDOW_SIZE, PINNED_WINDOW_SIZE};
use neuron_hal::Hal;
use static_assertions::const_assert_eq;

/// The generation a translator stays at once it has counted `u32::MAX`
/// changes: no pointer found at it may be cached (a cache filled earlier
/// holds a smaller value, so it no longer matches).
pub const GENERATION_EXHAUSTED: u32 = u32::MAX;

/// The mapping generation after `g`. On the host it is drawn from one
/// process-wide counter: simulated cores come and go, and a new core's
/// translator may sit where a dropped one was, so no two translators may
/// ever share a generation (an accessor kept past its core must not find
/// its stale pointer valid). On the device each core's translator lives
/// as long as the image, and its own count suffices.
fn next_generation(g: u32) -> u32 {
    #[cfg(not(target_arch = "xtensa"))]
    {
        use core::sync::atomic::{AtomicU32, Ordering};
        // Above every translator's starting value (1).
        static NEXT: AtomicU32 = AtomicU32::new(2);
        let _ = g;
        // Saturating: once exhausted, every translator stays exhausted.
        let mut v = NEXT.load(Ordering::Relaxed);
        loop {
            match NEXT.compare_exchange_weak(v, v.saturating_add(1), Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return v,
                Err(now) => v = now,
            }
        }
    }
    #[cfg(target_arch = "xtensa")]
    {
        g.saturating_add(1)
    }
}

/// Hit and miss counts per record (diagnostics; feature `stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct TranslateStats {
    /// Hits per record.
    pub hits: [u64; RECORDS],
    /// Misses that installed into each dynamic record.
    pub misses: [u64; DYNAMIC_WINDOWS],
    /// Translations refused (address no window can map).
    pub refused: u64,
}

/// What a kernel's `ctx` pointer points to: the context, the mapping
/// generation, then the hit table. The device's C++ accessor reads the hit
/// table in place through it (`neuron_translator_abi` in the C header, laid out
/// by the C compiler for the same target), so this, not the translator's
/// private fields, is the ABI; its layout is asserted below. Fields are
/// the runtime's to change: every change of a record goes through the
/// translator, which moves the hit table with it.
#[derive(Debug)]
#[repr(C)]
pub struct TranslatorAbi {
    /// The C-visible context (first: its address is the `ctx` pointer).
    pub(crate) ctx: TranslationCtx,
    /// Bumped whenever a record's mapping changes (init, every install):
    /// a pointer found through the context while it had this value still
    /// maps the same memory as long as it is unchanged. Starts at 1 (0 is
    /// free for "no generation") and saturates at [`GENERATION_EXHAUSTED`]
    /// instead of wrapping: from then on no pointer may be cached.
    /// (Right after the context, in what is padding on the device.)
    pub(crate) generation: u32,
    /// The records' granules by address (see [`crate::hit_table`]): the
    /// device's in-place hit reads it at a small offset from the `ctx`
    /// pointer it is given. Changed with the records (init, every
    /// install) and refilled by the in-place probe on a scan hit; it never
    /// maps what the records do not.
    pub(crate) hits: HitTable,
}

/// The ABI part plus the diagnostics. The ABI part comes first, so the
/// `ctx` pointer kernels hold is also a pointer to this.
#[derive(Debug)]
#[repr(C)]
pub struct Translator {
    /// What kernels and the C++ accessor see (see [`TranslatorAbi`]).
    abi: TranslatorAbi,
    /// Counters (updated only with the `stats` feature).
    stats: TranslateStats,
    /// Re-miss tracking (updated only with the `stats` feature).
    thrash: crate::thrash::ThrashStats,
    ready: bool,
}

// The context is the ABI part's first field, and that the translator's:
// the `ctx` pointer kernels hold is the translator's address
// ([`Translator::ctx_of`]).
const_assert_eq!(offset_of!(Translator, abi), 0);
const_assert_eq!(offset_of!(TranslatorAbi, ctx), 0);
const_assert_eq!(offset_of!(TranslatorAbi, generation), size_of::<TranslationCtx>());

/// Where the hit table starts from the context's address on the device
/// (32-bit pointers), whose slots are [`DEVICE_HIT_SLOT_BYTES`] each: the
/// C++ accessor's dynamic-window path reads the table in place there
/// (`NEURON_HIT_TABLE_OFFSET` and `NEURON_HIT_SLOT_BYTES` in the C header,
/// which tests/cpp_kernels.rs checks against these).
pub const DEVICE_HIT_TABLE_OFFSET: usize = 176;
/// Bytes of a hit-table slot on the device: the tag, then the delta.
pub const DEVICE_HIT_SLOT_BYTES: usize = 8;

#[cfg(target_pointer_width = "32")]
const_assert_eq!(offset_of!(TranslatorAbi, hits), DEVICE_HIT_TABLE_OFFSET);
#[cfg(target_pointer_width = "32")]
const_assert_eq!(size_of::<crate::hit_table::HitSlot>(), DEVICE_HIT_SLOT_BYTES);

impl Default for Translator {
    fn default() -> Self {
        Self::new()
    }
}

impl Translator {
    /// An uninitialised translator: every translate is refused.
    pub const fn new() -> Self {
        Self {
            abi: TranslatorAbi { ctx: TranslationCtx::empty(), generation: 1, hits: HitTable::new() },
            stats: TranslateStats { hits: [0; RECORDS], misses: [0; DYNAMIC_WINDOWS], refused: 0 },
            thrash: crate::thrash::ThrashStats::new(),
            ready: false,
        }
    }

    /// Writes [`Translator::new`]`()` into `*p` field by field, the hit
    /// table slot by slot, so that no 4 KiB image of an empty table is
    /// built or carried in the binary (the state's in-place construction).
    ///
    /// # Safety
    /// `p` is valid for writes of a `Translator` and aligned; no reference
    /// to `*p` is live.
    pub unsafe fn write_new(p: *mut Self) {
        let Self { abi: TranslatorAbi { ctx, generation, hits: _ }, stats, thrash, ready } = Self::new();
        // SAFETY: the caller's contract: every field place may be written.
        unsafe {
            core::ptr::addr_of_mut!((*p).abi.ctx).write(ctx);
            core::ptr::addr_of_mut!((*p).abi.generation).write(generation);
            HitTable::write_empty(core::ptr::addr_of_mut!((*p).abi.hits));
            core::ptr::addr_of_mut!((*p).stats).write(stats);
            core::ptr::addr_of_mut!((*p).thrash).write(thrash);
            core::ptr::addr_of_mut!((*p).ready).write(ready);
        }
    }

    /// `_init_translate_ctx`: sets up the records once; later calls keep
    /// the windows as they are (the prologue runs on every invocation).
    pub(crate) fn init<H: Hal>(&mut self, hal: &H) {
        if !self.ready {
            self.abi.ctx.reset(hal);
            self.abi.hits.clear();
            // The pinned windows' whole granules (SBUF's up to its end).
            let p = hal.platform();
            for record in [SBUF_RECORD, SCRATCH_RECORD] {
                let base = self.abi.ctx.records.get(record).map_or(EMPTY_TAG, |r| r.ptr);
                for g in 0..PINNED_WINDOW_SIZE >> GRANULE_SHIFT {
                    self.fill(p, record, base.wrapping_add(g << GRANULE_SHIFT));
                }
            }
            self.abi.generation = next_generation(self.abi.generation);
            self.ready = true;
        }
    }

    /// The context (SPEC §3), read-only: its records change only through
    /// the translator (init, a miss), which keeps the hit table with them.
    #[inline(always)]
    pub fn ctx(&self) -> &TranslationCtx {
        &self.abi.ctx
    }

    /// The context pointer kernels hold (`Q7PtrType.ctx`).
    #[inline(always)]
    pub fn ctx_ptr(&mut self) -> *mut TranslationCtx {
        core::ptr::addr_of_mut!(self.abi.ctx)
    }

    /// The context of the translator at `t`, without dereferencing it:
    /// the context is the first field.
    #[inline(always)]
    pub const fn ctx_of(t: *const Self) -> *const TranslationCtx {
        t.cast()
    }

    /// Hit and miss counts (with the `stats` feature).
    #[inline(always)]
    pub fn stats(&self) -> &TranslateStats {
        &self.stats
    }

    /// Re-miss tracking (with the `stats` feature).
    pub fn thrash(&self) -> &crate::thrash::ThrashStats {
        &self.thrash
    }

    /// Zeroes the counts and the re-miss tracking (the simulator, at the
    /// start of a run); the mapping is untouched.
    pub fn restart_stats(&mut self) {
        self.stats = TranslateStats::default();
        self.thrash = crate::thrash::ThrashStats::new();
    }

    /// Counts `n` hits on `record` (hits made in place and counted apart
    /// until now; see `CoreState::count_translate_hits`). A record past
    /// the last is not counted.
    pub fn count_hits(&mut self, record: usize, n: u64) {
        if let Some(h) = self.stats.hits.get_mut(record) {
            *h += n;
        }
    }

    /// Counts a hit on `record` in place (the host's inline hit paths,
    /// which hold the translator only as a raw pointer; the accessor's
    /// leaf counts every element, so no bound test here).
    ///
    /// # Safety
    /// `t` points to a live `Translator` to which no reference exists
    /// during the call, and `record < RECORDS`.
    #[inline(always)]
    pub unsafe fn count_hit_in_place(t: *mut Self, record: usize) {
        // SAFETY: the caller's contract: `record` indexes the counters, and
        // nothing else reaches them during the increment.
        unsafe { *core::ptr::addr_of_mut!((*t).stats.hits).cast::<u64>().add(record) += 1 };
    }

    /// Whether `init` ran.
    pub fn is_ready(&self) -> bool {
        self.ready
    }

    /// The mapping generation (see the field): changes whenever a record
    /// may show different memory.
    #[inline]
    pub fn generation(&self) -> u32 {
        self.abi.generation
    }

    /// [`Translator::generation`] read in place, without forming a
    /// reference (the device's and host's inline hit paths, which hold the
    /// translator only as a raw pointer).
    ///
    /// # Safety
    /// `t` points to a live `Translator` that nothing mutates during the
    /// read.
    #[inline(always)]
    pub unsafe fn generation_in_place(t: *const Self) -> u32 {
        // SAFETY: the caller's contract; a plain field read.
        unsafe { core::ptr::addr_of!((*t).abi.generation).read() }
    }

    /// The hit table's answer for `addr` (no scan; `None` says nothing
    /// about the records).
    #[inline(always)]
    pub fn table_hit(&self, addr: u64) -> Option<*mut u8> {
        self.abi.hits.hit(addr)
    }

    /// [`Translator::table_hit`] read in place (the device's hit path,
    /// which holds the translator only as a raw pointer).
    ///
    /// # Safety
    /// `t` points to a live `Translator` that nothing mutates during the
    /// read.
    #[inline(always)]
    pub unsafe fn table_hit_in_place(t: *const Self, addr: u64) -> Option<*mut u8> {
        // SAFETY: the caller's contract: a shared borrow of the table for
        // the duration of the read.
        unsafe { (*core::ptr::addr_of!((*t).abi.hits)).hit(addr) }
    }

    /// Puts the granule of `addr` in the hit table when `record` shows the
    /// whole of it (SBUF's window only up to SBUF's end). `record` must
    /// map `addr`.
    fn fill(&mut self, p: &neuron_hal::Platform, record: usize, addr: u64) {
        Self::fill_table(&mut self.abi.hits, &self.abi.ctx, p, record, addr);
    }

    fn fill_table(hits: &mut HitTable, ctx: &TranslationCtx, p: &neuron_hal::Platform, record: usize, addr: u64) {
        let Some(r) = ctx.records.get(record) else {
            return;
        };
        let last = addr | (DYNAMIC_WINDOW_SIZE - 1);
        if last & r.mask != r.ptr || Self::past_sbuf_on(ctx, || p, record, last) {
            return;
        }
        let granule = addr & !(DYNAMIC_WINDOW_SIZE - 1);
        hits.insert(addr, (r.window as usize).wrapping_add((granule & !r.mask) as usize));
    }

    /// The scan's answer put in the hit table: the device's in-place probe
    /// found `addr` through `record` past the table (a granule sharing its
    /// slot was there, or a pinned granule the last install displaced).
    /// The mapping and the generation are unchanged.
    ///
    /// # Safety
    /// `t` points to a live `Translator` to which no reference exists
    /// during the call (it borrows the table mutably and the context
    /// shared, disjoint fields).
    pub unsafe fn refill_in_place(t: *mut Self, p: &neuron_hal::Platform, record: usize, addr: u64) {
        // SAFETY: the caller's contract; the two borrows are of disjoint
        // fields.
        unsafe {
            let hits = &mut *core::ptr::addr_of_mut!((*t).abi.hits);
            let ctx = &*core::ptr::addr_of!((*t).abi.ctx);
            Self::fill_table(hits, ctx, p, record, addr);
        }
    }

    /// `neuron_translate`: the pointer through which the core reaches
    /// SoC address `addr`, programming a dynamic window on a miss.
    #[inline]
    pub(crate) fn translate<H: Hal>(&mut self, hal: &H, addr: u64) -> Result<*mut u8> {
        if let Some((i, p)) = self.abi.ctx.lookup(addr) {
            if Self::past_sbuf(&self.abi.ctx, hal, i, addr) {
                return self.refuse();
            }
            #[cfg(feature = "stats")]
            {
                self.stats.hits[i] += 1;
            }
            return Ok(p);
        }
        self.miss(hal, addr)
    }

    /// A hit in the pinned SBUF window past the end of SBUF: the window is
    /// 64 MiB but SBUF is smaller, so there it shows no memory (found by
    /// fuzzing). Pure arithmetic on the platform table.
    #[inline(always)]
    pub fn past_sbuf<H: Hal>(ctx: &TranslationCtx, hal: &H, record: usize, addr: u64) -> bool {
        Self::past_sbuf_on(ctx, || hal.platform(), record, addr)
    }

    /// [`Translator::past_sbuf`] with the platform table given by `p`,
    /// asked for only when `record` is SBUF's (on the host it is loads
    /// through the HAL, which every other record would pay for nothing).
    /// `record` must be the record that hit for `addr`.
    #[inline(always)]
    pub fn past_sbuf_on<'a>(ctx: &TranslationCtx, p: impl FnOnce() -> &'a neuron_hal::Platform, record: usize, addr: u64) -> bool {
        // `record` hit, so `addr - ptr` is below the 64 MiB window: the
        // low words alone give it.
        record == SBUF_RECORD && (addr as u32).wrapping_sub(ctx.records[SBUF_RECORD].ptr as u32) as u64 >= sbuf_bytes_on(p())
    }

    #[cold]
    fn refuse(&mut self) -> Result<*mut u8> {
        #[cfg(feature = "stats")]
        {
            self.stats.refused += 1;
        }
        Err(Error::AddressUnmapped)
    }

    /// The miss: `addr` is in no record (the caller looked it up, e.g.
    /// the device's in-place hit path). Checks the region and installs it.
    #[cold]
    pub(crate) fn miss<H: Hal>(&mut self, hal: &H, addr: u64) -> Result<*mut u8> {
        if !self.ready {
            return Err(Error::TranslateNotReady);
        }
        let p = hal.platform();
        // The region must lie in HBM as a whole: a window never shows a
        // region straddling the end of HBM.
        let region = addr & region_mask(DYNAMIC_WINDOW_SIZE);
        if !p.is_hbm(addr) || !p.is_hbm(region) {
            #[cfg(feature = "stats")]
            {
                self.stats.refused += 1;
            }
            return Err(Error::AddressUnmapped);
        }
        let (victim, evicted) = self.abi.ctx.install(hal, addr);
        // The granule the victim showed leaves the hit table with it.
        if let Some(old) = evicted {
            self.abi.hits.remove(old);
        }
        self.fill(p, victim, addr);
        self.abi.generation = next_generation(self.abi.generation);
        #[cfg(feature = "stats")]
        {
            self.stats.misses[victim] += 1;
            self.thrash.on_miss(self.abi.ctx.records[victim].ptr, evicted);
        }
        let r = &self.abi.ctx.records[victim];
        Ok((r.window + (addr & !r.mask)) as usize as *mut u8)
    }

    /// The record currently showing `addr`'s region, if any (no side effect).
    pub fn record_of(&self, addr: u64) -> Option<usize> {
        self.abi.ctx.lookup(addr).map(|(i, _)| i)
    }
}
