// c10::ScalarType: the eight dtypes a custom op's tensors can have, with
// libtorch's enumerator values, and the bridge to the ISA dtype codes the
// runtime marshals (SPEC §6: UINT8 <-> Byte, INT8 <-> Char, INT16 <->
// Short, INT32 <-> Int, INT64 <-> Long, FP16 <-> Half, BFLOAT16 <->
// BFloat16, FP32 <-> Float). Also caffe2-style TypeMeta, what
// Tensor::dtype() returns.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "c10/util/BFloat16.h"
#include "c10/util/Half.h"
#include "neuroncustomop.h"

namespace c10 {

enum class ScalarType : int8_t {
    Byte = 0,
    Char = 1,
    Short = 2,
    Int = 3,
    Long = 4,
    Half = 5,
    Float = 6,
    BFloat16 = 15,
    Undefined = 18,
};

constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;

// The ISA code of a dtype (DTYPE_INVALID for Undefined).
constexpr uint8_t isa_dtype(ScalarType t) {
    switch (t) {
        case ScalarType::Byte: return DTYPE_UINT8;
        case ScalarType::Char: return DTYPE_INT8;
        case ScalarType::Short: return DTYPE_INT16;
        case ScalarType::Int: return DTYPE_INT32;
        case ScalarType::Long: return DTYPE_INT64;
        case ScalarType::Half: return DTYPE_FP16;
        case ScalarType::Float: return DTYPE_FP32;
        case ScalarType::BFloat16: return DTYPE_BFLOAT16;
        default: return DTYPE_INVALID;
    }
}

// The dtype of an ISA code (Undefined for a code that does not marshal).
constexpr ScalarType scalar_type_of_isa(uint8_t code) {
    switch (code) {
        case DTYPE_UINT8: return ScalarType::Byte;
        case DTYPE_INT8: return ScalarType::Char;
        case DTYPE_INT16: return ScalarType::Short;
        case DTYPE_INT32: return ScalarType::Int;
        case DTYPE_INT64: return ScalarType::Long;
        case DTYPE_FP16: return ScalarType::Half;
        case DTYPE_FP32: return ScalarType::Float;
        case DTYPE_BFLOAT16: return ScalarType::BFloat16;
        default: return ScalarType::Undefined;
    }
}

constexpr size_t elementSize(ScalarType t) {
    switch (t) {
        case ScalarType::Byte:
        case ScalarType::Char: return 1;
        case ScalarType::Short:
        case ScalarType::Half:
        case ScalarType::BFloat16: return 2;
        case ScalarType::Int:
        case ScalarType::Float: return 4;
        case ScalarType::Long: return 8;
        default: return 0;
    }
}

constexpr bool isFloatingType(ScalarType t) {
    return t == ScalarType::Half || t == ScalarType::Float || t == ScalarType::BFloat16;
}

// (There is no Bool dtype here, so includeBool changes nothing.)
constexpr bool isIntegralType(ScalarType t, bool /*includeBool*/) {
    return t == ScalarType::Byte || t == ScalarType::Char || t == ScalarType::Short || t == ScalarType::Int || t == ScalarType::Long;
}

constexpr const char* toString(ScalarType t) {
    switch (t) {
        case ScalarType::Byte: return "Byte";
        case ScalarType::Char: return "Char";
        case ScalarType::Short: return "Short";
        case ScalarType::Int: return "Int";
        case ScalarType::Long: return "Long";
        case ScalarType::Half: return "Half";
        case ScalarType::Float: return "Float";
        case ScalarType::BFloat16: return "BFloat16";
        default: return "Undefined";
    }
}

// The C++ element type of each dtype.
template <class T> struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<uint8_t> { static constexpr ScalarType value = ScalarType::Byte; };
template <> struct CppTypeToScalarType<int8_t> { static constexpr ScalarType value = ScalarType::Char; };
template <> struct CppTypeToScalarType<int16_t> { static constexpr ScalarType value = ScalarType::Short; };
template <> struct CppTypeToScalarType<int32_t> { static constexpr ScalarType value = ScalarType::Int; };
template <> struct CppTypeToScalarType<int64_t> { static constexpr ScalarType value = ScalarType::Long; };
template <> struct CppTypeToScalarType<c10::Half> { static constexpr ScalarType value = ScalarType::Half; };
template <> struct CppTypeToScalarType<c10::BFloat16> { static constexpr ScalarType value = ScalarType::BFloat16; };
template <> struct CppTypeToScalarType<float> { static constexpr ScalarType value = ScalarType::Float; };

// What Tensor::dtype() and TensorOptions::dtype() return (caffe2's
// TypeMeta in libtorch): the dtype, its element size, its name.
class TypeMeta {
public:
    constexpr TypeMeta() = default;
    constexpr TypeMeta(ScalarType t) : t_(t) {}
    constexpr ScalarType toScalarType() const { return t_; }
    constexpr size_t itemsize() const { return elementSize(t_); }
    constexpr const char* name() const { return toString(t_); }
    template <class T>
    static constexpr TypeMeta Make() { return TypeMeta(CppTypeToScalarType<T>::value); }
    friend constexpr bool operator==(TypeMeta a, TypeMeta b) { return a.t_ == b.t_; }
    friend constexpr bool operator!=(TypeMeta a, TypeMeta b) { return a.t_ != b.t_; }
    friend constexpr bool operator==(TypeMeta a, ScalarType b) { return a.t_ == b; }
    friend constexpr bool operator!=(TypeMeta a, ScalarType b) { return a.t_ != b; }
    friend constexpr bool operator==(ScalarType a, TypeMeta b) { return a == b.t_; }
    friend constexpr bool operator!=(ScalarType a, TypeMeta b) { return a != b.t_; }

private:
    ScalarType t_ = ScalarType::Undefined;
};

constexpr ScalarType typeMetaToScalarType(TypeMeta m) { return m.toScalarType(); }

}  // namespace c10

namespace caffe2 {
using TypeMeta = c10::TypeMeta;
}
