//! Host: the C++ element accessor's fast path (include/ATen/core/
//! TensorAccessor.h). Once per accessor the library lends it, in a
//! `NeuronHostElements`, what its per-element hooks would compute: the
//! pointer to the dynamic window that maps part of the tensor (with the
//! translator generation that keeps it valid, closed by any bind or
//! unbind on the thread, and the record's hit counters), and the sanitizer's per-element writer bits of
//! the tensor with this core's bit. An element then costs a few compares,
//! a counted hit and a plain access; anything the fast path does not
//! answer exactly (an element not written by this core alone, a store
//! into an input, another window) goes through `neuron_translate_load` /
//! `neuron_translate_store`, which report as before, and re-opens the
//! window for where it went. The device's accessor never calls this.

use crate::binding::{open_host_window, with_open_hal, HIT_LANES};
use core::cell::{Cell, UnsafeCell};
use core::ffi::c_void;
use neuron_hal::platform::DYNAMIC_WINDOW_SIZE;
use neuron_hal_mock::sanitizer::Watched;

/// What the C++ accessor's host fast path reads per element. An element at
/// SoC `a` is answered in place when `id` is the accessor's, `a - lo <
/// len` and `*open_generation == generation` (no entry point running, no
/// window reprogrammed since the window was opened; every bind and unbind
/// on the thread closes its entries, `len` 0, so an open entry's slot is
/// the bound core's), and the sanitizer allows it: `states` null, or (a
/// load) `states[e] == me` (written by this core alone), or (a store, not
/// into an input) after `states[e] |= me`, where `e = (a - lo) / elem`.
/// Its pointer is then `view + (a - base)` (the memory `nx + (a - lo)`
/// shows), one hit is counted in `lanes[e & lane_mask]`, as the
/// translate it stands for would, and a stack address below `sp_floor`
/// is noted in `*sp_low` (as the hook would). Layout fixed (asserted here and in the
/// C++ header).
#[repr(C)]
#[derive(Debug)]
pub struct NeuronHostElements {
    /// The core's open-generation word (0 while an entry point runs), and
    /// the translator generation of the window.
    pub open_generation: *const u32,
    pub generation: u32,
    /// This core's writer bit (0 when `states` is null).
    pub me: u16,
    /// 1: the tensor is an input; a store takes the hook (a finding).
    /// (States are lent to a run's one writer only: a store sets this
    /// core's bit with a load and a store, no atomic or.)
    pub input: u8,
    /// The window: SoC `[lo, lo + len)` of the tensor is at `nx` (`len`
    /// 0: none open).
    pub lo: u64,
    pub len: u64,
    pub nx: *mut u8,
    /// The window's record's cached-hit counters, `lane_mask + 1` of them.
    pub lanes: *mut u64,
    /// The sanitizer's writer bits per element of the tensor from `lo`
    /// (null: not watched, or an input).
    pub states: *mut u16,
    /// The core's lowest stack address seen (the stack rule).
    pub sp_low: *mut usize,
    /// The tensor's SoC range `[base, base + span)`.
    pub base: u64,
    pub span: u64,
    /// Which accessor owns this entry (entries are reused: a stale owner
    /// takes the hooks).
    pub id: u32,
    pub lane_mask: u16,
    /// 1: the window could not be re-opened: every access takes the hook.
    pub off: u8,
    /// log2 of the element size.
    pub elem_shift: u8,
    /// SoC `base` through the SoC's own view of the tensor's memory (the
    /// same pages every window onto it maps): an element the window
    /// answers is at `view + (a - base)`, an address fixed for the
    /// accessor's life, so its loop indexes from a pointer it keeps in a
    /// register instead of loading the window's per element (the load
    /// of `nx` through the entry was on the path to every element's
    /// value).
    pub view: *mut u8,
    /// A stack address at or above `*sp_low` while the entry is open:
    /// set from it when the window opens, and the slot's word only falls
    /// while its core is bound (it is reset between runs, with the core
    /// unbound, and every bind and unbind closes the entry). An element
    /// accessed from at or above it has no depth to note: one compare
    /// with a field of the entry instead of a load through `sp_low`.
    pub sp_floor: usize,
}

