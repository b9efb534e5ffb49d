//! How the generated wrapper reads each argument kind and hands back the
//! op's result.

use super::{OwnedTensor, Result, Tensor, Value};
use crate::ffi::customop as c;

/// A kernel argument type: how the wrapper reads it (in declared order).
pub trait KernelArg: Sized {
    /// Reads the next argument (a zero value on failure; the invocation's
    /// status then says so and the op is not run).
    fn next() -> Self;
}

impl KernelArg for Tensor {
    fn next() -> Self {
        Tensor::from_view(c::customop_next_tensor())
    }
}

impl KernelArg for Value {
    fn next() -> Self {
        let s = c::customop_next_scalar();
        if s.is_float != 0 {
            Value::Float(s.f)
        } else {
            Value::Int(s.i)
        }
    }
}

impl KernelArg for i32 {
    fn next() -> Self {
        c::customop_next_int()
    }
}

impl KernelArg for f32 {
    fn next() -> Self {
        c::customop_next_float()
    }
}

impl KernelArg for i64 {
    fn next() -> Self {
        c::customop_next_long_long()
    }
}

impl KernelArg for f64 {
    fn next() -> Self {
        c::customop_next_double()
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

impl KernelOutput for Tensor {
    fn hand_back(self) {
        // SAFETY: the view is a live local.
        let _ = unsafe { c::customop_return_tensor(self.view()) };
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
