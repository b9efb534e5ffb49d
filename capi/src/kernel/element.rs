//! The element types a kernel may view a tensor as: one per marshallable
//! dtype (`u8 i8 i16 i32 i64 f16 bf16 f32`). Sealed in the runtime: no
//! other type can be one (the accessors read raw tensor bytes as it).

pub use neuron_runtime::ops::elem::Elem as Element;
