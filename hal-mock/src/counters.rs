//! What the mock hardware saw, for the per-run diagnostics.

use neuron_hal::dma::DmaDirection;
use neuron_hal::platform::DYNAMIC_WINDOWS;
use std::cell::Cell;

/// Hardware-side event counts of one core. Translate hits and misses are
/// counted by the runtime (a hit never reaches the hardware).
#[derive(Debug, Default)]
pub struct CoreCounters {
    pub(crate) window_programs: [Cell<u64>; DYNAMIC_WINDOWS],
    pub(crate) fences: Cell<u64>,
    pub(crate) dma_descriptors: [Cell<u64>; 2],
    pub(crate) dma_bytes: [Cell<u64>; 2],
    pub(crate) dma_faults: Cell<u64>,
}

impl CoreCounters {
    /// Times the register of dynamic window `i` was written.
    pub fn window_programs(&self, i: usize) -> u64 {
        self.window_programs[i].get()
    }
    /// All window-register writes.
    pub fn total_window_programs(&self) -> u64 {
        self.window_programs.iter().map(Cell::get).sum()
    }
    /// `memw` fences executed.
    pub fn fences(&self) -> u64 {
        self.fences.get()
    }
    /// Descriptors the engine completed in direction `d`.
    pub fn dma_descriptors(&self, d: DmaDirection) -> u64 {
        self.dma_descriptors[d.index()].get()
    }
    /// Bytes the engine moved in direction `d`.
    pub fn dma_bytes(&self, d: DmaDirection) -> u64 {
        self.dma_bytes[d.index()].get()
    }
    /// Descriptors that faulted (an address outside what the engine reaches).
    pub fn dma_faults(&self) -> u64 {
        self.dma_faults.get()
    }

    pub(crate) fn bump(c: &Cell<u64>, by: u64) {
        c.set(c.get().wrapping_add(by));
    }
}
