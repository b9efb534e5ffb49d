//! How a C entry point finds the calling core's runtime state.
//!
//! On the device every core runs its own image, so the state is one static
//! per image ([`device`]). On the host a simulated core is bound to the
//! thread that runs it, for the duration of a call into the kernel
//! ([`host`]).
//!
//! | file | concept |
//! |---|---|
//! | `bound.rs` | [`Bound`]: the runtime state plus the C surface's error bookkeeping |
//! | `slot.rs` | [`CoreSlot`]: where a `Bound` lives, its re-entry guard, `enter_slot` |
//! | `host.rs` / `device.rs` | which slot is the calling core's |
//! | `fastpath.rs` | the translate hit read in place, without entering the state |
//! | `explain.rs` | host: an error's detail in words (which heap, which dtypes) |
//! | `site.rs` | host: where in the kernel a logged error happened |
//! | `token.rs` | host: the accessor's `HostToken` and the cached-hit lanes |
//!
//! # The protocol: busy, open generation, binding epoch
//!
//! Every entry point goes through [`with_core`], which sets the slot's
//! `busy` cell before it forms the one `&mut Bound` and clears it after; a
//! call that finds `busy` set (a kernel re-entering the runtime from a
//! callback) is refused with `Reentered` without touching the state.
//! The fast paths never form a reference to the state: they read it in
//! place, and only while no entry point holds it:
//!
//! - **Device: the open translator.** `with_core` writes 0 to a word (a
//!   static on the Q7, the core's `MISC0` under QEMU) on entry and the
//!   translator's address on exit. A translate whose `ctx` equals that word
//!   reads the hit table in place; anything else takes the full path.
//! - **Host: the open generation.** The slot keeps the translator's
//!   mapping generation in `open_generation`, set on exit (and by an
//!   accessor's fill while the state is not held), 0 while an entry point
//!   holds it. No generation is 0, so one compare with the generation an
//!   accessor cached says both "not held" and "no window reprogrammed".
//! - **Host: the binding epoch.** `BINDING_EPOCH` is bumped by every bind
//!   and unbind on any thread. An accessor's [`HostToken`] records the
//!   epoch, slot and generation at its fill; while the epoch is unchanged
//!   the thread's binding is the fill's, so the slot pointer is live and
//!   the per-element check needs no thread-local lookup. Cached hits are
//!   counted in the slot's lanes and folded into the translator's counts
//!   where they are read ([`CoreSlot::get_mut`]).

mod bound;
#[cfg(target_arch = "xtensa")]
mod device;
#[cfg(not(target_arch = "xtensa"))]
pub mod explain;
mod fastpath;
#[cfg(not(target_arch = "xtensa"))]
mod host;
#[cfg(not(target_arch = "xtensa"))]
pub mod site;
mod slot;
mod stamp;
#[cfg(not(target_arch = "xtensa"))]
mod token;

// Public: what the simulator crate uses to own, bind and enter a core.
pub use bound::Bound;
#[cfg(not(target_arch = "xtensa"))]
pub use fastpath::{noted_translate_hit, with_open_hal};
pub use slot::CoreSlot;
#[cfg(not(target_arch = "xtensa"))]
pub use slot::HIT_LANES;
#[cfg(not(target_arch = "xtensa"))]
pub use token::{open_host_window, HostWindow};

// The fast paths: this crate's translate and accessors only.
#[cfg(target_arch = "xtensa")]
pub(crate) use device::read_view;
#[cfg(target_arch = "xtensa")]
pub(crate) use fastpath::{open_range, still_mapped};
pub(crate) use fastpath::{translate_probe, Probe};
pub(crate) use stamp::Stamp;
#[cfg(not(target_arch = "xtensa"))]
pub(crate) use token::{open_token, token_hit, HostToken};

use neuron_runtime::Error;
use slot::enter_slot;
#[cfg(not(target_arch = "xtensa"))]
use slot::fold_cached_hits;

/// The hardware behind the C entry points.
#[cfg(not(target_arch = "xtensa"))]
pub type CoreHal = neuron_hal_mock::MockCore;

/// The hardware behind the C entry points: MMIO, for the Q7 or (feature
/// `qemu`) for the emulated core.
#[cfg(target_arch = "xtensa")]
pub type CoreHal = neuron_hal::xtensa::MmioHal;

#[cfg(target_arch = "xtensa")]
pub(crate) use device::abort_cpu;
#[cfg(target_arch = "xtensa")]
use device::{current, set_unbound_error, unbound_error};

#[cfg(not(target_arch = "xtensa"))]
pub(crate) use host::abort_cpu;
#[cfg(not(target_arch = "xtensa"))]
pub use host::{bind, on_rebind};
#[cfg(not(target_arch = "xtensa"))]
use host::{current, set_unbound_error, unbound_error};

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

/// [`with_core`] with the counts exact inside `f` (the cached hits folded
/// in first): for tests that read translate counts inside a binding.
#[cfg(not(target_arch = "xtensa"))]
pub fn with_core_exact<R>(f: impl FnOnce(&mut Bound<CoreHal>) -> Result<R, Error>) -> Result<R, Error> {
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

/// The slot bound to the calling thread, as an address only compared
/// (null: none). A `TcmScope` keeps it to make buffers on its core only.
#[cfg(not(target_arch = "xtensa"))]
pub(crate) fn bound_slot() -> *const () {
    current().cast_const().cast()
}

/// Whether a core is bound to the calling thread (always, on the device).
pub fn is_bound() -> bool {
    !current().is_null()
}

/// The calling core's last error, or the thread's when no core is bound.
pub(crate) fn last_error() -> i32 {
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
