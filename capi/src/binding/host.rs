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

/// Runs `f` with `b` bound to this thread, then restores the previous
/// binding (so simulated calls nest), also when `f` unwinds. A closure,
/// not a returned guard: a guard could be `mem::forget`-ed, leaving the
/// thread bound to a slot that is gone (issue 43, hole 7).
///
/// ```compile_fail,E0061
/// # use neuron_capi::binding::{bind, CoreHal, CoreSlot};
/// # fn f(slot: &mut CoreSlot<CoreHal>) {
/// let guard = bind(slot);
/// core::mem::forget(guard);
/// # }
/// ```
pub fn bind<R>(b: &mut CoreSlot<CoreHal>, f: impl FnOnce() -> R) -> R {
    // Restores on drop: `f` may unwind (a kernel panic on the host).
    struct Restore(*mut CoreSlot<CoreHal>, i32);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
            CPU.with(|c| c.set(self.1));
            rebound();
        }
    }
    let cpu = neuron_hal::Hal::prid(b.get_mut().state.hal()) as i32;
    let _restore = Restore(CURRENT.with(|c| c.replace(b)), CPU.with(|c| c.replace(cpu)));
    rebound();
    f()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binding::Bound;
    use neuron_runtime::CoreState;
    use std::boxed::Box;

    /// The binding lasts exactly as long as the closure: nested binds
    /// restore the outer one, and a closure that unwinds still unbinds
    /// (nothing is left pointing at a slot that may be gone).
    #[test]
    // A mock core maps memory with memfd_create, which Miri cannot run.
    #[cfg_attr(miri, ignore)]
    fn a_binding_ends_with_its_closure_even_on_unwind() {
        let soc = neuron_hal_mock::MockSoc::new().unwrap();
        let mut a = Box::new(CoreSlot::new(Bound::new(CoreState::new(soc.core(0).unwrap()))));
        let mut b = Box::new(CoreSlot::new(Bound::new(CoreState::new(soc.core(1).unwrap()))));
        let pa: *mut CoreSlot<CoreHal> = &mut *a;
        let pb: *mut CoreSlot<CoreHal> = &mut *b;
        assert!(current().is_null());
        bind(&mut a, || {
            assert_eq!(current(), pa);
            bind(&mut b, || assert_eq!((current(), abort_cpu()), (pb, 1)));
            assert_eq!((current(), abort_cpu()), (pa, 0));
        });
        assert!(current().is_null());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| bind(&mut a, || panic!("kernel"))));
        assert!(r.is_err());
        assert_eq!((current(), abort_cpu()), (core::ptr::null_mut(), -1));
    }

    /// A closure that holds the bound core's HAL marks it busy: an entry
    /// point it calls is refused instead of forming `&mut Bound` beside the
    /// `&HAL`, and the core is free again afterwards.
    #[test]
    // A mock core maps memory with memfd_create, which Miri cannot run.
    #[cfg_attr(miri, ignore)]
    fn a_closure_holding_the_hal_marks_the_core_busy() {
        let soc = neuron_hal_mock::MockSoc::new().unwrap();
        let mut a = Box::new(CoreSlot::new(Bound::new(CoreState::new(soc.core(2).unwrap()))));
        bind(&mut a, || {
            let mut inner = None;
            crate::binding::with_open_hal(|_| inner = Some(crate::binding::with_core(|_| Ok(()))));
            assert_eq!(inner, Some(Err(neuron_runtime::Error::Reentered)));
            let mut inner = None;
            let _ = crate::binding::noted_translate_hit(core::ptr::null(), 0, |_| inner = Some(crate::binding::with_core(|_| Ok(()))));
            assert_eq!(inner, Some(Err(neuron_runtime::Error::Reentered)));
            assert_eq!(crate::binding::with_core(|_| Ok(7)), Ok(7), "free again");
        });
    }
}
