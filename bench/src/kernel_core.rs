//! The kernel-API benches' core and tensors, shared by the Criterion
//! benches (`benches/host.rs`) and the instruction-count example
//! (`examples/stream_fixed_cost.rs`), so both measure the same setup.

use crate::{fill, DATA};
use neuron_hal::platform::Q7;
use neuron_hal_mock::MockSoc;
use neuron_runtime::marshal::descriptor::{Location, RawTensorDesc, TensorDesc};
use neuron_runtime::marshal::tensor::TensorView;
use neuroncustomop::ffi::translate::neuron_translate_ctx;
use neuroncustomop::host::SimCore;
use neuroncustomop::kernel::{Dtype, Tensor};

/// Elements per kernel-API benchmark (16 KiB of f32).
pub const KN: usize = 4096;

/// A simulated core (runtime initialised) and a 1-D f32 tensor of `KN`
/// elements at `DATA` (a dynamic window, so the first access misses).
pub fn kernel_core() -> (SimCore, Tensor<'static>, Tensor<'static>) {
    let soc = MockSoc::new().expect("mock SoC");
    let mut core = SimCore::new(soc.core(0).expect("core 0"));
    core.state().init_prologue();
    core.state().init_dma_queue().expect("DMA arms");
    // Both tensors written, as a run's are. A page of the mock's sparse
    // HBM that was never touched is absent from the host's page tables, and
    // a copy that ends just before an absent page pays ~110 ns on this
    // machine (the hardware's next-page prefetch walks the page tables and
    // finds nothing, every time): an artefact of the mock, not of the
    // runtime, and one that made the rows depend on which benches ran
    // first (`accessor_write` fills the output tensor).
    fill(core.state(), DATA, 2 * KN * 4);
    let ctx = core.enter(|| neuron_translate_ctx()).cast();
    let d = |addr| {
        let desc = RawTensorDesc::contiguous(Location::Hbm, Dtype::Fp32.code(), addr, &[KN as u64]).expect("shape");
        let desc = TensorDesc::parse(&desc.to_bytes(), &Q7).expect("valid");
        // SAFETY: the bench's tensors in the mock SoC's HBM, outside every heap.
        unsafe { Tensor::from_view(TensorView::from_desc(&desc, ctx)) }
    };
    (core, d(DATA), d(DATA + (KN * 4) as u64))
}
