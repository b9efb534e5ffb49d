// The vendor's tensor library functions (namespace at; torch:: has the
// same names): the factories and every documented operation, with the
// documented signatures (`_out` forms take the result first, as libtorch).
// Each is a call of the neuron:: function beneath, i.e. of one C export:
// there is one implementation of each operation.
//
// Elementwise, no broadcasting, no type promotion. A failure
// fails the op, as libtorch's exception would: the invocation's status
// becomes the error's code (neuron_fail_invocation), the run reports it,
// and meanwhile an allocating form returns an undefined tensor and an
// `_out` form leaves `result` unwritten (the reason: neuron_last_error()).
#pragma once

#include "ATen/core/Tensor.h"
#include "c10/core/Scalar.h"
#include "c10/core/TensorOptions.h"
#include "c10/util/ArrayRef.h"
#include "neuroncustomop.hpp"

namespace at {

// On the host every function below takes the kernel's file and line as
// defaulted parameters (NEURON_CALLER_PARAMS), which a failure reports
// (neuron_error_site) before it fails the op.
namespace detail {
// An `_out` form's status, a failure failing the op.
inline void check(int status NEURON_CALLER_PARAMS_TAIL) {
    if (status != 0) {
        NEURON_CALLER_SITE(0);
        neuron_fail_invocation();
    }
}
// An allocating form's result, an undefined one failing the op.
inline Tensor checked(Tensor t NEURON_CALLER_PARAMS_TAIL) {
    if (!t.defined()) {
        NEURON_CALLER_SITE(0);
        neuron_fail_invocation();
    }
    return t;
}
}  // namespace detail

using c10::IntArrayRef;
using c10::Scalar;
using c10::TensorOptions;

// ---- factories ------------------------------------------------------------------

inline Tensor empty(IntArrayRef size, TensorOptions options NEURON_CALLER_PARAMS_DEFAULT_TAIL) {
    return detail::checked(neuron::empty(size, c10::isa_dtype(options.dtype().toScalarType())) NEURON_CALLER_ARGS_TAIL);
}
inline Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options NEURON_CALLER_PARAMS_DEFAULT_TAIL) {
    return detail::checked(neuron::full(size, fill_value, c10::isa_dtype(options.dtype().toScalarType())) NEURON_CALLER_ARGS_TAIL);
}
inline Tensor zeros(IntArrayRef size, TensorOptions options NEURON_CALLER_PARAMS_DEFAULT_TAIL) { return full(size, 0, options NEURON_CALLER_ARGS_TAIL); }
inline Tensor ones(IntArrayRef size, TensorOptions options NEURON_CALLER_PARAMS_DEFAULT_TAIL) { return full(size, 1, options NEURON_CALLER_ARGS_TAIL); }
inline Tensor eye(int64_t n, int64_t m, TensorOptions options NEURON_CALLER_PARAMS_DEFAULT_TAIL) {
    return detail::checked(neuron::eye(n, m, c10::isa_dtype(options.dtype().toScalarType())) NEURON_CALLER_ARGS_TAIL);
}
inline Tensor eye(int64_t n, TensorOptions options NEURON_CALLER_PARAMS_DEFAULT_TAIL) { return eye(n, n, options NEURON_CALLER_ARGS_TAIL); }

// ---- unary operations -------------------------------------------------------------

#define NEURON_AT_UNARY_(name)                                                               \
    inline Tensor& name##_out(Tensor& result, const Tensor& self NEURON_CALLER_PARAMS_DEFAULT_TAIL) {                          \
        detail::check(neuron::name##_out(self, result) NEURON_CALLER_ARGS_TAIL);                                     \
        return result;                                                                       \
    }                                                                                        \
    inline Tensor name(const Tensor& self NEURON_CALLER_PARAMS_DEFAULT_TAIL) { return detail::checked(neuron::name(self) NEURON_CALLER_ARGS_TAIL); }
NEURON_AT_UNARY_(abs)
NEURON_AT_UNARY_(ceil)
NEURON_AT_UNARY_(floor)
NEURON_AT_UNARY_(sin)
NEURON_AT_UNARY_(cos)
NEURON_AT_UNARY_(tan)
NEURON_AT_UNARY_(log)
NEURON_AT_UNARY_(log2)
NEURON_AT_UNARY_(log10)
NEURON_AT_UNARY_(exp)
NEURON_AT_UNARY_(bitwise_not)
#undef NEURON_AT_UNARY_

// The vendor documents this form too: result = ~self, returned.
inline Tensor bitwise_not(Tensor& result, const Tensor& self NEURON_CALLER_PARAMS_DEFAULT_TAIL) { return bitwise_not_out(result, self NEURON_CALLER_ARGS_TAIL); }

// ---- pow ------------------------------------------------------------------------------

inline Tensor& pow_out(Tensor& result, const Tensor& self, const Scalar& exponent NEURON_CALLER_PARAMS_DEFAULT_TAIL) {
    detail::check(neuron::pow_out(self, exponent.toDouble(), result) NEURON_CALLER_ARGS_TAIL);
    return result;
}
inline Tensor& pow_out(Tensor& result, const Scalar& self, const Tensor& exponent NEURON_CALLER_PARAMS_DEFAULT_TAIL) {
    detail::check(neuron::pow_out(self.toDouble(), exponent, result) NEURON_CALLER_ARGS_TAIL);
    return result;
}
inline Tensor& pow_out(Tensor& result, const Tensor& self, const Tensor& exponent NEURON_CALLER_PARAMS_DEFAULT_TAIL) {
    detail::check(neuron::pow_out(self, exponent, result) NEURON_CALLER_ARGS_TAIL);
    return result;
}
inline Tensor pow(const Tensor& self, const Scalar& exponent NEURON_CALLER_PARAMS_DEFAULT_TAIL) { return detail::checked(neuron::pow(self, exponent.toDouble()) NEURON_CALLER_ARGS_TAIL); }
inline Tensor pow(const Scalar& self, const Tensor& exponent NEURON_CALLER_PARAMS_DEFAULT_TAIL) {
    return detail::checked(neuron::allocating(exponent, [&](const Tensor& out) { return neuron::pow_out(self.toDouble(), exponent, out); }) NEURON_CALLER_ARGS_TAIL);
}
inline Tensor pow(const Tensor& self, const Tensor& exponent NEURON_CALLER_PARAMS_DEFAULT_TAIL) {
    return detail::checked(neuron::allocating(self, [&](const Tensor& out) { return neuron::pow_out(self, exponent, out); }) NEURON_CALLER_ARGS_TAIL);
}

