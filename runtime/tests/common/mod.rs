//! Shared helpers of the runtime's host tests.
// Included by several test binaries; each uses only some of it.
#![allow(dead_code)]

use neuron_hal::dma::DmaDirection;
use neuron_hal::platform::{Platform, Q7};
use neuron_hal::Hal;
use neuron_hal_mock::{MockCore, MockSoc};
use neuron_runtime::CoreState;
use std::sync::Arc;

/// A test tensor area well past hbm_scratch.
pub const HBM: u64 = Q7.hbm_soc_base + (1 << 30);

/// A boxed (so it never moves) core state for `cpu`, prologue run.
pub fn state(cpu: u32) -> (Arc<MockSoc>, Box<CoreState<MockCore>>) {
    let soc = MockSoc::new().unwrap();
    let s = state_on(&soc, cpu);
    (soc, s)
}

/// As `state`, on an existing SoC.
pub fn state_on(soc: &Arc<MockSoc>, cpu: u32) -> Box<CoreState<MockCore>> {
    let mut s = Box::new(CoreState::new(soc.core(cpu).unwrap()));
    s.init_prologue();
    s
}

/// As `state`, DMA armed.
pub fn armed(cpu: u32) -> (Arc<MockSoc>, Box<CoreState<MockCore>>) {
    let (soc, mut s) = state(cpu);
    s.init_dma_queue().unwrap();
    (soc, s)
}

/// A deterministic byte pattern.
pub fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u32).wrapping_mul(31).wrapping_add(seed as u32 * 7 + (i >> 8) as u32) as u8).collect()
}

/// Reads `n` bytes of SoC memory.
pub fn soc_read(soc: &MockSoc, addr: u64, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    soc.read(addr, &mut v).unwrap();
    v
}

/// A mock core seen through a distorting lens: the DMA completion
/// counter is offset (to start it near the u32 wrap), and
/// `MEM_WINDOW0_LO` may read back a wrong value.
pub struct Lens {
    pub inner: MockCore,
    pub completion_offset: u32,
    pub window0: Option<u64>,
}

// SAFETY: every method forwards to the inner `MockCore` (whose impl
// keeps the contract) except the completion counter's offset, which
// changes where it starts but counts the same completions, and the
// readback of `MEM_WINDOW0_LO`, which only feeds a check.
unsafe impl Hal for Lens {
    fn platform(&self) -> &Platform {
        self.inner.platform()
    }
    fn prid(&self) -> u32 {
        self.inner.prid()
    }
    fn nx_ptr(&self, nx: u32) -> *mut u8 {
        self.inner.nx_ptr(nx)
    }
    unsafe fn write_window_register(&self, w: neuron_hal::WindowId, region_base: u64) {
        // SAFETY: the lens forwards its caller's contract to the core it wraps.
        unsafe { self.inner.write_window_register(w, region_base) }
    }
    fn memw(&self) {
        self.inner.memw()
    }
    unsafe fn dma_doorbell(&self, dir: DmaDirection, count: u32) {
        // SAFETY: the lens forwards its caller's contract to the core it wraps.
        unsafe { self.inner.dma_doorbell(dir, count) }
    }
    fn dma_completed(&self, dir: DmaDirection) -> u32 {
        self.inner.dma_completed(dir).wrapping_add(self.completion_offset)
    }
    unsafe fn dma_arm(&self, dir: DmaDirection) {
        // SAFETY: the lens forwards its caller's contract to the core it wraps.
        unsafe { self.inner.dma_arm(dir) }
    }
    fn read_window_register(&self, reg: u32) -> u64 {
        match self.window0 {
            Some(v) if reg == self.inner.platform().mem_window0_nx => v,
            _ => self.inner.read_window_register(reg),
        }
    }
    fn invocation_block(&self) -> u64 {
        self.inner.invocation_block()
    }
    fn stack_pointer(&self) -> usize {
        self.inner.stack_pointer()
    }
    fn stack_limit(&self) -> usize {
        self.inner.stack_limit()
    }
    unsafe fn set_stack_limit(&self, isl: usize) {
        // SAFETY: the lens forwards its caller's contract to the core it wraps.
        unsafe { self.inner.set_stack_limit(isl) }
    }
}

/// A boxed state over a [`Lens`].
pub fn lens_state(completion_offset: u32, window0: Option<u64>) -> (Arc<MockSoc>, Box<CoreState<Lens>>) {
    let soc = MockSoc::new().unwrap();
    let lens = Lens { inner: soc.core(0).unwrap(), completion_offset, window0 };
    let mut s = Box::new(CoreState::new(lens));
    s.init_prologue();
    (soc, s)
}
