//! Host side: simulated cores on host threads, and the simulator that
//! places tensors in mock HBM, launches ops on 1 or 8 cores and reads the
//! result back.

pub mod coverage;
mod crash;
pub mod diagnostics;
pub mod fault;
mod report_text;
pub mod sim_call;
mod sim_core;
pub mod sim_ffi;
pub mod simulator;
mod writes;

pub use sim_core::{with_bound_hal, SimCore};
pub use simulator::{Arg, CoreReport, RunFailure, RunReport, Simulator};