const _: () = {
    assert!(core::mem::size_of::<NeuronHostElements>() == 104);
    assert!(core::mem::offset_of!(NeuronHostElements, generation) == 8);
    assert!(core::mem::offset_of!(NeuronHostElements, me) == 12);
    assert!(core::mem::offset_of!(NeuronHostElements, input) == 14);
    assert!(core::mem::offset_of!(NeuronHostElements, lane_mask) == 84);
    assert!(core::mem::offset_of!(NeuronHostElements, off) == 86);
    assert!(core::mem::offset_of!(NeuronHostElements, lo) == 16);
    assert!(core::mem::offset_of!(NeuronHostElements, nx) == 32);
    assert!(core::mem::offset_of!(NeuronHostElements, states) == 48);
    assert!(core::mem::offset_of!(NeuronHostElements, base) == 64);
    assert!(core::mem::offset_of!(NeuronHostElements, id) == 80);
    assert!(core::mem::offset_of!(NeuronHostElements, view) == 88);
    assert!(core::mem::offset_of!(NeuronHostElements, sp_floor) == 96);
    // The C++ side indexes the lanes with its constant `kHostHitLanes`.
    assert!(HIT_LANES == 4);
};

impl NeuronHostElements {
    const EMPTY: Self = Self {
        open_generation: core::ptr::null(),
        generation: 0,
        me: 0,
        input: 0,
        lo: 0,
        len: 0,
        nx: core::ptr::null_mut(),
        lanes: core::ptr::null_mut(),
        states: core::ptr::null_mut(),
        sp_low: core::ptr::null_mut(),
        base: 0,
        span: 0,
        id: 0,
        lane_mask: 0,
        off: 1,
        elem_shift: 0,
        view: core::ptr::null_mut(),
        sp_floor: 0,
    };

    /// Opens the window around `addr` (the part of the tensor in its 16
    /// MiB granule), without installing anything: false when no record
    /// maps it (the window is then closed).
    /// `lo` stays inside the tensor, with `states` its element's.
    fn open(&mut self, ctx: usize, addr: u64) -> bool {
        self.len = 0;
        let end = self.base + self.span;
        if addr < self.base || addr >= end {
            return false;
        }
        let g = addr & !(DYNAMIC_WINDOW_SIZE - 1);
        let lo = g.max(self.base);
        let hi = g.saturating_add(DYNAMIC_WINDOW_SIZE).min(end) - 1;
        let Some(w) = open_host_window(ctx, lo, hi) else { return false };
        if !self.states.is_null() {
            // Still inside the tensor's states: `lo` stays in the tensor.
            self.states =
                self.states.wrapping_sub(((self.lo - self.base) >> self.elem_shift) as usize).wrapping_add(((lo - self.base) >> self.elem_shift) as usize);
        }
        self.open_generation = w.open_generation;
        self.generation = w.generation;
        self.lanes = w.lanes;
        self.nx = w.nx;
        self.sp_low = w.sp_low;
        // SAFETY: `sp_low` is the bound slot's word (`open_host_window`),
        // live while the core is bound and used by this thread only.
        self.sp_floor = unsafe { w.sp_low.read() };
        self.lo = lo;
        self.len = hi + 1 - lo;
        true
    }
}

/// Entries per thread, handed out in turn (an accessor keeps a pointer
/// and its id; one made 16 accessors later takes its entry over).
const ENTRIES: usize = 16;

thread_local! {
    static TABLE: [UnsafeCell<NeuronHostElements>; ENTRIES] = const { [const { UnsafeCell::new(NeuronHostElements::EMPTY) }; ENTRIES] };
    static NEXT_ID: Cell<u32> = const { Cell::new(0) };
}

