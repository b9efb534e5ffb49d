//! The dtype table (SPEC §6): the ISA dtype codes 0..=15, their names and
//! element sizes, and the eight that marshal.

/// An ISA dtype code (`NEURON_ISA_TPB_DTYPE`). Names are ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Dtype {
    /// No type.
    Invalid = 0,
    /// Unsigned 64-bit (does not marshal).
    Uint64 = 1,
    /// `u8` (c10 Byte).
    Uint8 = 2,
    /// `i8` (c10 Char).
    Int8 = 3,
    /// `i16` (c10 Short).
    Int16 = 4,
    /// Unsigned 16-bit (does not marshal).
    Uint16 = 5,
    /// `i32` (c10 Int).
    Int32 = 6,
    /// `i64` (c10 Long).
    Int64 = 7,
    /// IEEE half (c10 Half).
    Fp16 = 8,
    /// Unsigned 32-bit (does not marshal).
    Uint32 = 9,
    /// bfloat16 (c10 BFloat16).
    Bfloat16 = 10,
    /// FP32 with rounding (does not marshal: the original aborts on it).
    Fp32R = 11,
    /// `f32` (c10 Float).
    Fp32 = 12,
    /// FP8 E3 (does not marshal).
    Fp8Exp3 = 13,
    /// FP8 E4 (does not marshal).
    Fp8Exp4 = 14,
    /// FP8 E5 (does not marshal).
    Fp8Exp5 = 15,
}

/// The codes that marshal ([`Dtype::marshals`], in code order): exactly
/// the original's eight compare immediates (2, 3, 4, 6, 7, 8, 10, 12).
pub const MARSHALLABLE: [u8; 8] = {
    let (mut out, mut n, mut i) = ([0u8; 8], 0, 0);
    while i < Dtype::ALL.len() {
        if Dtype::ALL[i].marshals() {
            out[n] = Dtype::ALL[i].code();
            n += 1;
        }
        i += 1;
    }
    assert!(n == 8, "eight dtypes marshal");
    out
};

impl Dtype {
    /// Every code in order.
    pub const ALL: [Dtype; 16] = [
        Dtype::Invalid,
        Dtype::Uint64,
        Dtype::Uint8,
        Dtype::Int8,
        Dtype::Int16,
        Dtype::Uint16,
        Dtype::Int32,
        Dtype::Int64,
        Dtype::Fp16,
        Dtype::Uint32,
        Dtype::Bfloat16,
        Dtype::Fp32R,
        Dtype::Fp32,
        Dtype::Fp8Exp3,
        Dtype::Fp8Exp4,
        Dtype::Fp8Exp5,
    ];

    /// The dtype with code `code`, if it is in the table.
    pub const fn from_code(code: u8) -> Option<Dtype> {
        if (code as usize) < Self::ALL.len() {
            Some(Self::ALL[code as usize])
        } else {
            None
        }
    }

