//! How a C entry point finds the calling core's runtime state.
//!
//! On the device every core runs its own image, so the state is one static
//! per image. On the host a simulated core is bound to the thread that
//! runs it, for the duration of a call into the kernel.

use neuron_runtime::{CoreState, Error};

/// The hardware behind the C entry points.
#[cfg(not(target_arch = "xtensa"))]
pub type CoreHal = neuron_hal_mock::MockCore;

/// The hardware behind the C entry points: MMIO, for the Q7 or (feature
/// `qemu`) for the emulated core.
#[cfg(target_arch = "xtensa")]
pub type CoreHal = neuron_hal::xtensa::MmioHal;

/// A core's runtime state plus what the C surface adds to it.
pub struct Bound<H: neuron_hal::Hal> {
    /// The runtime state.
    pub state: CoreState<H>,
    /// The last error a C entry point reported on this core (0: none).
    pub last_error: i32,
    /// Every error entry points reported on this core since the log was
    /// last cleared (the simulator clears it at the start of a run).
    pub errors: neuron_runtime::ErrorLog,
    /// First marshalling failure since `customop_setup` (0: none).
    pub invocation_status: i32,
    /// Set when the kernel asked `get_cpu_id()` or `get_cpu_count()`: a
    /// kernel that slices its work by core (the simulator reports one run
    /// on a single core).
    pub cpu_queried: bool,
    /// The byte `neuron_tensor_empty` fills new tensors with: the
    /// simulator's output sentinel of the run (host only).
    #[cfg(not(target_arch = "xtensa"))]
    pub empty_fill: u8,
    /// The stack the last launcher asked for (`STACK_SIZE`, 0: the
    /// default) and the stack pointer it ran the wrapper at: the simulator
    /// measures the kernel's stack use below it (host only).
    #[cfg(not(target_arch = "xtensa"))]
    pub launch_stack: (u32, usize),
    /// Set by a Rust kernel built without optimisation: its stack use is
    /// reported, not judged (host only).
    #[cfg(not(target_arch = "xtensa"))]
    pub unoptimised_kernel: bool,
    /// Where `customop_next_tensor` builds its result: in the state, not
    /// in a frame above the reader's call chain (the custom-op path's
    /// stack); copied out once the entry point returns. Device only (the host's
    /// state must stay `Send`, and its stack is not the constraint).
    #[cfg(target_arch = "xtensa")]
    pub view: neuron_runtime::marshal::tensor::TensorView,
}

impl<H: neuron_hal::Hal> Bound<H> {
    /// Wraps fresh state (the device builds its static in place instead).
    #[cfg_attr(target_arch = "xtensa", allow(dead_code))]
    pub const fn new(state: CoreState<H>) -> Self {
        Self {
            state,
            last_error: 0,
            errors: neuron_runtime::ErrorLog::new(),
            invocation_status: 0,
            cpu_queried: false,
            #[cfg(not(target_arch = "xtensa"))]
            empty_fill: 0,
            #[cfg(not(target_arch = "xtensa"))]
            launch_stack: (0, 0),
            #[cfg(not(target_arch = "xtensa"))]
            unoptimised_kernel: false,
            // SAFETY: TensorView is plain data (integers and a raw
            // pointer); all zeroes is a valid value (null storage, rank 0).
            #[cfg(target_arch = "xtensa")]
            view: unsafe { core::mem::zeroed() },
        }
    }

    /// Records `e` as the last error and in the log.
    fn record(&mut self, e: Error) {
        self.last_error = e.code();
        self.errors.record(e);
    }

    /// `tcm_malloc(n)` as the API gives it: the block, or `None` with
    /// `OutOfMemory` recorded as handled. Null is the documented failure,
    /// which the vendor's kernels test and fall back from: it stays in
    /// the report, but does not fail the run by itself (a kernel that uses
    /// the null pointer anyway fails on it). After an unhandled error it
    /// is one more.
    pub fn tcm_alloc(&mut self, n: usize) -> Option<core::ptr::NonNull<u8>> {
        match self.state.tcm_malloc(n) {
            Ok(p) => {
                // The simulator's fill, not what the pool held before: on
                // the device the block holds whatever was there, and a
                // result computed from it shows as such (0xFF bytes are a
                // NaN in every float type the kernel may read).
                #[cfg(not(target_arch = "xtensa"))]
                // SAFETY: a fresh block of `n` bytes the pool just handed out.
                unsafe {
                    p.as_ptr().write_bytes(self.empty_fill, n)
                };
                Some(p)
            }
            Err(e) => {
                let clean = !self.errors.has_unacknowledged();
                self.record(e);
                if clean {
                    self.errors.acknowledge();
                }
                None
            }
        }
    }
}

