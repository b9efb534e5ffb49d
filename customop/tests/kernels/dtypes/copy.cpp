// A tensor of any of the eight dtypes through TCM, the element type
// chosen from its scalar type: integers bitwise inverted, floating point
// negated. The output's dtype is the input's (the shape function says so).
#include <stdint.h>
#include <torch/torch.h>

template <class T, bool Integer>
static void flip(const torch::Tensor& in, torch::Tensor& out) {
    const int64_t n = in.numel();
    T* buf = static_cast<T*>(torch::neuron::tcm_malloc(sizeof(T) * n));
    in.tcm_accessor().tensor_to_tcm<T>(buf, 0, n);
    for (int64_t i = 0; i < n; i++) {
        if constexpr (Integer) {
            buf[i] = static_cast<T>(~buf[i]);
        } else {
            buf[i] = T(-static_cast<float>(buf[i]));
        }
    }
    out.tcm_accessor().tcm_to_tensor<T>(buf, 0, n);
    torch::neuron::tcm_free(buf);
}

torch::Tensor flip_any(const torch::Tensor& t) {
    torch::Tensor out = torch::empty(t.sizes(), t.scalar_type());
    switch (t.scalar_type()) {
        case torch::kByte: flip<uint8_t, true>(t, out); break;
        case torch::kChar: flip<int8_t, true>(t, out); break;
        case torch::kShort: flip<int16_t, true>(t, out); break;
        case torch::kInt: flip<int32_t, true>(t, out); break;
        case torch::kLong: flip<int64_t, true>(t, out); break;
        case torch::kHalf: flip<c10::Half, false>(t, out); break;
        case torch::kBFloat16: flip<c10::BFloat16, false>(t, out); break;
        case torch::kFloat: flip<float, false>(t, out); break;
        default: break;
    }
    return out;
}
