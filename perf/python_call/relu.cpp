// The kernel perf/python_call.py calls: relu staged through TCM on one
// core, as a vendor kernel author writes it (no printing, so a call costs
// what the call itself costs).
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

torch::Tensor relu_forward(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    const int64_t n = t_in.numel();
    constexpr int64_t chunk = 2048;
    float* buf = static_cast<float*>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    if (buf == nullptr) {
        return t_out;
    }
    auto in = t_in.tcm_accessor();
    auto out = t_out.tcm_accessor();
    for (int64_t i = 0; i < n; i += chunk) {
        const int64_t len = n - i < chunk ? n - i : chunk;
        in.tensor_to_tcm<float>(buf, i, len);
        for (int64_t j = 0; j < len; j++) {
            buf[j] = buf[j] > 0.0f ? buf[j] : 0.0f;
        }
        out.tcm_to_tensor<float>(buf, i, len);
    }
    torch::neuron::tcm_free(buf);
    return t_out;
}
