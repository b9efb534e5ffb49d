//! Shared setup for the host benchmarks: a mock core with its runtime
//! initialised, and HBM regions with known contents; [`kernel_core`] for
//! the kernel-API benches.

pub mod kernel_core;

use neuron_hal::platform::Q7;
use neuron_hal_mock::{MockCore, MockSoc};
use neuron_runtime::CoreState;

/// SoC address of the benchmark data (past hbm_scratch).
pub const DATA: u64 = Q7.hbm_soc_base + (1 << 30);

/// A core ready to run: heaps, translate context and DMA armed.
pub fn ready_core() -> Box<CoreState<MockCore>> {
    let soc = MockSoc::new().expect("mock SoC");
    let mut s = Box::new(CoreState::new(soc.core(0).expect("core 0")));
    s.init_prologue();
    s.init_dma_queue().expect("DMA arms");
    s
}

/// Fills `n` bytes of HBM at `addr` with a pattern.
pub fn fill(s: &CoreState<MockCore>, addr: u64, n: usize) {
    let v: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
    // SAFETY: the benchmark's core is idle while it places its data.
    unsafe { s.hal().soc().write(addr, &v) }.expect("HBM write");
}