// ---- clamp --------------------------------------------------------------------------

inline Tensor& clamp_out(Tensor& result, const Tensor& self, const Scalar& minval, const Scalar& maxval NEURON_CALLER_PARAMS_DEFAULT_TAIL) {
    detail::check(neuron::clamp_out(self, minval, maxval, result) NEURON_CALLER_ARGS_TAIL);
    return result;
}
inline Tensor clamp(const Tensor& self, const Scalar& minval, const Scalar& maxval NEURON_CALLER_PARAMS_DEFAULT_TAIL) { return detail::checked(neuron::clamp(self, minval, maxval) NEURON_CALLER_ARGS_TAIL); }

// ---- add, sub (alpha scales other), mul, div ----------------------------------------------

#define NEURON_AT_BINARY_(name, code, ALPHA_PARAM, ALPHA)                                                 \
    inline Tensor& name##_out(Tensor& result, const Tensor& self, const Tensor& other ALPHA_PARAM NEURON_CALLER_PARAMS_DEFAULT_TAIL) {       \
        detail::check(neuron::binary_out(code, self, other, ALPHA, result) NEURON_CALLER_ARGS_TAIL);                               \
        return result;                                                                                     \
    }                                                                                                      \
    inline Tensor& name##_out(Tensor& result, const Tensor& self, const Scalar& other ALPHA_PARAM NEURON_CALLER_PARAMS_DEFAULT_TAIL) {       \
        detail::check(neuron::binary_scalar_out(code, self, other, ALPHA, result) NEURON_CALLER_ARGS_TAIL);                        \
        return result;                                                                                     \
    }                                                                                                      \
    inline Tensor name(const Tensor& self, const Tensor& other ALPHA_PARAM NEURON_CALLER_PARAMS_DEFAULT_TAIL) {                              \
        return detail::checked(neuron::allocating(self, [&](const Tensor& out) { return neuron::binary_out(code, self, other, ALPHA, out); }) NEURON_CALLER_ARGS_TAIL); \
    }                                                                                                      \
    inline Tensor name(const Tensor& self, const Scalar& other ALPHA_PARAM NEURON_CALLER_PARAMS_DEFAULT_TAIL) {                              \
        return detail::checked(neuron::allocating(self, [&](const Tensor& out) { return neuron::binary_scalar_out(code, self, other, ALPHA, out); }) NEURON_CALLER_ARGS_TAIL); \
    }
#define NEURON_AT_ALPHA_PARAM_ , const Scalar& alpha = 1
#define NEURON_AT_NO_PARAM_
NEURON_AT_BINARY_(add, BINARY_OP_ADD, NEURON_AT_ALPHA_PARAM_, alpha)
NEURON_AT_BINARY_(sub, BINARY_OP_SUB, NEURON_AT_ALPHA_PARAM_, alpha)
NEURON_AT_BINARY_(mul, BINARY_OP_MUL, NEURON_AT_NO_PARAM_, 1)
NEURON_AT_BINARY_(div, BINARY_OP_DIV, NEURON_AT_NO_PARAM_, 1)
NEURON_AT_BINARY_(bitwise_and, BINARY_OP_BITWISE_AND, NEURON_AT_NO_PARAM_, 1)
NEURON_AT_BINARY_(bitwise_or, BINARY_OP_BITWISE_OR, NEURON_AT_NO_PARAM_, 1)
#undef NEURON_AT_BINARY_
#undef NEURON_AT_ALPHA_PARAM_
#undef NEURON_AT_NO_PARAM_

// Bitwise with the scalar first: the scalar is converted to the tensor's
// dtype first (the vendor's note).
#define NEURON_AT_SCALAR_FIRST_(name, code)                                                    \
    inline Tensor& name##_out(Tensor& result, const Scalar& self, const Tensor& other NEURON_CALLER_PARAMS_DEFAULT_TAIL) {       \
        detail::check(neuron::scalar_binary_out(code, self, other, result) NEURON_CALLER_ARGS_TAIL);                   \
        return result;                                                                         \
    }                                                                                          \
    inline Tensor name(const Scalar& self, const Tensor& other NEURON_CALLER_PARAMS_DEFAULT_TAIL) {                              \
        return detail::checked(neuron::allocating(other, [&](const Tensor& out) { return neuron::scalar_binary_out(code, self, other, out); }) NEURON_CALLER_ARGS_TAIL); \
    }
NEURON_AT_SCALAR_FIRST_(bitwise_and, BINARY_OP_BITWISE_AND)
NEURON_AT_SCALAR_FIRST_(bitwise_or, BINARY_OP_BITWISE_OR)
#undef NEURON_AT_SCALAR_FIRST_

// ---- fill_ ------------------------------------------------------------------------------

inline Tensor& fill_(const Tensor& self, const Scalar& value) { return self.fill_(value); }

}  // namespace at