/// Where a core's [`Bound`] lives, with the re-entry guard *beside* it:
/// the guard is checked through a shared reference before any `&mut
/// Bound` is formed, so a re-entered call never aliases the live one.
pub struct CoreSlot<H: neuron_hal::Hal> {
    /// Set while an entry point holds the state.
    busy: core::cell::Cell<bool>,
    /// Set by a refused re-entry; the holder records `Reentered` when it
    /// returns (the refused call may not touch the held state).
    reentered: core::cell::Cell<bool>,
    /// Host: the translator's mapping generation as last seen while no
    /// entry point held the state (by an entry point's exit or an
    /// accessor's fill), 0 while one holds it (no generation is 0). The
    /// accessors' cached check compares this one word, beside the guard,
    /// instead of reading `busy` and the translator.
    #[cfg(not(target_arch = "xtensa"))]
    open_generation: core::cell::Cell<u32>,
    /// Host: the accessors' cached hits not yet in the translator's
    /// counts, [`HIT_LANES`] per record (`record * HIT_LANES + lane`). One
    /// counter per record made every cached element a read-modify-write
    /// of the same word, a store-forwarding chain that was most of a
    /// host element's time; the lanes (picked by the element's index) are
    /// independent chains. Folded into the translator's counts where the
    /// counts are read: by the owner's `get_mut` (`SimCore::state`, the
    /// simulator's report and run restart), not by every entry point (a
    /// check of twenty words per call, and a fold after every cached hit:
    /// a sixth of the host stream's fixed cost). Nothing inside an entry
    /// point reads the counts but tests (`with_core_exact`).
    #[cfg(not(target_arch = "xtensa"))]
    cached_hits: [core::cell::Cell<u64>; CACHED_HIT_CELLS],
    /// Host: the lowest stack address an entry point or an element hook
    /// was called at since [`take_sp_low`](Self::take_sp_low): the depth of
    /// the kernel's own frames when it calls the library (the simulator's
    /// stack rule; the painted high water also counts the host runtime's
    /// frames, which are not the device's).
    #[cfg(not(target_arch = "xtensa"))]
    sp_low: core::cell::Cell<usize>,
    bound: core::cell::UnsafeCell<Bound<H>>,
}

/// Host: lanes of each record's cached-hit counter (see
/// `CoreSlot::cached_hits`).
#[cfg(not(target_arch = "xtensa"))]
pub const HIT_LANES: usize = 4;
#[cfg(not(target_arch = "xtensa"))]
const CACHED_HIT_CELLS: usize = neuron_runtime::translate::RECORDS * HIT_LANES;

impl<H: neuron_hal::Hal> CoreSlot<H> {
    /// A slot holding `bound`, not busy (host; the device builds its
    /// static in place with [`CoreSlot::init_in_place`]).
    #[cfg_attr(target_arch = "xtensa", allow(dead_code))]
    pub const fn new(bound: Bound<H>) -> Self {
        Self {
            busy: core::cell::Cell::new(false),
            reentered: core::cell::Cell::new(false),
            #[cfg(not(target_arch = "xtensa"))]
            open_generation: core::cell::Cell::new(0),
            #[cfg(not(target_arch = "xtensa"))]
            cached_hits: [const { core::cell::Cell::new(0) }; CACHED_HIT_CELLS],
            #[cfg(not(target_arch = "xtensa"))]
            sp_low: core::cell::Cell::new(usize::MAX),
            bound: core::cell::UnsafeCell::new(bound),
        }
    }

    /// Host: notes the caller's stack depth (see `sp_low`).
    #[cfg(not(target_arch = "xtensa"))]
    #[inline(always)]
    fn note_sp(&self) {
        let marker = 0u8;
        let sp = core::ptr::addr_of!(marker).addr();
        if sp < self.sp_low.get() {
            self.sp_low.set(sp);
        }
    }

    /// Host: the lowest stack address noted since the last call (usize::MAX
    /// when none), and starts a new count.
    #[cfg(not(target_arch = "xtensa"))]
    pub fn take_sp_low(&self) -> usize {
        self.sp_low.replace(usize::MAX)
    }

