// c10::TensorOptions: what a factory makes. Only the dtype has an effect
// (as in the vendor's library); device, layout and autograd options are
// absent, so a kernel asking for them does not compile.
#pragma once

#include "c10/core/ScalarType.h"

namespace c10 {

class TensorOptions {
public:
    constexpr TensorOptions() = default;
    constexpr TensorOptions(ScalarType t) : dtype_(t) {}
    constexpr TensorOptions(TypeMeta t) : dtype_(t.toScalarType()) {}
    constexpr TensorOptions dtype(ScalarType t) const { return TensorOptions(t); }
    constexpr TensorOptions dtype(TypeMeta t) const { return TensorOptions(t); }
    template <class T>
    constexpr TensorOptions dtype() const { return TensorOptions(CppTypeToScalarType<T>::value); }
    constexpr TypeMeta dtype() const { return TypeMeta(dtype_); }
    constexpr bool has_dtype() const { return true; }

private:
    ScalarType dtype_ = ScalarType::Float;  // libtorch's default dtype
};

constexpr TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
template <class T>
constexpr TensorOptions dtype() { return TensorOptions(CppTypeToScalarType<T>::value); }

}  // namespace c10
