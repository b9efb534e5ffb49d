//! The Rust kernel API: what a Rust custom op is written against.
//!
//! - [`Tensor`]: a tensor argument (a copy of the `neuron_tensor` view),
//!   with the vendor's accessors: [`Tensor::accessor`] (per element, the
//!   one translate at the leaf), [`Tensor::const_accessor`] (read-only),
//!   [`Tensor::read_stream_accessor`] / [`Tensor::write_stream_accessor`],
//!   [`Tensor::tcm_accessor`], and the coherence policy.
//! - [`tcm_scope`]: `tcm_malloc` buffers ([`TcmBuf`]) that borrow a
//!   scope, so none outlives the core's binding.
//! - [`ops`]: the documented tensor operations.
//! - [`custom_ops!`](crate::custom_ops): the wrappers, launchers and the
//!   `get_func_*` table for a list of ops.
//! - [`kprint!`](crate::kprint): the device printf ring.
//!
//! Everything calls the runtime directly — the accessors, streams, TCM
//! copies, tensor operations, and the generated wrapper's invocation
//! steps — through the same functions the C exports are a thin shell over
//! (errors come back as values, not through `neuron_last_error`), so a
//! Rust kernel behaves exactly as a C++ one. Failures are [`Error`]s,
//! never panics.

mod accessor;
mod arg;
mod element;
mod layout;
mod leaf;
#[doc(hidden)]
pub mod macros;
pub mod ops;
mod print;
mod stream;
mod tcm;
mod tensor;

pub use accessor::{Accessor, ConstAccessor, ElemRef, Mode, ReadOnly, ReadWrite, SubAccessor};
pub use arg::{KernelArg, KernelOutput};
pub use element::Element;
pub use neuron_runtime::access::CoherencePolicy;
pub use neuron_runtime::half::{bf16, f16};
pub use neuron_runtime::marshal::args::ScalarValue as Value;
pub use neuron_runtime::marshal::dtype::Dtype;
pub use neuron_runtime::{Error, Result};
pub use print::print_fmt;
pub use stream::{ReadStream, WriteStream};
pub use tcm::{tcm_scope, TcmAccessor, TcmBuf, TcmScope};
pub use tensor::{OwnedTensor, Tensor};

/// `neuron_translate(p.ctx, p.addr)` for a Rust kernel: the pointer through
/// which this core reaches `p` now, valid until the next translate (a
/// miss may reprogram the window it points into). The hit on this core's
/// open context is inline; anything else takes the full translate, which
/// records and returns the error.
#[inline(always)]
pub fn translate(p: neuron_runtime::Q7PtrType) -> Result<*mut u8> {
    crate::translate::translate(p.ctx, p.addr)
}

/// `get_cpu_id()`: this core's index, in `0..cpu_count()`.
pub fn cpu_id() -> u32 {
    crate::invocation::cpu_id().unwrap_or(0)
}

/// `get_cpu_count()`.
pub fn cpu_count() -> u32 {
    crate::invocation::cpu_count()
}

/// `get_dst_tensor()`: the output storage, written in place (the
/// multicore form); returning it afterwards copies nothing.
pub fn dst_tensor() -> Result<Tensor<'static>> {
    // SAFETY: the invocation's output, storage the host gave this call.
    crate::invocation::dst_tensor().map(|v| unsafe { Tensor::from_view(v) })
}
