//! The tensor factory the C shell (`neuron_tensor_empty`) and the Rust
//! kernel API (`kernel::ops::empty`) both call: the runtime's allocation
//! plus, on the host, the simulator's fill sentinel. Neither shell calls
//! the other (the Rust API sits on the runtime, not on the C exports).

use crate::binding::with_core;
use neuron_runtime::marshal::tensor::TensorView;
use neuron_runtime::Error;

/// The tensor behind `neuron_tensor_empty` and the Rust `empty`: `shape`
/// of `dtype` in this core's HBM heap.
pub(crate) fn tensor_empty(dtype: u8, shape: &[i64]) -> Result<TensorView, Error> {
    with_core(|b| {
        if shape.len() > neuron_runtime::marshal::tensor::MAX_DIMS {
            return Err(Error::BadRank);
        }
        let t = crate::trace::quietly!(b.state.tensor_empty(dtype, shape));
        if let Ok(t) = &t {
            crate::trace::tensor(t.storage.addr, t.nbytes as u64, crate::trace::what::TENSOR);
        }
        #[cfg(not(target_arch = "xtensa"))]
        if t.is_err_and(|e| e == Error::OutOfMemory) {
            let elem = neuron_runtime::marshal::dtype::Dtype::from_code(dtype).map_or(1, |d| u64::from(d.elem_size()));
            let n = shape.iter().try_fold(elem, |n, &d| n.checked_mul(u64::try_from(d).ok()?)).unwrap_or(u64::MAX);
            b.explain_oom(crate::binding::explain::Heap::Hbm, n);
        }
        let t = t?;
        // The simulator's sentinel, not whatever the heap block held: an
        // element the kernel never writes stays recognisable (and is
        // reported if the tensor becomes the output).
        #[cfg(not(target_arch = "xtensa"))]
        {
            let soc = b.state.hal().soc();
            // SAFETY: the block was just allocated from this core's HBM
            // heap: no other core reaches it, and this one is here.
            unsafe { soc.fill(t.storage.addr, t.nbytes as u64, b.empty_fill) }.map_err(|_| Error::AddressUnmapped)?;
            // Its elements are unwritten until the kernel writes them: the
            // sanitizer watches reads of them.
            let name = std::format!("an empty tensor {shape:?} made by core {}", neuron_hal::Hal::prid(b.state.hal()));
            let kind = neuron_hal_mock::sanitizer::RegionKind::Scratch;
            soc.sanitizer().watch(t.storage.addr, t.nbytes as u64, u64::from(t.elem_size), b.empty_fill, kind, name);
        }
        Ok(t)
    })
}

/// Frees a tensor [`tensor_empty`] made (the C shell's `neuron_tensor_free`
/// and the Rust API's drop): the runtime's free, and on the host the
/// sanitizer stops watching it (the heap may hand the block out again).
pub(crate) fn tensor_free(b: &mut crate::binding::Bound<crate::binding::CoreHal>, t: &TensorView) -> Result<(), Error> {
    #[cfg(not(target_arch = "xtensa"))]
    b.state.hal().soc().sanitizer().unwatch(t.storage.addr);
    let r = crate::trace::quietly!(b.state.tensor_free(t));
    crate::trace::tensor_freed(t.storage.addr);
    r
}
