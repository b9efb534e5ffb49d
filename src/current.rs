//! How a C entry point finds the calling core's runtime state.
//!
//! On the device every core runs its own image, so the state is one static
//! per image. On the host a simulated core is bound to the thread that
//! runs it, for the duration of a call into the kernel.

use neuron_runtime::{CoreState, Error};

/// The hardware behind the C entry points.
#[cfg(not(target_arch = "xtensa"))]
pub type CoreHal = neuron_hal_mock::MockCore;

/// A core's runtime state plus what the C surface adds to it.
pub struct Bound<H: neuron_hal::Hal> {
    /// The runtime state.
    pub state: CoreState<H>,
    /// The last error a C entry point reported on this core (0: none).
    pub last_error: i32,
    /// First marshalling failure since `customop_setup` (0: none).
    pub invocation_status: i32,
    /// Set while an entry point holds the state, to refuse re-entry.
    busy: bool,
}

impl<H: neuron_hal::Hal> Bound<H> {
    /// Wraps fresh state.
    pub const fn new(state: CoreState<H>) -> Self {
        Self { state, last_error: 0, invocation_status: 0, busy: false }
    }
}

#[cfg(not(target_arch = "xtensa"))]
mod host_binding {
    use super::*;
    use core::cell::Cell;

    std::thread_local! {
        static CURRENT: Cell<*mut Bound<CoreHal>> = const { Cell::new(core::ptr::null_mut()) };
        static UNBOUND_ERROR: Cell<i32> = const { Cell::new(0) };
    }

    /// Binds `b` to this thread until the returned guard drops (restoring
    /// the previous binding, so simulated calls nest).
    pub fn bind(b: *mut Bound<CoreHal>) -> impl Drop {
        struct Restore(*mut Bound<CoreHal>);
        impl Drop for Restore {
            fn drop(&mut self) {
                CURRENT.with(|c| c.set(self.0));
            }
        }
        Restore(CURRENT.with(|c| c.replace(b)))
    }

    pub fn current() -> *mut Bound<CoreHal> {
        CURRENT.with(Cell::get)
    }

    pub fn set_unbound_error(code: i32) {
        UNBOUND_ERROR.with(|c| c.set(code));
    }

    pub fn unbound_error() -> i32 {
        UNBOUND_ERROR.with(Cell::get)
    }
}

#[cfg(not(target_arch = "xtensa"))]
pub(crate) use host_binding::bind;
#[cfg(not(target_arch = "xtensa"))]
use host_binding::{current, set_unbound_error, unbound_error};

/// Runs `f` on the calling core's state. Errors when no core is bound (host
/// only) or when the runtime is re-entered; the error is recorded as the
/// core's last error either way.
pub fn with_core<R>(f: impl FnOnce(&mut Bound<CoreHal>) -> Result<R, Error>) -> Result<R, Error> {
    let p = current();
    if p.is_null() {
        set_unbound_error(Error::NoCore.code());
        return Err(Error::NoCore);
    }
    // SAFETY: a bound pointer stays valid while bound (the guard of `bind`
    // outlives every call made under it) and is used by this thread only;
    // `busy` makes sure no second &mut is formed while one is live.
    let b = unsafe { &mut *p };
    if b.busy {
        b.last_error = Error::Reentered.code();
        return Err(Error::Reentered);
    }
    b.busy = true;
    let r = f(b);
    b.busy = false;
    if let Err(e) = &r {
        b.last_error = e.code();
    }
    r
}

/// The calling core's last error, or the thread's when no core is bound.
pub fn last_error() -> i32 {
    let p = current();
    if p.is_null() {
        return unbound_error();
    }
    // SAFETY: as in with_core; only a plain field is read.
    unsafe { (*p).last_error }
}
