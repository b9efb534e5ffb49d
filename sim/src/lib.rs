//! Host side: simulated cores on host threads, and the simulator that
//! places tensors in mock HBM, launches ops on 1 or 8 cores and reads the
//! result back. Re-exported by `neuroncustomop` as `neuroncustomop::host`.

// The C-ABI crate's parts the simulator drives, under the paths they had
// when the simulator was a module of it (`crate::binding`, ...).
#[cfg(test)]
use neuron_capi::kernel;
use neuron_capi::{abort, binding, ffi};

#[cfg(test)]
mod accessor_tests;
#[cfg(test)]
mod host_elements_tests;

// The crate is host-only; the `cfg`s on the modules holding C exports are
// for the generated header (build.rs), which then guards their
// declarations with `#if !defined(NEURON_DEVICE)`.
mod alt_stack;
mod core_pool;
pub mod coverage;
pub(crate) mod crash;
/// How a crash report's faulting-address line starts (the tools symbolize it).
pub use crash::PC_LINE_PREFIX as CRASH_PC_LINE_PREFIX;
pub use sanitizer_report::FINDING_PCS_OPEN;
pub mod device_limits;
pub mod diagnostics;
#[cfg(not(target_arch = "xtensa"))]
pub mod element_hooks;
#[cfg(not(target_arch = "xtensa"))]
pub mod error_site;
pub mod fault;
#[cfg(not(target_arch = "xtensa"))]
pub mod host_elements;
pub mod input_pages;
#[cfg(not(target_arch = "xtensa"))]
pub mod kernel_heap;
pub mod output_sink;
pub mod remedy;
mod report_text;
pub mod reserve;
pub mod sanitizer_report;
#[cfg(not(target_arch = "xtensa"))]
pub mod sim_call;
mod sim_core;
#[cfg(not(target_arch = "xtensa"))]
pub mod sim_ffi;
pub mod simulator;
pub mod site_text;
#[cfg(not(target_arch = "xtensa"))]
pub mod staging_ffi;
pub mod writer_map;
mod writes;

pub use neuron_capi::ffi::tcm_watch;
pub use sim_core::{with_bound_hal, SimCore};
pub use simulator::{Arg, CoreReport, RunFailure, RunReport, Simulator};
// What a driver of `Simulator` names: the op table and the kinds and
// dtypes of its arguments.
pub use crate::ffi::launch::OpTable;
pub use neuron_runtime::marshal::dtype::Dtype;
pub use neuron_runtime::marshal::invocation::ArgKind;