    /// Writes `CoreSlot::new(Bound::new(CoreState::new(hal)))` into `*p`
    /// in place (see [`CoreState::init_in_place`]): not busy, no error.
    ///
    /// # Safety
    /// As [`CoreState::init_in_place`]: `p` is valid for writes, aligned,
    /// all of `*p` is zeroed memory, and no reference to it is live.
    #[cfg_attr(not(target_arch = "xtensa"), allow(dead_code))]
    pub unsafe fn init_in_place(p: *mut Self, hal: H) {
        // SAFETY: the caller's contract; each field place is written once,
        // the state through its own in-place constructor (same contract).
        unsafe {
            core::ptr::addr_of_mut!((*p).busy).write(core::cell::Cell::new(false));
            core::ptr::addr_of_mut!((*p).reentered).write(core::cell::Cell::new(false));
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*p).open_generation).write(core::cell::Cell::new(0));
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*p).cached_hits).write([const { core::cell::Cell::new(0) }; CACHED_HIT_CELLS]);
            let b = core::cell::UnsafeCell::raw_get(core::ptr::addr_of!((*p).bound));
            CoreState::init_in_place(core::ptr::addr_of_mut!((*b).state), hal);
            core::ptr::addr_of_mut!((*b).last_error).write(0);
            core::ptr::addr_of_mut!((*b).errors).write(neuron_runtime::ErrorLog::new());
            core::ptr::addr_of_mut!((*b).invocation_status).write(0);
            core::ptr::addr_of_mut!((*b).cpu_queried).write(false);
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*b).empty_fill).write(0);
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*b).launch_stack).write((0, 0));
            #[cfg(not(target_arch = "xtensa"))]
            core::ptr::addr_of_mut!((*b).unoptimised_kernel).write(false);
            // The view is left as found: zeroes, its value in `Bound::new`.
        }
        #[allow(dead_code)]
        fn all_fields<H: neuron_hal::Hal>(b: &Bound<H>) {
            #[cfg(target_arch = "xtensa")]
            let Bound { state: _, last_error: _, errors: _, invocation_status: _, cpu_queried: _, view: _ } = b;
            #[cfg(not(target_arch = "xtensa"))]
            let Bound { state: _, last_error: _, errors: _, invocation_status: _, cpu_queried: _, empty_fill: _, launch_stack: _, unoptimised_kernel: _ } = b;
        }
    }

    /// The state, through exclusive access to the slot (host: `SimCore`),
    /// its counts exact (the cached hits folded in).
    #[cfg_attr(target_arch = "xtensa", allow(dead_code))]
    pub fn get_mut(&mut self) -> &mut Bound<H> {
        let b = self.bound.get_mut();
        #[cfg(not(target_arch = "xtensa"))]
        fold_cached_hits(&self.cached_hits, b);
        b
    }

    /// The state, shared (host: `SimCore`). Its translate hit counts may
    /// lack the accessors' cached hits not yet folded in: read counts
    /// through [`CoreSlot::get_mut`].
    #[cfg_attr(target_arch = "xtensa", allow(dead_code))]
    pub fn get(&self) -> &Bound<H> {
        debug_assert!(!self.busy.get(), "core slot read while an entry point holds it");
        // SAFETY: a `&mut Bound` only exists inside `with_core`, reached
        // through the binding while the slot's owner is mutably borrowed
        // (`SimCore::enter`), so none is live while `&self` is.
        unsafe { &*self.bound.get() }
    }
}

#[cfg(not(target_arch = "xtensa"))]
mod host_binding {
    use super::*;
    use core::cell::Cell;

    /// Bumped by every bind and every unbind, on any thread: an
    /// accessor's `HostToken` taken at one value stands for "the binding
    /// this thread had then" while the counter still reads that value
    /// (this thread's own bumps are always visible to it, so an unchanged
    /// value means its binding did not change; another thread's bump only
    /// sends the accessor through the full path once, which refills it).
    /// Starts at 1: a token at 0 never matches.
    pub static BINDING_EPOCH: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);

    fn rebound() {
        BINDING_EPOCH.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    }

    std::thread_local! {
        static CURRENT: Cell<*mut CoreSlot<CoreHal>> = const { Cell::new(core::ptr::null_mut()) };
        /// The bound core's PRID, read from its HAL at bind time, for the
        /// abort report (which must not enter the state).
        static CPU: Cell<i32> = const { Cell::new(-1) };
        static UNBOUND_ERROR: Cell<i32> = const { Cell::new(0) };
    }

    /// Binds `b` to this thread until the returned guard drops (restoring
    /// the previous binding, so simulated calls nest).
    pub fn bind(b: &mut CoreSlot<CoreHal>) -> impl Drop {
        struct Restore(*mut CoreSlot<CoreHal>, i32);
        impl Drop for Restore {
            fn drop(&mut self) {
                CURRENT.with(|c| c.set(self.0));
                CPU.with(|c| c.set(self.1));
                rebound();
            }
        }
        let cpu = neuron_hal::Hal::prid(b.get_mut().state.hal()) as i32;
        let r = Restore(CURRENT.with(|c| c.replace(b)), CPU.with(|c| c.replace(cpu)));
        rebound();
        r
    }

    #[inline]
    pub fn current() -> *mut CoreSlot<CoreHal> {
        CURRENT.with(Cell::get)
    }

    /// The bound core's PRID, or -1.
    pub fn abort_cpu() -> i32 {
        CPU.with(Cell::get)
    }

    pub fn set_unbound_error(code: i32) {
        UNBOUND_ERROR.with(|c| c.set(code));
    }

    pub fn unbound_error() -> i32 {
        UNBOUND_ERROR.with(Cell::get)
    }
}

/// The device binding: one static state per image (each Q7 core runs its
/// own image, linked at its own address, on private memory).
///
/// Under QEMU (feature `qemu`) every emulated core runs the *same* image
/// in one shared RAM, so the image holds one state per core and a core
/// picks its own by PRID: the stand-in for "one image per core".
#[cfg(target_arch = "xtensa")]
mod device_binding {
    use super::*;
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
}

#[cfg(target_arch = "xtensa")]
pub(crate) use device_binding::abort_cpu;
#[cfg(target_arch = "xtensa")]
use device_binding::{current, open_translator, set_open_translator, set_unbound_error, unbound_error};

#[cfg(not(target_arch = "xtensa"))]
pub(crate) use host_binding::{abort_cpu, bind};
#[cfg(not(target_arch = "xtensa"))]
use host_binding::{current, current as current_raw, set_unbound_error, unbound_error};

