//! Fault injection for the tests of the abort path and of the
//! simulator's verdict (host only).

use core::cell::Cell;
use neuron_runtime::Error;

std::thread_local! {
    /// Bit `c` set: the next launch of core `c` from this thread behaves
    /// as if its host thread could not be spawned (taken once). Per
    /// launching thread, so parallel tests do not see each other's.
    static FAIL_SPAWN: Cell<u32> = const { Cell::new(0) };
    /// The next reset of a simulator on this thread fails (taken once).
    static FAIL_RESET: Cell<bool> = const { Cell::new(false) };
}

/// Makes the next [`Simulator::reset`](crate::Simulator::reset) on the
/// calling thread fail before it changes anything, as a refused
/// `fallocate` would: `neuron_sim_reset` must say `SimResetFailed`.
#[doc(hidden)]
pub fn fail_next_reset() {
    FAIL_RESET.with(|f| f.set(true));
}

/// Whether this reset is to fail (clears the request).
pub(crate) fn take_reset_failure() -> bool {
    FAIL_RESET.with(|f| f.replace(false))
}

/// Makes the next launch of core `cpu` from the calling thread fail to
/// spawn its thread, as an exhausted host would: the run must fail, never
/// pass on a default report.
#[doc(hidden)]
pub fn fail_next_spawn(cpu: u32) {
    FAIL_SPAWN.with(|f| f.set(f.get() | 1 << (cpu % 32)));
}

/// Whether core `cpu`'s spawn is to fail now (clears the request).
pub(crate) fn take_spawn_failure(cpu: u32) -> bool {
    let bit = 1 << (cpu % 32);
    FAIL_SPAWN.with(|f| {
        let set = f.get() & bit != 0;
        f.set(f.get() & !bit);
        set
    })
}

/// Panics inside the body of an entry point (inside `with_core`, where
/// every C entry point's body runs), as a runtime bug would: the caller
/// must see the abort report, never an unwind.
#[doc(hidden)]
pub fn panic_inside_an_entry_point(message: &'static str) -> i32 {
    crate::binding::with_core(|_| -> Result<i32, Error> { panic!("{}", message) }).unwrap_or(-1)
}
