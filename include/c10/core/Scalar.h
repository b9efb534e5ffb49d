// c10::Scalar (at::Scalar, torch::Scalar): an integer, a floating-point
// value or a bool, as a kernel argument or an operand of the tensor ops.
// It carries the runtime's NeuronScalar (both forms filled), which is what
// the C exports take.
#pragma once

#include <stdint.h>

#include "c10/core/ScalarType.h"
#include "neuron/detail/traits.hpp"
#include "neuroncustomop.h"

namespace c10 {

class Scalar {
public:
    Scalar() : Scalar(int64_t(0)) {}
    Scalar(const NeuronScalar& v) : s_(v) {}
    Scalar(bool v) : s_{v ? 1 : 0, v ? 1.0 : 0.0, DTYPE_UINT8, 0}, bool_(true) {}
    template <class I, class = neuron::detail::enable_if_t<neuron::detail::is_integral<I>::value && !neuron::detail::is_same<I, bool>::value>>
    Scalar(I v) : s_{static_cast<int64_t>(v), static_cast<double>(v), DTYPE_INT64, 0} {}
    Scalar(double v) : s_{to_int(v), v, DTYPE_FP32, 1} {}
    Scalar(float v) : Scalar(static_cast<double>(v)) {}
    Scalar(c10::Half v) : Scalar(static_cast<double>(static_cast<float>(v))) {}
    Scalar(c10::BFloat16 v) : Scalar(static_cast<double>(static_cast<float>(v))) {}

    bool isFloatingPoint() const { return s_.is_float != 0; }
    bool isIntegral(bool includeBool) const { return !isFloatingPoint() && (includeBool || !bool_); }
    bool isBoolean() const { return bool_; }

    // C conversions (a floating value truncates toward zero).
    template <class T>
    T to() const {
        if constexpr (neuron::detail::is_same<T, bool>::value) {
            return isFloatingPoint() ? s_.f != 0.0 : s_.i != 0;
        } else if constexpr (neuron::detail::is_floating_point<T>::value || neuron::detail::is_same<T, c10::Half>::value ||
                             neuron::detail::is_same<T, c10::BFloat16>::value) {
            return convert_float<T>();
        } else {
            static_assert(neuron::detail::is_integral<T>::value, "Scalar::to<T>: T must be an integer, floating-point, Half or BFloat16 type");
            return static_cast<T>(isFloatingPoint() ? to_int(s_.f) : s_.i);
        }
    }
    int toInt() const { return to<int>(); }
    int64_t toLong() const { return to<int64_t>(); }
    float toFloat() const { return to<float>(); }
    double toDouble() const { return to<double>(); }
    bool toBool() const { return to<bool>(); }
    c10::ScalarType type() const { return isFloatingPoint() ? c10::ScalarType::Float : c10::ScalarType::Long; }

    // The runtime's form (for the C exports).
    const NeuronScalar& raw() const { return s_; }
    // The neuron:: API names.
    bool is_floating_point() const { return isFloatingPoint(); }
    int64_t to_long() const { return toLong(); }
    double to_double() const { return toDouble(); }

private:
    template <class T>
    T convert_float() const {
        if constexpr (neuron::detail::is_same<T, double>::value || neuron::detail::is_same<T, long double>::value) {
            return static_cast<T>(isFloatingPoint() ? s_.f : static_cast<double>(s_.i));
        } else {
            return T(static_cast<float>(isFloatingPoint() ? s_.f : static_cast<double>(s_.i)));
        }
    }
    // double -> int64_t as the runtime converts (saturating, NaN -> 0),
    // so that no conversion here is undefined behaviour.
    static int64_t to_int(double v) {
        if (v != v) return 0;
        if (v >= 9223372036854775807.0) return INT64_MAX;
        if (v <= -9223372036854775808.0) return INT64_MIN;
        return static_cast<int64_t>(v);
    }
    NeuronScalar s_;
    bool bool_ = false;
};

}  // namespace c10
