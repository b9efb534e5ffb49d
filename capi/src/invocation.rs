//! One invocation's marshalling as the Rust kernel API and the C exports
//! both call it (SPEC §6): setup, the argument readers, the output, the
//! return copy, cleanup and the per-core identity. Errors come back as
//! values; a reader's failure is also the invocation's status (the first
//! one since setup), which the generated wrapper checks before it runs the
//! op. The C exports in `ffi::customop` and `ffi::cpu` are a shell over
//! these (zero values and 0 / -1).

use crate::binding::{with_core, Bound, CoreHal};
use neuron_hal::platform::CORE_COUNT;
use neuron_runtime::marshal::args::{BlockSource, Scalar};
use neuron_runtime::marshal::tensor::TensorView;
use neuron_runtime::Result;

/// Runs a marshalling step, keeping its first failure as the status.
#[inline(always)]
fn step<R>(f: impl FnOnce(&mut Bound<CoreHal>) -> Result<R>) -> Result<R> {
    with_core(|b| {
        let r = f(b);
        if let Err(e) = &r {
            if b.invocation_status == 0 {
                b.invocation_status = e.code();
            }
        }
        r
    })
}

/// Records `e` as a failed step (the status, if the first, and the last
/// error).
#[inline(always)]
pub(crate) fn fail(e: neuron_runtime::Error) -> Result<()> {
    step(|_| Err(e))
}

/// A zero tensor: what a failed reader hands back.
#[inline(always)]
pub(crate) fn zero_tensor() -> TensorView {
    // SAFETY: TensorView is plain data (integers and a raw pointer); all
    // zeroes is a valid value (a null storage, rank 0).
    unsafe { core::mem::zeroed() }
}

/// `customop_setup(has_return)`: clears the status, arms the DMA queue,
/// binds the invocation block.
#[inline(always)]
pub fn setup(has_return: bool) -> Result<()> {
    let _ = with_core(|b| {
        b.invocation_status = 0;
        Ok(())
    });
    step(|b| b.state.setup(has_return, BlockSource::Mailbox))
}

/// The invocation's status: 0, or the first marshalling failure's code.
#[inline(always)]
pub fn status() -> i32 {
    with_core(|b| Ok(b.invocation_status)).unwrap_or_else(|e| e.code())
}

/// The next argument, a tensor; the zero tensor on failure (the status
/// says why). A bare view, not a `Result`: the C shell returns it as is,
/// and a tensor-sized `Result` in the frames of the custom-op path costs
/// its stack.
#[inline(always)]
pub fn next_tensor() -> TensorView {
    // On the device: built in the core's state (`Bound::view`), then
    // copied out, so no tensor-sized local sits above the reader's call
    // chain (the custom-op path's stack).
    #[cfg(target_arch = "xtensa")]
    {
        let _ = step(|b| {
            let r = b.state.next_tensor_into(&mut b.view);
            if r.is_err() {
                b.view = zero_tensor();
            }
            r
        });
        crate::binding::read_view()
    }
    #[cfg(not(target_arch = "xtensa"))]
    {
        let mut t = zero_tensor();
        let _ = step(|b| b.state.next_tensor_into(&mut t));
        t
    }
}

/// The next argument, a scalar (a 1-element tensor read through a
/// translate).
#[inline(always)]
pub fn next_scalar() -> Result<Scalar> {
    step(|b| b.state.next_scalar())
}

/// The next argument, an `int`.
#[inline(always)]
pub fn next_int() -> Result<i32> {
    step(|b| b.state.next_int())
}

/// The next argument, a `float`.
#[inline(always)]
pub fn next_float() -> Result<f32> {
    step(|b| b.state.next_float())
}

/// The next argument, a `long long`.
#[inline(always)]
pub fn next_long_long() -> Result<i64> {
    step(|b| b.state.next_long_long())
}

/// The next argument, an `int64_t`.
#[inline(always)]
pub fn next_int64() -> Result<i64> {
    step(|b| b.state.next_int64())
}

/// The next argument, a `double`.
#[inline(always)]
pub fn next_double() -> Result<f64> {
    step(|b| b.state.next_double())
}

/// `get_dst_tensor()`: the output storage, written in place; a later
/// return copies nothing.
#[inline(always)]
pub fn dst_tensor() -> Result<TensorView> {
    step(|b| b.state.get_dst_tensor())
}

/// `customop_return_tensor(t)`: copies `t` into the output (unless the
/// output was claimed).
#[inline(always)]
pub fn return_tensor(t: &TensorView) -> Result<()> {
    step(|b| {
        let r = b.state.return_tensor(t);
        #[cfg(not(target_arch = "xtensa"))]
        if r == Err(neuron_runtime::Error::DtypeMismatch) {
            b.explain_return_dtype(t.dtype);
        }
        r
    })
}

/// `customop_cleanup()`: drains DMA, flushes the printf ring, fences.
#[inline(always)]
pub fn cleanup() -> Result<()> {
    step(|b| b.state.cleanup())
}

/// `get_cpu_id()`: this core's index (noted on the core: a kernel that
/// slices its work by core).
#[inline(always)]
pub fn cpu_id() -> Result<u32> {
    with_core(|b| {
        b.cpu_queried = true;
        Ok(b.state.cpu_id())
    })
}

/// `get_cpu_count()` (noted on the core, if one is bound; no error is
/// recorded otherwise).
#[inline(always)]
pub fn cpu_count() -> u32 {
    if crate::binding::is_bound() {
        let _ = with_core(|b| {
            b.cpu_queried = true;
            Ok(())
        });
    }
    CORE_COUNT
}
