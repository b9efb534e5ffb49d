//! The host binding: a simulated core is bound to the thread that runs it
//! (`bind`, restored when its guard drops, so simulated calls nest), and
//! `BINDING_EPOCH` counts every bind and unbind for the accessors' tokens.

use super::{CoreHal, CoreSlot};
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
    if let Some(f) = ON_REBIND.with(Cell::get) {
        f();
    }
}

/// Has `f` called on this thread after every bind and unbind here (the
/// simulator's C++ accessor entries close themselves: an open one then
/// always belongs to the core bound now, so its fast path need not read
/// the epoch per element).
pub fn on_rebind(f: fn()) {
    ON_REBIND.with(|c| c.set(Some(f)));
}

std::thread_local! {
    static CURRENT: Cell<*mut CoreSlot<CoreHal>> = const { Cell::new(core::ptr::null_mut()) };
    /// The bound core's PRID, read from its HAL at bind time, for the
    /// abort report (which must not enter the state).
    static CPU: Cell<i32> = const { Cell::new(-1) };
    static UNBOUND_ERROR: Cell<i32> = const { Cell::new(0) };
    /// What [`on_rebind`] set for this thread.
    static ON_REBIND: Cell<Option<fn()>> = const { Cell::new(None) };
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
