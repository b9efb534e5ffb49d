//! The simulator's sanitizer (SPEC §12): what each core reads and writes of
//! the tensors a run watches, checked as it happens, in the one execution.
//!
//! The simulator registers the run's inputs (const), its output and every
//! `torch::empty` tensor a kernel makes; the runtime reports each SoC range
//! it copies (`Hal::note_soc_read`/`note_soc_write`/`note_soc_copy`) and the
//! host accessors each element they load or store. Per element of a
//! written region the sanitizer keeps which cores wrote it (a bit each),
//! and so finds:
//!
//! - a read of an element nothing wrote (an uninitialised read), confirmed
//!   by the element still holding the fill the simulator put there, so a
//!   write the hooks did not see (a raw pointer store) is never reported;
//! - a read of an element another core wrote in the same run (no barrier
//!   between cores on the device: what it reads depends on timing);
//! - elements two cores wrote (every pair, with the element ranges);
//! - a write into an input.
//!
//! Each kind is counted per region and core, with the first element.

use crate::soc::MockSoc;
use std::string::String;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::vec::Vec;

mod cross_writes;
mod finding;
pub mod frames;
mod input_pages;
mod states;
mod stripes;
pub use finding::{Finding, FindingKind, RegionKind, MAX_RANGES};
pub use input_pages::{hashes_at, page_hashes, InputHashes, PAGE};
use states::{Spare, States};
use stripes::{mark, Held, Stripes};

/// An element no one wrote.
pub const UNWRITTEN: u16 = 0;
/// An element found changed though no hook saw the write: initialised,
/// writer unknown.
pub const UNKNOWN_WRITER: u16 = 1 << 8;
/// The writer bits (bit `c`: core `c` wrote the element).
const CORE_BITS: u16 = 0xFF;

/// A watched SoC range.
#[derive(Debug)]
struct Region {
    base: u64,
    len: u64,
    elem: u64,
    name: String,
    kind: RegionKind,
    /// The byte every element was filled with when watched (what an
    /// unwritten element still holds).
    fill: u8,
    /// Per element: the writer bits, or [`UNKNOWN_WRITER`] (empty for an
    /// input).
    state: States,
    /// Set once the region is in [`Sanitizer`]'s `lent` list (this run).
    lent: AtomicBool,
    /// Elements a [`write`](Sanitizer::write) took from [`UNWRITTEN`] to
    /// a writer: while `counted` holds (no other path changed a state),
    /// every element is written exactly when this is the element count,
    /// which [`all_written`](Sanitizer::all_written) then need not scan
    /// for (a 1 Mi-element output: ~0.15 ms of a 1.7 ms Python call).
    named: AtomicU64,
    /// No state changed but by `write` (a read that found an element
    /// written unseen, a copy, or states lent to the host accessor, which
    /// changes them in place, clear it).
    counted: AtomicBool,
    /// One lock per stripe of states, held while a hook changes states
    /// of several writers' run ([`Sanitizer::hold`]).
    stripes: Stripes,
}

impl Region {
    /// The elements `[first, last]` that `[addr, addr + len)` touches.
    fn elements(&self, addr: u64, len: u64) -> Option<(u64, u64)> {
        let end = addr.checked_add(len.max(1))?;
        if end <= self.base || addr >= self.base + self.len {
            return None;
        }
        let lo = addr.max(self.base) - self.base;
        let hi = end.min(self.base + self.len) - self.base - 1;
        // Every dtype's size is a power of two: a shift, not two 64-bit
        // divisions, on the path of every element an accessor touches.
        if self.elem.is_power_of_two() {
            let s = self.elem.trailing_zeros();
            return Some((lo >> s, hi >> s));
        }
        Some((lo / self.elem, hi / self.elem))
    }
}

/// The lowest core in writer bits `bits`.
fn lowest(bits: u16) -> u32 {
    bits.trailing_zeros()
}

/// The regions at one moment: cores keep one and check the generation.
type Snapshot = Arc<Vec<Arc<Region>>>;

