//! Multicore identity (SPEC §10): SPMD, no barrier.

use crate::current::with_core;
use neuron_hal::platform::CORE_COUNT;

/// `get_cpu_id`: this core's PRID, read once and cached; in
/// `[0, get_cpu_count())`. -1 if no core is bound (host only).
#[unsafe(no_mangle)]
pub extern "C" fn get_cpu_id() -> i32 {
    with_core(|b| {
        b.cpu_queried = true;
        Ok(b.state.cpu_id() as i32)
    })
    .unwrap_or(-1)
}

/// `get_cpu_count`: always 8.
#[unsafe(no_mangle)]
pub extern "C" fn get_cpu_count() -> i32 {
    // Noted on the core, if one is bound (no error recorded otherwise):
    // the simulator reports a kernel that slices by core run on one.
    if crate::current::is_bound() {
        let _ = with_core(|b| {
            b.cpu_queried = true;
            Ok(())
        });
    }
    CORE_COUNT as i32
}
