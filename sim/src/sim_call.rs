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
    // Nothing but the shape is kept of what it computes: a factory's zero
    // fill of untouched memory is left out (the output of a vendor shape
    // function is `torch::zeros` of the op's output size).
    sim.soc().elide_zero_fills();
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
    // SAFETY: the SoC's tensor area, where only this shape call's core
    // allocates while it runs (the simulator's run is not under way).
    unsafe { core.state().hbm().init(p.hbm_soc_base + at, p.hbm_size - at) };
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
        // SAFETY: the block just allocated, used by nothing else.
        unsafe { crate::ffi::heap::tcm_free(p) };
        0
    }

    unsafe extern "C" fn fails(_: *mut c_void) -> i32 {
        7
    }

    unsafe extern "C" fn records_an_error(_: *mut c_void) -> i32 {
        // A refused call records its code on the bound core.
        // SAFETY: a foreign pointer, refused without freeing anything.
        unsafe { crate::ffi::heap::tcm_free(0x10 as *mut c_void) };
        0
    }

    /// DMA descriptors the bound core's engine completed, both ways.
    fn descriptors() -> u64 {
        use neuron_hal::DmaDirection::{M2S, S2M};
        neuron_capi::binding::with_core(|b| Ok([M2S, S2M].map(|d| b.state.hal().counters().dma_descriptors(d)).iter().sum())).unwrap_or(u64::MAX)
    }

    unsafe extern "C" fn big_zeros(ctx: *mut c_void) -> i32 {
        use neuron_capi::kernel::ops;
        use neuron_capi::kernel::Dtype;
        // SAFETY: ctx is the test's [u64; 3].
        let out = unsafe { &mut *ctx.cast::<[u64; 3]>() };
        let before = descriptors();
        // A vendor shape function's output: 256 MiB of zeros, which a
        // fill would stream through 64 Ki DMA descriptors.
        let Ok(z) = ops::zeros(&[64 << 20], Dtype::Fp32) else { return 1 };
        out[0] = descriptors() - before;
        // Zeros over memory that holds data are written.
        let Ok(small) = ops::ones(&[1024], Dtype::Fp32) else { return 2 };
        if ops::fill_(&small.tensor(), 0i64).is_err() {
            return 3;
        }
        let mut back = [1.0f32; 1024];
        let ok = neuron_capi::binding::with_core(|b| {
            // SAFETY: `back` is a live buffer of the tensor's 4096 bytes.
            unsafe { b.state.memcpy_from_soc(back.as_mut_ptr().cast(), small.tensor().view().storage.addr, 4096) }
        });
        out[1] = u64::from(ok.is_ok() && back.iter().all(|&x| x.to_bits() == 0));
        out[2] = u64::from(z.tensor().view().numel == 64 << 20);
        0
    }

    #[test]
    fn a_shape_functions_zeros_of_untouched_memory_are_not_written_and_other_fills_are() {
        let mut out = [u64::MAX; 3];
        // SAFETY: the callback takes the ctx it is given.
        assert_eq!(unsafe { neuron_sim_call(Some(big_zeros), (&mut out as *mut [u64; 3]).cast()) }, 0);
        assert_eq!(out[0], 0, "256 MiB of zeros made DMA descriptors");
        assert_eq!(out[1..], [1, 1]);
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
