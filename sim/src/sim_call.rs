//! `neuron_sim_call`: run host-side C++ that uses the tensor surface (a
//! custom op's shape function) on a simulated core of its own.
//!
//! Why: a shape function builds tensors with the torch factories, which
//! allocate from a core's HBM heap and so need a core bound to the calling
//! thread. The call gets a fresh SoC and core (initialised as the stack
//! switch's prologue does), so evaluating shapes never disturbs the heaps,
//! counters or reports of the simulator that runs the kernel.

use super::simulator::Simulator;
use core::ffi::c_void;
use neuron_runtime::Error;

/// The function `neuron_sim_call` runs: returns 0 or its own code (> 0).
pub type SimCallFn = unsafe extern "C" fn(ctx: *mut c_void) -> i32;

/// Runs `f(ctx)` with core 0 of a fresh simulated SoC bound to the calling
/// thread, its runtime initialised (heaps, translate context, the DMA
/// queue armed), so the C entry points act on it. Returns `f`'s result when it is not 0; else the
/// last error a C entry point recorded on the core during the call (0:
/// none). `NoCore` (71) when `f` is null or no SoC can be made.
///
/// # Safety
/// `f` must be null or sound to call with `ctx`; it must not keep
/// pointers to tensors it made past its return (the core is dropped).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_call(f: Option<unsafe extern "C" fn(ctx: *mut c_void) -> i32>, ctx: *mut c_void) -> i32 {
    let Some(f) = f else { return Error::NoCore.code() };
    let Ok(mut sim) = Simulator::new() else { return Error::NoCore.code() };
    let core = sim.core(0);
    // A shape function runs where the vendor's runs it, on the host, where
    // no device heap bounds the tensors it makes: its inputs are rebuilt
    // at their full size and its output is one. The core's HBM heap is
    // placed over the SoC's HBM past the scratch areas, where the
    // simulator places tensors (sparse: only what
    // the factories fill is backed) before the prologue, whose own
    // placement then leaves it as it is; a kernel's heap stays the device's.
    let p = *neuron_hal::Hal::platform(core.state().hal());
    let at = super::simulator::TENSOR_AREA_OFFSET;
    core.state().hbm().init(p.hbm_soc_base + at, p.hbm_size - at);
    core.state().init_prologue();
    // Armed as `customop_setup` arms it: the factories fill through DMA.
    if let Err(e) = core.state().init_dma_queue() {
        return e.code();
    }
    let _crash = super::crash::running_shape();
    // SAFETY: the caller vouches for f and ctx; the core stays bound (and
    // alive, owned by `sim`) for the whole call.
    let returned = core.enter(|| unsafe { f(ctx) });
    if returned != 0 {
        returned
    } else {
        core.last_error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn cpu_and_alloc(ctx: *mut c_void) -> i32 {
        // SAFETY: ctx is the test's i32.
        let out = unsafe { &mut *ctx.cast::<i32>() };
        *out = crate::ffi::cpu::get_cpu_id();
        let p = crate::ffi::heap::tcm_malloc(64);
        if p.is_null() {
            return 1;
        }
        crate::ffi::heap::tcm_free(p);
        0
    }

    unsafe extern "C" fn fails(_: *mut c_void) -> i32 {
        7
    }

    unsafe extern "C" fn records_an_error(_: *mut c_void) -> i32 {
        // A refused call records its code on the bound core.
        crate::ffi::heap::tcm_free(0x10 as *mut c_void);
        0
    }

    #[test]
    fn runs_on_a_bound_initialised_core_and_reports_errors() {
        let mut cpu = -1i32;
        // SAFETY: the callbacks take the ctx they are given.
        unsafe {
            assert_eq!(neuron_sim_call(Some(cpu_and_alloc), (&mut cpu as *mut i32).cast()), 0);
            assert_eq!(cpu, 0);
            assert_eq!(neuron_sim_call(Some(fails), core::ptr::null_mut()), 7);
            assert_ne!(neuron_sim_call(Some(records_an_error), core::ptr::null_mut()), 0);
            assert_eq!(neuron_sim_call(None, core::ptr::null_mut()), Error::NoCore.code());
        }
    }
}
