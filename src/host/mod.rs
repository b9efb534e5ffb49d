//! Host side: simulated cores on host threads, and the simulator that
//! places tensors in mock HBM, launches ops on 1 or 8 cores and reads the
//! result back.

mod alt_stack;
pub mod coverage;
pub(crate) mod crash;
pub mod device_limits;
pub mod diagnostics;
pub mod element_hooks;
pub mod fault;
mod input_pages;
pub mod kernel_heap;
mod prefault;
mod report_text;
pub mod reserve;
pub mod sanitizer_report;
pub mod sim_call;
mod sim_core;
pub mod sim_ffi;
pub mod simulator;
pub mod tcm_watch;
mod writes;

pub use sim_core::{with_bound_hal, SimCore};
pub use simulator::{Arg, CoreReport, RunFailure, RunReport, Simulator};
// What a driver of `Simulator` names: the op table and the kinds and
// dtypes of its arguments.
pub use crate::ffi::launch::OpTable;
pub use neuron_runtime::marshal::dtype::Dtype;
pub use neuron_runtime::marshal::invocation::ArgKind;