/// Runs `f` on the calling core's state. Errors when no core is bound (host
/// only) or when the runtime is re-entered; the error is recorded as the
/// core's last error and in its log either way (a re-entry when the held
/// call returns: the refused call may not touch the held state).
pub fn with_core<R>(f: impl FnOnce(&mut Bound<CoreHal>) -> Result<R, Error>) -> Result<R, Error> {
    let p = current();
    if p.is_null() {
        set_unbound_error(Error::NoCore.code());
        return Err(Error::NoCore);
    }
    // SAFETY: a bound pointer stays valid while bound (the guard of `bind`
    // outlives every call made under it) and is used by this thread only.
    // Only a shared reference to the slot is formed here: its guard cells
    // are `Cell`s and the state sits in an `UnsafeCell`, so this does not
    // alias a `&mut Bound` a call further up may hold.
    enter_slot(unsafe { &*p }, f)
}

/// [`with_core`] on a given slot: the re-entry check, then `f` on the
/// state, then the error bookkeeping. Generic over the HAL so the guard
/// is tested on a fake core (under Miri too).
fn enter_slot<H: neuron_hal::Hal, R>(slot: &CoreSlot<H>, f: impl FnOnce(&mut Bound<H>) -> Result<R, Error>) -> Result<R, Error> {
    if slot.busy.replace(true) {
        slot.reentered.set(true);
        return Err(Error::Reentered);
    }
    #[cfg(not(target_arch = "xtensa"))]
    slot.note_sp();
    #[cfg(target_arch = "xtensa")]
    set_open_translator(0);
    #[cfg(not(target_arch = "xtensa"))]
    slot.open_generation.set(0);
    // SAFETY: `busy` was false and is now true: no other `&mut Bound` to
    // this slot exists, and none is formed until it is false again.
    let b = unsafe { &mut *slot.bound.get() };
    // No panic crosses the C ABI: one in the runtime becomes the abort
    // report (on the device the panic handler does this).
    #[cfg(not(target_arch = "xtensa"))]
    let r = match crate::abort::catch_panic(|| f(&mut *b)) {
        Ok(r) => r,
        Err(c) => {
            slot.busy.set(false);
            crate::abort::abort_panic(c)
        }
    };
    #[cfg(target_arch = "xtensa")]
    let r = f(&mut *b);
    if slot.reentered.replace(false) {
        b.record(Error::Reentered);
    }
    if let Err(e) = &r {
        b.record(*e);
    }
    // The translator's address, exposed: the hit path turns the `ctx`
    // integer it is given back into a pointer with this provenance.
    #[cfg(target_arch = "xtensa")]
    // SAFETY: `b.state` is live; only its translator's address is taken.
    set_open_translator(unsafe { CoreState::translator_of(core::ptr::addr_of_mut!(b.state)) }.expose_provenance());
    #[cfg(not(target_arch = "xtensa"))]
    slot.open_generation.set(b.state.translator().generation());
    slot.busy.set(false);
    r
}

/// Moves the accessors' cached hits of `lanes` into `b`'s translate
/// counts (host): afterwards the counts are exact and the lanes zero.
#[cfg(not(target_arch = "xtensa"))]
fn fold_cached_hits<H: neuron_hal::Hal>(lanes: &[core::cell::Cell<u64>; CACHED_HIT_CELLS], b: &mut Bound<H>) {
    if lanes.iter().fold(0, |a, c| a | c.get()) != 0 {
        fold_nonzero(lanes, b);
    }
}

/// [`with_core`] with the counts exact inside `f` (the cached hits folded
/// in first): for tests that read translate counts inside a binding.
#[cfg(all(test, not(target_arch = "xtensa")))]
pub(crate) fn with_core_exact<R>(f: impl FnOnce(&mut Bound<CoreHal>) -> Result<R, Error>) -> Result<R, Error> {
    let p = current();
    if p.is_null() {
        return Err(Error::NoCore);
    }
    // SAFETY: as in `with_core`.
    let slot = unsafe { &*p };
    enter_slot(slot, |b| {
        fold_cached_hits(&slot.cached_hits, b);
        f(b)
    })
}

#[cfg(not(target_arch = "xtensa"))]
#[inline(never)]
fn fold_nonzero<H: neuron_hal::Hal>(lanes: &[core::cell::Cell<u64>; CACHED_HIT_CELLS], b: &mut Bound<H>) {
    for (record, lanes) in lanes.as_chunks::<HIT_LANES>().0.iter().enumerate() {
        let n: u64 = lanes.iter().map(|c| c.take()).sum();
        if n != 0 {
            b.state.count_translate_hits(record, n);
        }
    }
}

#[cfg(all(test, not(target_arch = "xtensa")))]
mod tests {
    use super::*;
    use neuron_hal_mock::FakeHal;
    use std::boxed::Box;

    /// A call made from inside another on the same core is refused before
    /// it touches the state (no second `&mut`: Miri checks that), and the
    /// holder records `Reentered` when it returns; the slot is usable after.
    #[test]
    fn reentry_is_refused_without_aliasing_and_recorded() {
        let slot = Box::new(CoreSlot::new(Bound::new(CoreState::new(FakeHal::new(3)))));
        let r = enter_slot(&slot, |outer| {
            outer.invocation_status = 7;
            let inner = enter_slot(&slot, |b| {
                b.invocation_status = 99;
                Ok(())
            });
            assert_eq!(inner, Err(Error::Reentered));
            // The held state was not touched by the refused call.
            assert_eq!(outer.invocation_status, 7);
            Ok(5)
        });
        assert_eq!(r, Ok(5));
        assert_eq!(slot.get().last_error, Error::Reentered.code());
        assert_eq!(slot.get().errors.entries(), &[Error::Reentered]);
        assert_eq!(enter_slot(&slot, |b| Ok(b.invocation_status)), Ok(7));
        let e = enter_slot(&slot, |_| Err::<(), _>(Error::DmaFault));
        assert_eq!(e, Err(Error::DmaFault));
        assert_eq!(slot.get().errors.entries(), &[Error::Reentered, Error::DmaFault]);
    }