    /// The ISA code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// Our name for it (the table's `name` column).
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::Invalid => "INVALID",
            Dtype::Uint64 => "UINT64",
            Dtype::Uint8 => "UINT8",
            Dtype::Int8 => "INT8",
            Dtype::Int16 => "INT16",
            Dtype::Uint16 => "UINT16",
            Dtype::Int32 => "INT32",
            Dtype::Int64 => "INT64",
            Dtype::Fp16 => "FP16",
            Dtype::Uint32 => "UINT32",
            Dtype::Bfloat16 => "BFLOAT16",
            Dtype::Fp32R => "FP32R",
            Dtype::Fp32 => "FP32",
            Dtype::Fp8Exp3 => "FP8_EXP3",
            Dtype::Fp8Exp4 => "FP8_EXP4",
            Dtype::Fp8Exp5 => "FP8_EXP5",
        }
    }

    /// Bytes per element (0 for INVALID, which has none).
    pub const fn elem_size(self) -> u8 {
        match self {
            Dtype::Invalid => 0,
            Dtype::Uint8 | Dtype::Int8 | Dtype::Fp8Exp3 | Dtype::Fp8Exp4 | Dtype::Fp8Exp5 => 1,
            Dtype::Int16 | Dtype::Uint16 | Dtype::Fp16 | Dtype::Bfloat16 => 2,
            Dtype::Int32 | Dtype::Uint32 | Dtype::Fp32R | Dtype::Fp32 => 4,
            Dtype::Uint64 | Dtype::Int64 => 8,
        }
    }

    /// Whether the code is one of the eight that marshal.
    pub const fn marshals(self) -> bool {
        matches!(self, Dtype::Uint8 | Dtype::Int8 | Dtype::Int16 | Dtype::Int32 | Dtype::Int64 | Dtype::Fp16 | Dtype::Bfloat16 | Dtype::Fp32)
    }

    /// The dtype with code `code` if it marshals.
    pub const fn marshallable(code: u8) -> Option<Dtype> {
        match Self::from_code(code) {
            Some(d) if d.marshals() => Some(d),
            _ => None,
        }
    }

    /// Whether the element type is a floating-point one.
    pub const fn is_float(self) -> bool {
        matches!(self, Dtype::Fp16 | Dtype::Bfloat16 | Dtype::Fp32 | Dtype::Fp32R | Dtype::Fp8Exp3 | Dtype::Fp8Exp4 | Dtype::Fp8Exp5)
    }

    /// The name users know it by: NumPy's and torch's (`float32`, as in
    /// `np.float32` and `torch.float32`); the ISA's own name for the types
    /// neither has.
    pub const fn user_name(self) -> &'static str {
        match self {
            Dtype::Uint8 => "uint8",
            Dtype::Int8 => "int8",
            Dtype::Int16 => "int16",
            Dtype::Uint16 => "uint16",
            Dtype::Int32 => "int32",
            Dtype::Int64 => "int64",
            Dtype::Uint32 => "uint32",
            Dtype::Uint64 => "uint64",
            Dtype::Fp16 => "float16",
            Dtype::Bfloat16 => "bfloat16",
            Dtype::Fp32 => "float32",
            other => other.name(),
        }
    }

    /// The C++ accessor's element type and the torch spelling of it, for
    /// the conversion a message suggests (`float` / `torch::kFloat`).
    pub const fn cpp_names(self) -> (&'static str, &'static str) {
        match self {
            Dtype::Uint8 => ("uint8_t", "torch::kByte"),
            Dtype::Int8 => ("int8_t", "torch::kChar"),
            Dtype::Int16 => ("int16_t", "torch::kShort"),
            Dtype::Int32 => ("int32_t", "torch::kInt"),
            Dtype::Int64 => ("int64_t", "torch::kLong"),
            Dtype::Fp16 => ("c10::Half", "torch::kHalf"),
            Dtype::Bfloat16 => ("c10::BFloat16", "torch::kBFloat16"),
            Dtype::Fp32 => ("float", "torch::kFloat"),
            _ => ("", ""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_ordered_and_exactly_eight_marshal() {
        for (i, d) in Dtype::ALL.iter().enumerate() {
            assert_eq!(d.code() as usize, i);
            assert_eq!(Dtype::from_code(i as u8), Some(*d));
        }
        assert_eq!(Dtype::from_code(16), None);
        // The original's eight compare immediates.
        assert_eq!(MARSHALLABLE, [2, 3, 4, 6, 7, 8, 10, 12]);
        assert!(Dtype::marshallable(11).is_none());
    }

    #[test]
    fn every_marshallable_dtype_has_user_and_cpp_names() {
        for d in Dtype::ALL.iter().filter(|d| d.marshals()) {
            assert!(!d.user_name().is_empty() && d.user_name() != d.name(), "{d:?}");
            assert!(!d.cpp_names().0.is_empty() && d.cpp_names().1.starts_with("torch::k"), "{d:?}");
        }
        assert_eq!(Dtype::Fp32.user_name(), "float32");
    }
}
