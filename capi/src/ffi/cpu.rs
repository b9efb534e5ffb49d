//! Multicore identity (SPEC §10): SPMD, no barrier.

/// `get_cpu_id`: this core's PRID, read once and cached; in
/// `[0, get_cpu_count())`. -1 if no core is bound (host only).
#[unsafe(no_mangle)]
pub extern "C" fn get_cpu_id() -> i32 {
    crate::invocation::cpu_id().map_or(-1, |c| c as i32)
}

/// `get_cpu_count`: always 8.
#[unsafe(no_mangle)]
pub extern "C" fn get_cpu_count() -> i32 {
    crate::invocation::cpu_count() as i32
}