/// The sanitizer of one SoC.
#[derive(Debug, Default)]
pub struct Sanitizer {
    /// The states of the last large region that ended, for the next. The
    /// first field, so dropped first: regions that end with the sanitizer
    /// find no spare, and their states are not zeroed for nothing.
    spare: Spare,
    regions: RwLock<Snapshot>,
    generation: AtomicU64,
    on: AtomicBool,
    /// Only one thread writes while watching (a one-core run): an
    /// element's writers are set by a load and a store, not a locked
    /// read-modify-write (most of a large output's cost).
    one_writer: AtomicBool,
    /// The cores that wrote a watched element since [`begin`](Self::begin):
    /// with fewer than two, no element has two writers, and the end of
    /// the run does not look for any.
    writers: AtomicU16,
    findings: Mutex<Vec<Finding>>,
    /// The regions whose element states were lent out as raw pointers
    /// ([`lend_states`](Self::lend_states)) this run: kept alive until the
    /// next [`begin`](Self::begin) even if unwatched meanwhile.
    lent: Mutex<Vec<Arc<Region>>>,
    /// The inputs' page hashes, taken at the run's first raw pointer.
    taken: input_pages::Taken,
}

/// What a run's sanitizer watches of a tensor's range, for the host
/// accessor's fast path ([`Sanitizer::lend_states`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watched {
    /// Nothing watched there (or no run watched): no check on any access.
    No,
    /// Inside an input: loads unchecked, every store a finding (the hook's).
    Input,
    /// Inside one output or scratch region with the range's element size:
    /// `states` points to the state of the range's first element (bits of
    /// [`AtomicU16`], as the sanitizer keeps them); `me` is the core's
    /// writer bit. Lent only in a one-writer run: no other thread writes
    /// the states meanwhile.
    States { states: *const AtomicU16, me: u16 },
    /// Anything else (several regions, a partial overlap, another element
    /// size): every access through the sanitizer's own checks.
    Mixed,
}

/// A core's view of the regions, refreshed when the generation moves.
#[derive(Debug, Default)]
pub struct CoreView {
    generation: u64,
    regions: Snapshot,
}

impl Sanitizer {
    /// Starts a run: no region, no finding, watching.
    pub fn begin(&self) {
        *self.regions.write().unwrap_or_else(|e| e.into_inner()) = Arc::default();
        self.findings.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.lent.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.writers.store(0, Ordering::Relaxed);
        self.taken.reset();
        self.generation.fetch_add(1, Ordering::Release);
        self.on.store(true, Ordering::Release);
    }

    /// Kernel code is about to get a pointer whose accesses no hook sees
    /// (`Hal::note_raw_pointer`): at the run's first, the page hashes of
    /// every input as it holds now (the caller waits for them).
    pub fn raw_pointer(&self, soc: &MockSoc) {
        if !self.is_on() {
            return;
        }
        self.taken.once(|| {
            let regions = Arc::clone(&self.regions.read().unwrap_or_else(|e| e.into_inner()));
            regions
                .iter()
                .filter(|r| r.kind == RegionKind::Input)
                .map(|r| InputHashes { name: r.name.clone(), base: r.base, len: r.len, pages: hashes_at(soc, r.base, r.len) })
                .collect()
        });
    }

    /// The inputs' page hashes the run took at its first raw pointer
    /// ([`raw_pointer`](Self::raw_pointer)); `None` when it made none, so
    /// no store into an input can have gone unseen. Once per run.
    pub fn raw_pointer_hashes(&self) -> Option<Vec<InputHashes>> {
        self.taken.take()
    }

