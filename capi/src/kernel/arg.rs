//! How the generated wrapper reads each argument kind and hands back the
//! op's result.

use super::{OwnedTensor, Result, Tensor, Value};
use crate::invocation as inv;

/// A kernel argument type: how the wrapper reads it (in declared order).
pub trait KernelArg: Sized {
    /// Reads the next argument (a zero value on failure; the invocation's
    /// status then says so and the op is not run).
    fn next() -> Self;
}

impl KernelArg for Tensor<'_> {
    fn next() -> Self {
        // SAFETY: the invocation's tensor argument: storage the host gave
        // this call (a zeroed view when marshalling failed: its accessors
        // refuse it), not memory of the core's heaps.
        unsafe { Tensor::from_view(inv::next_tensor()) }
    }
}

impl KernelArg for Value {
    fn next() -> Self {
        inv::next_scalar().map_or(Value::Int(0), |s| if s.dtype.is_float() { Value::Float(s.value.to_f64()) } else { Value::Int(s.value.to_i64()) })
    }
}

impl KernelArg for i32 {
    fn next() -> Self {
        inv::next_int().unwrap_or(0)
    }
}

impl KernelArg for f32 {
    fn next() -> Self {
        inv::next_float().unwrap_or(0.0)
    }
}

impl KernelArg for i64 {
    fn next() -> Self {
        inv::next_long_long().unwrap_or(0)
    }
}

impl KernelArg for f64 {
    fn next() -> Self {
        inv::next_double().unwrap_or(0.0)
    }
}

/// What an op may return: a tensor (returned with
/// `customop_return_tensor`), or a `Result` of one (an error is printed
/// to the printf ring and returns nothing, so cleanup reports the output
/// as not written).
pub trait KernelOutput {
    /// Hands the result to the runtime.
    fn hand_back(self);
}

impl KernelOutput for Tensor<'_> {
    fn hand_back(self) {
        let _ = inv::return_tensor(self.view());
    }
}

impl KernelOutput for OwnedTensor {
    fn hand_back(self) {
        // Copied into the output, then freed when `self` drops.
        self.tensor().hand_back();
    }
}

impl<T: KernelOutput> KernelOutput for Result<T> {
    fn hand_back(self) {
        match self {
            Ok(t) => t.hand_back(),
            Err(e) => crate::kprint!("custom op failed: {e}"),
        }
    }
}
