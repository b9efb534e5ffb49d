//! The element types a kernel may view a tensor as: one per marshallable
//! dtype (`u8 i8 i16 i32 i64 f16 bf16 f32`).

pub use neuron_runtime::ops::elem::Elem as Element;