    /// An accessor's token on a fake core (`slot_range` at the fill,
    /// `slot_hit` per element): its raw slot pointer, kept across entry
    /// points that form `&mut Bound`, is still usable after them and
    /// aliases nothing (Miri checks that); while an entry point holds the
    /// state the check refuses without reading it; an install (a new
    /// generation) and a foreign context refuse; each hit is counted on
    /// the token's record.
    #[test]
    fn a_token_is_checked_in_place_across_entry_points() {
        let mut slot = Box::new(CoreSlot::new(Bound::new(CoreState::new(FakeHal::new(3)))));
        // As `bind` does: a raw pointer from the exclusive borrow.
        let p: *const CoreSlot<FakeHal> = &mut *slot;
        // SAFETY: `p` points to the live boxed slot, used by this thread only.
        let s = unsafe { &*p };
        let (ctx, sbuf, hbm) = enter_slot(s, |b| {
            b.state.init_translate_ctx();
            let pf = *neuron_hal::Hal::platform(b.state.hal());
            Ok((b.state.translate_ctx().cast_const(), pf.sbuf_soc_base, pf.hbm_soc_base + (1 << 30)))
        })
        .unwrap();
        // SAFETY: `p` points to the live boxed slot, used by this thread
        // only; `rec` comes from `slot_range` (below `RECORDS`).
        let hit = |g: u32, rec: usize| unsafe { slot_hit(p, g, record_lanes(p, rec), 1) };
        // SAFETY: as above.
        let range = |ctx: *const neuron_runtime::TranslationCtx| unsafe { slot_range(p, ctx, sbuf, sbuf + 255) };
        let (g, rec, _) = range(ctx).expect("SBUF maps the range");
        let mut other = 0u8;
        assert!(range((&mut other as *mut u8).cast_const().cast()).is_none(), "a foreign context");
        assert!(hit(g, rec));
        // An entry point does not fold: the hit waits in its lane.
        assert_eq!(enter_slot(s, |b| Ok(b.state.translator().stats().hits[rec])), Ok(0));
        assert!(hit(g, rec));
        let held = enter_slot(s, |b| {
            b.invocation_status = 1;
            let r = hit(g, rec) || range(ctx).is_some();
            b.invocation_status = 2;
            Ok(r)
        });
        assert_eq!(held, Ok(false));
        assert!(hit(g, rec));
        assert_eq!(enter_slot(s, |b| b.state.translate_miss(hbm).map(|_| ())), Ok(()));
        assert!(!hit(g, rec), "an install is a new generation");
        let (g2, rec2, _) = range(ctx).expect("refilled");
        assert_ne!(g2, g);
        assert!(hit(g2, rec2));
        assert_eq!(slot.get_mut().state.translator().stats().hits[rec], 4, "the cached hits folded in");
        assert_eq!(slot.get().invocation_status, 2);
    }
}

/// The translate hit path, without entering the core's state: when `ctx`
/// is the calling core's context and no entry point holds the state, the
/// lookup reads the context in place. Pure arithmetic (plus, on the host,
/// the per-record hit counter); `None` sends the caller to the full path
/// (a miss, a foreign context, no core, re-entry), which reports errors.
/// What the in-place probe of `neuron_translate` found.
pub enum Probe {
    /// A hit: the pointer.
    Hit(*mut u8),
    /// `ctx` is this core's open context and no record maps the address:
    /// the miss path can install without looking up again (the device's
    /// probe; the host's sends everything but a hit to the full path).
    #[cfg_attr(not(target_arch = "xtensa"), allow(dead_code))]
    Unmapped,
    /// Anything else (a foreign or closed context, the SBUF end): the full
    /// path decides and reports.
    Slow,
}

/// The device's probe (see [`translate_hit`]): the hit table inline, the
/// scan out of line.
#[cfg(target_arch = "xtensa")]
#[inline(always)]
pub fn translate_probe(ctx: *const neuron_runtime::TranslationCtx, addr: u64) -> Probe {
    let open = open_translator();
    if ctx.addr() != open || open == 0 {
        return Probe::Slow;
    }
    let t = core::ptr::with_exposed_provenance_mut::<neuron_runtime::Translator>(open);
    // SAFETY: `open` is this core's translator, exposed by `with_core`,
    // which sets it only while no entry point holds the state (it is 0
    // otherwise): nothing mutates the translator while the table is read.
    // The translator lives in a static.
    match unsafe { neuron_runtime::Translator::table_hit_in_place(t, addr) } {
        Some(q) => Probe::Hit(q),
        // SAFETY: as above.
        None => unsafe { probe_scan(t, addr) },
    }
}