    /// Stops watching (until the next [`begin`](Self::begin)); returns
    /// what was found, the cross-core writes last (every pair of cores,
    /// in order, with the elements both wrote).
    pub fn end(&self) -> Vec<Finding> {
        self.on.store(false, Ordering::Release);
        let mut f = core::mem::take(&mut *self.findings.lock().unwrap_or_else(|e| e.into_inner()));
        let regions = Arc::clone(&self.regions.read().unwrap_or_else(|e| e.into_inner()));
        // A read of an element another core wrote later in the run is a
        // race (it read before the write this time), not memory no one
        // writes: named as such, with the writer.
        for x in f.iter_mut().filter(|x| x.kind == FindingKind::UninitialisedRead) {
            let s = regions.iter().find(|r| r.name == x.region).and_then(|r| r.state.get(x.first as usize)).map_or(UNWRITTEN, |s| s.load(Ordering::Relaxed));
            let others = s & CORE_BITS & !(1 << x.cpu);
            if others != 0 {
                x.kind = FindingKind::CrossCoreRead;
                x.other = Some(lowest(others));
            }
        }
        if self.writers.load(Ordering::Relaxed).count_ones() >= 2 {
            for r in regions.iter().filter(|r| r.kind != RegionKind::Input) {
                f.extend(cross_writes::cross_writes(r));
            }
        }
        f
    }

    /// Notes that core bits `me` wrote a watched element (read first: the
    /// locked or happens once per core and run).
    fn wrote(&self, me: u16) {
        if self.writers.load(Ordering::Relaxed) & me != me {
            self.writers.fetch_or(me, Ordering::Relaxed);
        }
    }

    /// Whether every element of the region at `base` was written where a
    /// hook saw it, by a known core (no [`UNWRITTEN`], no
    /// [`UNKNOWN_WRITER`]); `None` for no such region. Answered in place,
    /// without the copy [`written_by`](Self::written_by) makes.
    pub fn all_written(&self, base: u64) -> Option<bool> {
        let g = self.regions.read().unwrap_or_else(|e| e.into_inner());
        let r = g.iter().find(|r| r.base == base && r.kind != RegionKind::Input)?;
        // Counted exactly: every element went from unwritten to a writer.
        if r.counted.load(Ordering::Relaxed) && !r.lent.load(Ordering::Relaxed) && r.named.load(Ordering::Relaxed) == r.state.len() as u64 {
            return Some(true);
        }
        let unnamed = |s: u16| s == UNWRITTEN || s & UNKNOWN_WRITER != 0;
        if self.is_on() {
            return Some(!r.state.iter().any(|x| unnamed(x.load(Ordering::Relaxed))));
        }
        // SAFETY: AtomicU16 has u16's size and alignment; the sanitizer
        // is off (`end` ran after the run's cores returned), so no hook
        // writes a state while this plain view of them lives. A plain
        // scan, unlike one atomic load at a time, is vectorised: a large
        // output's 16 Mi states in a few ms, not tens.
        let plain = unsafe { core::slice::from_raw_parts(r.state.as_ptr().cast::<u16>(), r.state.len()) };
        // Whole chunks folded without a branch per element.
        Some(!plain.chunks(4096).any(|c| c.iter().fold(false, |a, &s| a | unnamed(s))))
    }

    /// Says whether only one thread writes until the next call (a
    /// one-core run: the host waits while its core runs). Set it false
    /// whenever two threads may write watched memory at once.
    pub fn set_one_writer(&self, one: bool) {
        self.one_writer.store(one, Ordering::Relaxed);
    }

