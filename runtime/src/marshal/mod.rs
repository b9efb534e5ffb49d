//! Marshalling (SPEC §6): the dtype table, the 48-byte tensor descriptor,
//! the invocation block, the tensor view a kernel receives, and the
//! argument reader with the return path.
//!
//! The byte-level formats are documented in `docs/abi.md`.

pub mod args;
pub mod descriptor;
pub mod dtype;
pub mod invocation;
pub mod tensor;

pub use args::{ArgState, BlockSource, Scalar, ScalarValue};
pub use descriptor::{Location, RawTensorDesc, ShapeWidth, TensorDesc, DESC_BYTES};
pub use dtype::Dtype;
pub use invocation::{ArgKind, InvocationBuilder, InvocationHeader, HEADER_BYTES, MAX_ARGS, MAX_BLOCK_BYTES};
pub use tensor::{TensorView, MAX_DIMS};
