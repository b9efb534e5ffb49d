//! `libneuroncustomop`: the library custom-op kernels link against.
//!
//! A shell: the C-ABI logic and the Rust kernel API are `neuron-capi`, the
//! host simulator (simulated cores on host threads, `neuron_sim_*`) is
//! `neuron-sim`; this crate re-exports both, so the one staticlib it builds
//! holds every export (and the C math library's, `neuron-libm`), and Rust
//! kernels name one crate. See
//! `docs/architecture.md`.
#![no_std]

pub use neuron_capi::{custom_ops, ffi, hal, kernel, kprint, no_unwind, runtime};

// The C math library (`expf`, `powf`, ...): linked for its exports, under
// the C names on the device and prefixed on the host (see the crate).
use neuron_libm as _;

#[cfg(target_arch = "xtensa")]
pub use neuron_capi::device;

/// Host side: simulated cores on host threads, and the simulator that
/// places tensors in mock HBM, launches ops on 1 or 8 cores and reads the
/// result back (the `neuron-sim` crate).
#[cfg(not(target_arch = "xtensa"))]
pub use neuron_sim as host;