/// The device probe past the hit table: the records' scan, and the hit
/// put in the table for the next time.
///
/// # Safety
/// `t` is this core's open translator (as in [`translate_probe`]): no
/// entry point holds the state, so no reference to it exists.
#[cfg(target_arch = "xtensa")]
#[inline(never)]
unsafe fn probe_scan(t: *mut neuron_runtime::Translator, addr: u64) -> Probe {
    // SAFETY: the caller's contract: the context is read through a
    // shared borrow that ends before the refill borrows the table.
    let (i, q) = match unsafe { (*neuron_runtime::Translator::ctx_of(t)).lookup_all(addr) } {
        Some(hit) => hit,
        None => return Probe::Unmapped,
    };
    // SAFETY: as above.
    if neuron_runtime::Translator::past_sbuf_on(unsafe { &*neuron_runtime::Translator::ctx_of(t) }, || &DEVICE_PLATFORM, i, addr) {
        return Probe::Slow;
    }
    // SAFETY: the caller's contract; no borrow of the translator is live.
    unsafe { neuron_runtime::Translator::refill_in_place(t, &DEVICE_PLATFORM, i, addr) };
    Probe::Hit(q)
}

/// The host's probe: the hit path, everything else on the full path.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
pub fn translate_probe(ctx: *const neuron_runtime::TranslationCtx, addr: u64) -> Probe {
    translate_hit(ctx, addr).map_or(Probe::Slow, Probe::Hit)
}

/// The platform table the device binding uses.
#[cfg(all(target_arch = "xtensa", feature = "qemu"))]
const DEVICE_PLATFORM: neuron_hal::Platform = neuron_hal::QEMU;
/// The platform table the device binding uses.
#[cfg(all(target_arch = "xtensa", not(feature = "qemu")))]
const DEVICE_PLATFORM: neuron_hal::Platform = neuron_hal::Q7;

/// The host's open state for `ctx`: the core bound to this thread, when
/// `ctx` is its translation context and no entry point holds the state
/// (the host's counterpart of the device's open translator). The hit
/// paths below read and bump plain fields through it.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
fn host_open(ctx: *const neuron_runtime::TranslationCtx) -> Option<*mut Bound<CoreHal>> {
    let p = current_raw();
    if p.is_null() {
        return None;
    }
    // SAFETY: a non-null slot pointer stays valid while the core is bound
    // (as in `with_core`); only places are computed and a `Cell` read, no
    // reference to the state is formed.
    unsafe {
        if (*p).busy.get() {
            return None;
        }
        let b = (*p).bound.get();
        let t = CoreState::translator_of(core::ptr::addr_of_mut!((*b).state));
        (ctx == neuron_runtime::Translator::ctx_of(t)).then_some(b)
    }
}

/// Runs `f` on the HAL of the core bound to this thread while no entry
/// point holds its state (the host accessors' element hooks); nothing
/// when none is bound or it is held.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
pub fn with_open_hal(f: impl FnOnce(&CoreHal)) {
    let p = current_raw();
    if p.is_null() {
        return;
    }
    // SAFETY: as in `host_open`: a non-null slot pointer stays valid while
    // the core is bound; no entry point holds the state, so no `&mut` to
    // it exists; only a shared reference to its HAL (interior mutability)
    // is formed, for the call.
    unsafe {
        if (*p).busy.get() {
            return;
        }
        // The element hooks are where a C++ kernel calls the library
        // most: its stack depth is noted here, not on every translate.
        (*p).note_sp();
        let b = (*p).bound.get();
        f(&*CoreState::hal_of(core::ptr::addr_of!((*b).state)));
    }
}

/// The host's hit path (the core bound to this thread).
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
pub fn translate_hit(ctx: *const neuron_runtime::TranslationCtx, addr: u64) -> Option<*mut u8> {
    let b = host_open(ctx)?;
    // SAFETY: `b` is open (`host_open`): no entry point holds a reference
    // to the state, so plain fields are read and the hit counter bumped
    // through the raw pointer.
    unsafe {
        let state = core::ptr::addr_of_mut!((*b).state);
        let t = CoreState::translator_of(state);
        let own = &*neuron_runtime::Translator::ctx_of(t);
        let (i, q) = own.lookup(addr)?;
        if neuron_runtime::Translator::past_sbuf(own, &*CoreState::hal_of(state), i, addr) {
            return None;
        }
        // `i` is a record the lookup returned: below RECORDS.
        neuron_runtime::Translator::count_hit_in_place(t, i);
        Some(q)
    }
}

/// The accessors' cached-pointer check: whether `ctx` is the calling
/// core's open context (no entry point holds the state) and its mapping
/// generation is still `generation`, so that a pointer found through it at
/// that generation still shows the same memory. Pure reads of the
/// translator in place.
#[cfg(target_arch = "xtensa")]
#[inline(always)]
pub fn still_mapped(ctx: core::ptr::NonNull<neuron_runtime::TranslationCtx>, generation: u32, _record: usize) -> bool {
    let open = open_translator();
    // `ctx` is not null, so neither is `open` past this test.
    if ctx.addr().get() != open {
        return false;
    }
    let t = core::ptr::with_exposed_provenance::<neuron_runtime::Translator>(open);
    // SAFETY: as in `translate_probe`: `open` is this core's translator,
    // exposed by `with_core`, and nothing mutates it while it is open.
    unsafe { neuron_runtime::Translator::generation_in_place(t) == generation }
}