    /// Whether a run is being watched.
    #[inline]
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Watches `[base, base + len)` of `elem`-byte elements, filled with
    /// `fill`, as `kind` under `name`. A region over the same base
    /// replaces the old one (a heap block handed out again).
    pub fn watch(&self, base: u64, len: u64, elem: u64, fill: u8, kind: RegionKind, name: String) {
        if len == 0 || !self.is_on() {
            return;
        }
        let elem = elem.max(1);
        let n = if kind == RegionKind::Input { 0 } else { len.div_ceil(elem) as usize };
        let r = Arc::new(Region {
            base,
            len,
            elem,
            name,
            kind,
            fill,
            state: States::new(n, &self.spare),
            lent: AtomicBool::new(false),
            named: AtomicU64::new(0),
            counted: AtomicBool::new(true),
            stripes: Stripes::for_states(n),
        });
        let mut g = self.regions.write().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<Arc<Region>> = g.iter().filter(|x| x.base != base).cloned().collect();
        v.push(r);
        *g = Arc::new(v);
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Stops watching the region at `base` (a tensor freed).
    pub fn unwatch(&self, base: u64) {
        let mut g = self.regions.write().unwrap_or_else(|e| e.into_inner());
        if g.iter().any(|r| r.base == base) {
            *g = Arc::new(g.iter().filter(|x| x.base != base).cloned().collect());
            self.generation.fetch_add(1, Ordering::Release);
        }
    }

    /// `view` brought up to date.
    fn refresh<'v>(&self, view: &'v mut CoreView) -> &'v [Arc<Region>] {
        let g = self.generation.load(Ordering::Acquire);
        if g != view.generation {
            view.regions = Arc::clone(&self.regions.read().unwrap_or_else(|e| e.into_inner()));
            view.generation = g;
        }
        &view.regions
    }

    /// Records a finding of `kind` on `r` by `cpu` (merged with one of the
    /// same kind, region and core).
    pub fn record_on(&self, kind: FindingKind, region: &str, cpu: u32, other: Option<u32>, element: u64, count: u64) {
        let merged = |f: &mut Vec<Finding>| match f.iter_mut().find(|x| x.kind == kind && x.cpu == cpu && x.region == region) {
            Some(x) => {
                x.count += count;
                x.first = x.first.min(element);
                true
            }
            None => false,
        };
        if merged(&mut self.findings.lock().unwrap_or_else(|e| e.into_inner())) {
            return;
        }
        // A new finding: where it was made, taken outside the lock.
        let pcs = frames::here();
        let mut f = self.findings.lock().unwrap_or_else(|e| e.into_inner());
        if !merged(&mut f) {
            f.push(Finding { kind, region: region.into(), cpu, other, first: element, count, ranges: Vec::new(), pcs });
        }
    }

    fn record(&self, kind: FindingKind, r: &Region, cpu: u32, other: Option<u32>, element: u64, count: u64) {
        self.record_on(kind, &r.name, cpu, other, element, count);
    }

    /// Per element of the region at `base`, as the last run left it: the
    /// writer bits ([`UNWRITTEN`] when no hook saw a write), or
    /// [`UNKNOWN_WRITER`]. `None` for no such region.
    pub fn written_by(&self, base: u64) -> Option<Vec<u16>> {
        let g = self.regions.read().unwrap_or_else(|e| e.into_inner());
        let r = g.iter().find(|r| r.base == base && r.kind != RegionKind::Input)?;
        Some(r.state.iter().map(|x| x.load(Ordering::Relaxed)).collect())
    }

    /// What core `cpu`'s accessor of `elem`-byte elements over SoC `[addr,
    /// addr + len)` (`len` > 0) needs to check its accesses in place, as
    /// [`read`](Self::read) and [`write`](Self::write) would: the states
    /// of its elements when one region holds the whole range. A region
    /// lent out stays alive until the next [`begin`](Self::begin), so the
    /// pointer outlives an unwatch within the run. With `store`, `cpu`
    /// counts as a writer of the run (what a first write would note).
    pub fn lend_states(&self, view: &mut CoreView, cpu: u32, addr: u64, len: u64, elem: u64, store: bool) -> Watched {
        if !self.is_on() || len == 0 || elem == 0 {
            return Watched::No;
        }
        let mut hit = self.refresh(view).iter().filter(|r| r.elements(addr, len).is_some());
        let (Some(r), None) = (hit.next(), hit.next()) else {
            return if self.refresh(view).iter().any(|r| r.elements(addr, len).is_some()) { Watched::Mixed } else { Watched::No };
        };
        if r.kind == RegionKind::Input {
            return Watched::Input;
        }
        let inside = addr >= r.base && addr.checked_add(len).is_some_and(|end| end <= r.base + r.len);
        if !inside || r.elem != elem || !(addr - r.base).is_multiple_of(elem) {
            return Watched::Mixed;
        }
        // States change only under the stripe locks while several
        // threads write (`hold`): lent out only to the one writer.
        if !self.one_writer.load(Ordering::Relaxed) {
            return Watched::Mixed;
        }
        let states = r.state[((addr - r.base) / elem) as usize..].as_ptr();
        // Kept once per run (a region is watched within one run): an
        // accessor made per row takes no lock.
        if !r.lent.swap(true, Ordering::Relaxed) {
            self.lent.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::clone(r));
        }
        let me = 1u16 << cpu;
        if store {
            self.wrote(me);
        }
        Watched::States { states, me }
    }

    /// Core `cpu` read SoC `[addr, addr + len)`.
    pub fn read(&self, soc: &MockSoc, view: &mut CoreView, cpu: u32, addr: u64, len: u64) {
        if !self.is_on() {
            return;
        }
        let me = 1u16 << cpu;
        for r in self.refresh(view) {
            let Some((lo, hi)) = r.elements(addr, len) else { continue };
            if r.kind == RegionKind::Input {
                continue;
            }
            let (mut unwritten, mut first_unwritten) = (0u64, None);
            for e in lo..=hi {
                let s = r.state[e as usize].load(Ordering::Relaxed);
                if s == UNWRITTEN {
                    if still_filled(soc, r, e) {
                        unwritten += 1;
                        first_unwritten.get_or_insert(e);
                    } else {
                        // Written where no hook saw it (a raw pointer).
                        let _held = self.hold(r, e, e);
                        r.counted.store(false, Ordering::Relaxed);
                        mark(&r.state[e as usize], UNKNOWN_WRITER);
                    }
                } else if s & CORE_BITS & !me != 0 {
                    self.record(FindingKind::CrossCoreRead, r, cpu, Some(lowest(s & CORE_BITS & !me)), e, 1);
                }
            }
            if let Some(e) = first_unwritten {
                self.record(FindingKind::UninitialisedRead, r, cpu, None, e, unwritten);
            }
        }
    }

    /// Core `cpu` wrote SoC `[addr, addr + len)`.
    pub fn write(&self, view: &mut CoreView, cpu: u32, addr: u64, len: u64) {
        if !self.is_on() {
            return;
        }
        let me = 1u16 << cpu;
        for r in self.refresh(view) {
            let Some((lo, hi)) = r.elements(addr, len) else { continue };
            if r.kind == RegionKind::Input {
                self.record(FindingKind::InputWritten, r, cpu, None, lo, hi - lo + 1);
                continue;
            }
            self.wrote(me);
            let _held = self.hold(r, lo, hi);
            let fresh = self.mark_range(&r.state[lo as usize..=hi as usize], me);
            r.named.fetch_add(fresh, Ordering::Relaxed);
        }
    }

    /// Core `cpu` copied SoC `[src, src + len)` to `[dst, dst + len)`: a
    /// destination element is written by `cpu` where its source element
    /// was written, and holds nothing anyone wrote where it was not (a
    /// returned tensor copied over the output is checked where it is
    /// read, not at the copy). The source is not read in the sanitizer's
    /// sense.
    pub fn copy(&self, view: &mut CoreView, cpu: u32, dst: u64, src: u64, len: u64) {
        if !self.is_on() || len == 0 {
            return;
        }
        let regions = self.refresh(view).to_vec();
        let from = regions.iter().find(|r| r.kind != RegionKind::Input && r.elements(src, len).is_some());
        let Some(from) = from else {
            return self.write(view, cpu, dst, len);
        };
        for r in &regions {
            let Some((lo, hi)) = r.elements(dst, len) else { continue };
            if r.kind == RegionKind::Input {
                self.record(FindingKind::InputWritten, r, cpu, None, lo, hi - lo + 1);
                continue;
            }
            let _held = self.hold(r, lo, hi);
            r.counted.store(false, Ordering::Relaxed);
            if self.copy_aligned(r, from, cpu, (dst, src, len), (lo, hi)) {
                continue;
            }
            for e in lo..=hi {
                let at = r.base + e * r.elem;
                // The source element this destination element came from.
                let s = from
                    .elements(src + (at.max(dst) - dst), 1)
                    .map_or(UNKNOWN_WRITER, |(se, _)| from.state.get(se as usize).map_or(UNKNOWN_WRITER, |x| x.load(Ordering::Relaxed)));
                if s == UNWRITTEN {
                    r.state[e as usize].store(UNWRITTEN, Ordering::Relaxed);
                } else {
                    self.wrote(1 << cpu);
                    mark(&r.state[e as usize], 1 << cpu);
                }
            }
        }
    }
}

