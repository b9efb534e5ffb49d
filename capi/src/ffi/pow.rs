//! `pow` with a tensor exponent (SPEC §11: tensor^tensor and
//! scalar^tensor; tensor^scalar is `neuron_op_pow` in `ops`). Floating
//! point only, elementwise, no broadcasting, computed in f32 like every
//! floating-point op of the runtime.

use super::access::view;
use super::status;
use crate::binding::with_core;
use neuron_runtime::marshal::tensor::TensorView;
use neuron_runtime::ops::elem::Elem;
use neuron_runtime::ops::engine::check_operands;
use neuron_runtime::Error;

/// `dst = base ^ exponent`, element by element (floating point).
///
/// # Safety
/// Tensor pointers null (refused) or readable; `dst`'s view names a
/// tensor the kernel may write (the output or an `empty`
/// result): its address is taken as given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_op_pow_tensor(base: *const TensorView, exponent: *const TensorView, dst: *const TensorView) -> i32 {
    status(with_core(|b| {
        let (x, e, d) = (view(base)?, view(exponent)?, view(dst)?);
        let dt = check_operands(&d, &[&x, &e])?;
        if !dt.is_float() {
            return Err(Error::DtypeNotSupported);
        }
        // SAFETY: this function's contract (`dst`).
        neuron_runtime::dispatch_dtype!(dt, T => unsafe { b.state.elementwise::<T>(&d, Some(&x), Some(&e), |_, a, p| T::from_f32(libm::powf(a.to_f32(), p.to_f32()))) }, _ => Err(Error::DtypeNotSupported))
    }))
}

/// `dst = base ^ exponent` for a scalar base (floating point).
///
/// # Safety
/// Tensor pointers null (refused) or readable; `dst`'s view names a
/// tensor the kernel may write (the output or an `empty`
/// result): its address is taken as given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_op_pow_scalar_base(base: f64, exponent: *const TensorView, dst: *const TensorView) -> i32 {
    status(with_core(|b| {
        let (e, d) = (view(exponent)?, view(dst)?);
        let dt = check_operands(&d, &[&e])?;
        if !dt.is_float() {
            return Err(Error::DtypeNotSupported);
        }
        let x = base as f32;
        // SAFETY: this function's contract (`dst`).
        neuron_runtime::dispatch_dtype!(dt, T => unsafe { b.state.elementwise::<T>(&d, Some(&e), None, |_, p, _| T::from_f32(libm::powf(x, p.to_f32()))) }, _ => Err(Error::DtypeNotSupported))
    }))
}