/// What a host accessor's leaf keeps instead of looking the thread's core
/// up per element: taken at the leaf's fill, while `ctx` was the bound
/// core's open context. While `BINDING_EPOCH` still reads `epoch`, this
/// thread's binding is the one of the fill, so `slot` is live (the guard
/// of `bind` outlives it) and used by this thread only; the element
/// check is then that no entry point holds the
/// state and that the translator's generation is still `generation` (no
/// window reprogrammed, the translator not re-made): one compare with the
/// slot's `open_generation`.
#[cfg(not(target_arch = "xtensa"))]
#[derive(Clone, Copy, Debug)]
pub struct HostToken {
    epoch: u64,
    slot: *const CoreSlot<CoreHal>,
    /// The cached-hit lanes, in `slot`, of the record that maps the
    /// tensor (below `RECORDS`: checked at the fill), which a cached hit
    /// bumps.
    lanes: *const core::cell::Cell<u64>,
    generation: u32,
}

#[cfg(not(target_arch = "xtensa"))]
impl HostToken {
    /// A token that never matches (no epoch is 0).
    pub const NONE: Self = Self { epoch: 0, slot: core::ptr::null(), lanes: core::ptr::null(), generation: 0 };
}

/// The host's cached-pointer check (the device's is `still_mapped`):
/// `t`'s binding unchanged, the state not held, the mapping generation
/// unchanged; a cached hit counts as a hit on the token's record, as the
/// translate it stands for would (in the counter lane of the element's
/// `index`). No thread-local lookup.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
pub fn token_hit(t: &HostToken, index: usize) -> bool {
    if host_binding::BINDING_EPOCH.load(core::sync::atomic::Ordering::Relaxed) != t.epoch {
        return false;
    }
    // SAFETY: the epoch is the fill's, so this thread's binding is the
    // fill's (every bind and unbind bumps it, and a thread sees its own
    // bumps): `t.slot` is the bound slot, live and used by this thread
    // only (as in `with_core`), bound since the fill read `t.generation`
    // (not 0: a translator's) from it; `t.lanes` are its record's, taken
    // there.
    unsafe { slot_hit(t.slot, t.generation, t.lanes, index) }
}

/// The host's `open_range`: the calling thread's token for `ctx` into
/// `token` and the pointer for `lo` into `nx`, when one record maps
/// `[lo, hi]` (as `open_range`); both left as they were otherwise. No
/// install, no counter; the slot's `open_generation` is set to the
/// generation read (see [`slot_range`]).
// Writes the token and the pointer in place: returned through memory, they
// were stored field by field and loaded back by wider moves, a
// store-forwarding stall of several nanoseconds. Out of line: inlined, it
// grew every accessor's element path (a slower host accessor read).
#[cfg(not(target_arch = "xtensa"))]
#[inline(never)]
pub fn open_token(ctx: *const neuron_runtime::TranslationCtx, lo: u64, hi: u64, token: &core::cell::Cell<HostToken>, nx: &core::cell::Cell<*mut u8>) {
    // Read before the binding: a token never stands for a binding made
    // after its epoch was read.
    let epoch = host_binding::BINDING_EPOCH.load(core::sync::atomic::Ordering::Relaxed);
    let slot = current_raw();
    if slot.is_null() {
        return;
    }
    // SAFETY: a non-null slot pointer stays valid while the core is bound
    // (as in `with_core`).
    let Some((generation, record, p)) = (unsafe { slot_range(slot, ctx, lo, hi) }) else {
        return;
    };
    // SAFETY: as above; `slot_range` checked `record < RECORDS`.
    let lanes = unsafe { record_lanes(slot, record) };
    token.set(HostToken { epoch, slot, lanes, generation });
    nx.set(p);
}

/// The cached-hit lanes of `record` in the slot at `p`.
///
/// # Safety
/// `p` points to a live slot and `record < RECORDS`.
#[cfg(not(target_arch = "xtensa"))]
unsafe fn record_lanes<H: neuron_hal::Hal>(p: *const CoreSlot<H>, record: usize) -> *const core::cell::Cell<u64> {
    // SAFETY: the caller's contract: the place and the offset are within
    // the slot's `cached_hits`.
    unsafe { core::ptr::addr_of!((*p).cached_hits).cast::<core::cell::Cell<u64>>().add(record * HIT_LANES) }
}

