// A tensor of any of the eight dtypes, on every core: each core stages its
// share of the elements through TCM, integers bitwise inverted, floating
// point negated, and writes it back in place into get_dst_tensor().
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

template <class T, bool Integer>
static void flip_share(const torch::Tensor& in, torch::Tensor& out) {
    const int64_t n = in.numel();
    const int64_t per_core = (n + get_cpu_count() - 1) / get_cpu_count();
    const int64_t begin = per_core * get_cpu_id();
    const int64_t k = begin < n ? (begin + per_core < n ? per_core : n - begin) : 0;
    if (k == 0) return;
    T* buf = static_cast<T*>(torch::neuron::tcm_malloc(sizeof(T) * k));
    in.tcm_accessor().tensor_to_tcm<T>(buf, begin, k);
    for (int64_t i = 0; i < k; i++) {
        if constexpr (Integer) {
            buf[i] = static_cast<T>(~buf[i]);
        } else {
            buf[i] = T(-static_cast<float>(buf[i]));
        }
    }
    out.tcm_accessor().tcm_to_tensor<T>(buf, begin, k);
    torch::neuron::tcm_free(buf);
}

torch::Tensor flip_any(const torch::Tensor& t) {
    torch::Tensor out = get_dst_tensor();
    switch (t.scalar_type()) {
        case torch::kByte: flip_share<uint8_t, true>(t, out); break;
        case torch::kChar: flip_share<int8_t, true>(t, out); break;
        case torch::kShort: flip_share<int16_t, true>(t, out); break;
        case torch::kInt: flip_share<int32_t, true>(t, out); break;
        case torch::kLong: flip_share<int64_t, true>(t, out); break;
        case torch::kHalf: flip_share<c10::Half, false>(t, out); break;
        case torch::kBFloat16: flip_share<c10::BFloat16, false>(t, out); break;
        case torch::kFloat: flip_share<float, false>(t, out); break;
        default: break;
    }
    return out;
}