/// Closes every entry of this thread (`len` 0): the thread's binding
/// changed ([`on_rebind`](crate::binding::on_rebind)), so the windows and
/// words they point into may be another core's or gone. An accessor's
/// next element then takes the hook, which re-opens its entry on the
/// core bound now.
fn close_all() {
    TABLE.with(|t| {
        for e in t {
            // SAFETY: the entry lives as long as this thread and only this
            // thread reaches it; no reference to it is live (the C++
            // accessors read it between library calls, and a bind is not
            // inside one).
            unsafe { (*e.get()).len = 0 };
        }
    });
}

/// The fast path of an accessor over SoC `[base, base + span)` of `elem`-
/// byte elements (`store`: it may write), on the core bound to this
/// thread, whose context is `ctx`: an entry of this thread's table, its
/// `id` the accessor's; null when there is none (no core bound, the
/// sanitizer watching the range some other way), so every access takes
/// the hooks. The window is opened if mapped; else the first access's
/// hook maps it and re-opens ([`neuron_host_elements_open`]).
#[unsafe(no_mangle)]
pub extern "C" fn neuron_host_elements_make(ctx: *mut c_void, base: u64, span: u64, elem: u32, store: bool) -> *mut NeuronHostElements {
    if span == 0 || base.checked_add(span).is_none() || !elem.is_power_of_two() {
        return core::ptr::null_mut();
    }
    let mut watched = None;
    let mut view = None;
    with_open_hal(|h| {
        let w = h.lend_states(base, span, u64::from(elem), store);
        let v = h.soc().soc_ptr(base, span);
        // An entry will be made (below): its fast path reaches the tensor
        // through the view, so the windows its misses program leave the
        // view's pages mapped. Asked here, in the one lookup of the core.
        if v.is_some() && w != Watched::Mixed {
            h.lend_view();
        }
        watched = Some(w);
        view = v;
    });
    // An open entry stands for this thread's binding until it changes.
    crate::binding::on_rebind(close_all);
    // Memory the SoC does not map whole (no view): every access the hooks'.
    let Some(view) = view else { return core::ptr::null_mut() };
    let (states, me, input) = match watched {
        None | Some(Watched::Mixed) => return core::ptr::null_mut(),
        Some(Watched::No) => (core::ptr::null_mut(), 0, 0),
        Some(Watched::Input) => (core::ptr::null_mut(), 0, 1),
        Some(Watched::States { states, me }) => (states.cast::<u16>().cast_mut(), me, 0),
    };
    let id = NEXT_ID.with(|n| {
        let id = n.get().wrapping_add(1).max(1);
        n.set(id);
        id
    });
    let p = TABLE.with(|t| t[id as usize % ENTRIES].get());
    // SAFETY: the entry lives as long as this thread; only this thread
    // reaches it, and no reference to it outlives this call (the C++
    // accessor reads it between library calls).
    let h = unsafe { &mut *p };
    *h = NeuronHostElements {
        me,
        input,
        states,
        lo: base,
        base,
        span,
        id,
        lane_mask: (HIT_LANES - 1) as u16,
        off: 0,
        elem_shift: elem.trailing_zeros() as u8,
        view,
        ..NeuronHostElements::EMPTY
    };
    h.open(ctx.addr(), base);
    p
}

/// Re-opens `h`'s window around `addr` after a hook answered an element
/// the window did not (the hook mapped it); when no record maps it the
/// fast path is off for good (`off`).
///
/// # Safety
/// `h` is an entry [`neuron_host_elements_make`] returned on this thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_host_elements_open(h: *mut NeuronHostElements, ctx: *mut c_void, addr: u64) {
    // SAFETY: the caller's contract: a live entry of this thread's table,
    // not otherwise referenced during the call.
    let Some(h) = (unsafe { h.as_mut() }) else { return };
    if !h.open(ctx.addr(), addr) {
        h.off = 1;
    }
}