impl Sanitizer {
    /// The stripes of `r` over states `[lo, hi]`, locked in order, while
    /// several threads may write states (none needed with one writer):
    /// every change of a state is made under them, so a load and a store
    /// replace a locked read-modify-write per element (most of an 8-core
    /// run's time), and no change is lost.
    fn hold<'r>(&self, r: &'r Region, lo: u64, hi: u64) -> Option<Held<'r>> {
        if self.one_writer.load(Ordering::Relaxed) {
            return None;
        }
        r.stripes.hold(lo, hi)
    }

    /// Adds writer bits `bits` to each state of `states` (a contiguous
    /// range of elements one hook wrote), under [`hold`](Self::hold):
    /// how many were [`UNWRITTEN`] before.
    fn mark_range(&self, states: &[AtomicU16], bits: u16) -> u64 {
        stripes::mark_range(states, bits, self.one_writer.load(Ordering::Relaxed))
    }

    /// [`copy`](Self::copy) of `(dst, src, len)` into destination elements
    /// `[lo, hi]` of `r`, from `from`, as a slice operation when each
    /// destination element comes from exactly one source element (same
    /// element size, both ranges element-aligned, every source element in
    /// `from`); false (nothing done) otherwise, for the element loop.
    fn copy_aligned(&self, r: &Region, from: &Region, cpu: u32, (dst, src, len): (u64, u64, u64), (lo, hi): (u64, u64)) -> bool {
        let e = r.elem;
        let aligned = |at: u64, base: u64| at >= base && (at - base).is_multiple_of(e);
        if from.elem != e || !aligned(dst, r.base) || !aligned(src, from.base) || !len.is_multiple_of(e) {
            return false;
        }
        let (n, s0) = (hi - lo + 1, (src - from.base) / e);
        let Some(source) = from.state.get(s0 as usize..(s0 + n) as usize) else { return false };
        let target = &r.state[lo as usize..=hi as usize];
        // Runs of written and unwritten source elements, each a slice op.
        let mut i = 0;
        while i < source.len() {
            let unwritten = source[i].load(Ordering::Relaxed) == UNWRITTEN;
            let run = source[i..].iter().position(|x| (x.load(Ordering::Relaxed) == UNWRITTEN) != unwritten).unwrap_or(source.len() - i);
            let t = &target[i..i + run];
            if unwritten {
                t.iter().for_each(|x| x.store(UNWRITTEN, Ordering::Relaxed));
            } else {
                self.wrote(1 << cpu);
                self.mark_range(t, 1 << cpu);
            }
            i += run;
        }
        true
    }
}

/// Whether element `e` of `r` still holds the region's fill.
fn still_filled(soc: &MockSoc, r: &Region, e: u64) -> bool {
    let at = r.base + e * r.elem;
    let n = r.elem.min(r.base + r.len - at) as usize;
    let mut b = [0u8; 16];
    let b = &mut b[..n.min(16)];
    soc.read(at, b).is_ok() && b.iter().all(|&x| x == r.fill)
}

#[cfg(test)]
mod tests;