/// [`token_hit`] past the binding check: whether no entry point holds
/// `p`'s state and the mapping generation is still `generation` (one
/// compare: `CoreSlot::open_generation`); if so, one hit counted in lane
/// `index % HIT_LANES` of `lanes`. Only the cells beside the guard are
/// touched, never the state. Generic over the HAL so the aliasing is
/// checked under Miri on a fake core.
///
/// # Safety
/// `p` points to a live slot that only this thread uses, bound to it
/// since `generation` was read from it by [`slot_range`]; `lanes` is
/// [`record_lanes`] of `p` and a record below `RECORDS`; `generation` is
/// not 0.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
unsafe fn slot_hit<H: neuron_hal::Hal>(p: *const CoreSlot<H>, generation: u32, lanes: *const core::cell::Cell<u64>, index: usize) -> bool {
    // SAFETY: the caller's contract: the slot is live and this thread's;
    // a shared reference to it aliases no `&mut Bound` (the state sits in
    // an `UnsafeCell`, as in `with_core`).
    let s = unsafe { &*p };
    // `open_generation` is not 0 only while no entry point holds the state
    // (`enter_slot` zeroes it right after setting `busy` and sets it right
    // before clearing `busy`; a fill sets it only when `busy` is clear),
    // and `generation` is not 0 (the fill's, a translator's): a match
    // means the mapping is the fill's (the translator's generation changes
    // only inside an entry point, whose exit stores the new one, or with
    // the core unbound, which the caller's epoch check catches).
    if s.open_generation.get() != generation {
        return false;
    }
    // SAFETY: `lanes` starts `HIT_LANES` cells of the live slot (the
    // caller's contract) and the lane is below `HIT_LANES`.
    let c = unsafe { &*lanes.add(index % HIT_LANES) };
    c.set(c.get().wrapping_add(1));
    true
}

/// [`open_token`] on a slot: when no entry point holds `p`'s state and
/// `ctx` is its context, [`range_in`] on its translator (the record
/// checked below `RECORDS`).
///
/// # Safety
/// `p` points to a live slot that only this thread uses.
#[cfg(not(target_arch = "xtensa"))]
#[inline(always)]
unsafe fn slot_range<H: neuron_hal::Hal>(p: *const CoreSlot<H>, ctx: *const neuron_runtime::TranslationCtx, lo: u64, hi: u64) -> Option<(u32, usize, *mut u8)> {
    // SAFETY: the caller's contract; as in `slot_hit`, the state is read
    // only once no entry point holds it, and not written. The platform
    // closure reads the HAL within this call, under the same guard.
    let (generation, record, q) = unsafe {
        if (*p).busy.get() {
            return None;
        }
        let b = core::cell::UnsafeCell::raw_get(core::ptr::addr_of!((*p).bound));
        let state = core::ptr::addr_of_mut!((*b).state);
        let tr = CoreState::translator_of(state);
        if ctx != neuron_runtime::Translator::ctx_of(tr) {
            return None;
        }
        range_in(tr, || neuron_hal::Hal::platform(&*CoreState::hal_of(state)), lo, hi)?
    };
    if record >= neuron_runtime::translate::RECORDS {
        return None;
    }
    // The generation just read with the state not held (see `slot_hit`):
    // a word left stale by a change made while the core was unbound is
    // brought up to date.
    // SAFETY: the caller's contract; a `Cell` beside the guard.
    unsafe { (*p).open_generation.set(generation) };
    Some((generation, record, q))
}

/// What an accessor caches: the generation, the record that maps the
/// whole range `[lo, hi]` (both ends hit it, `hi` not past the end of
/// SBUF) and the pointer for `lo`; `None` when `ctx` is not the calling
/// core's open context, no single record maps the range, or the
/// generation is exhausted. No side effect (no install, no counter).
/// (The host's is `open_token`.)
#[cfg(target_arch = "xtensa")]
#[inline(never)]
pub fn open_range(ctx: *const neuron_runtime::TranslationCtx, lo: u64, hi: u64) -> Option<(u32, usize, *mut u8)> {
    let open = open_translator();
    if ctx.addr() != open || open == 0 {
        return None;
    }
    let t = core::ptr::with_exposed_provenance::<neuron_runtime::Translator>(open);
    // SAFETY: as in `still_mapped`.
    unsafe { range_in(t, || &DEVICE_PLATFORM, lo, hi) }
}

/// [`open_range`] on a translator. The platform table is asked for only
/// when the range is in SBUF (`Translator::past_sbuf_on`): on the host it
/// is two dependent loads through the HAL, most of a leaf fill's time when
/// they were made for every range.
///
/// # Safety
/// `t` is live and nothing mutates it during the call.
unsafe fn range_in<'a>(
    t: *const neuron_runtime::Translator,
    platform: impl FnOnce() -> &'a neuron_hal::Platform,
    lo: u64,
    hi: u64,
) -> Option<(u32, usize, *mut u8)> {
    // SAFETY: the caller's contract; shared reads only.
    let c = unsafe { &*neuron_runtime::Translator::ctx_of(t) };
    let (i, p) = c.lookup(lo)?;
    let (j, _) = c.lookup(hi)?;
    if i != j || neuron_runtime::Translator::past_sbuf_on(c, platform, j, hi) {
        return None;
    }
    // SAFETY: as above.
    let g = unsafe { neuron_runtime::Translator::generation_in_place(t) };
    (g != neuron_runtime::translate::GENERATION_EXHAUSTED).then_some((g, i, p))
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

/// Whether a core is bound to the calling thread (always, on the device).
pub fn is_bound() -> bool {
    !current().is_null()
}

/// The calling core's last error, or the thread's when no core is bound.
pub fn last_error() -> i32 {
    let p = current();
    if p.is_null() {
        return unbound_error();
    }
    // SAFETY: as in with_core; only a plain field is read, and only while
    // no entry point holds the state (inside one, the read would alias it:
    // the caller re-entered the runtime).
    unsafe {
        if (*p).busy.get() {
            return Error::Reentered.code();
        }
        (*(*p).bound.get()).last_error
    }
}
