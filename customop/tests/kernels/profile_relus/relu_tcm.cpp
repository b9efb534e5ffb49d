// The vendor's TCM-staged relu on one core: 1,024-element chunks copied
// into TCM, computed there, copied back.
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor relu_tcm(const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    const int64_t chunk = 1024;
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * chunk);
    auto in_tcm = t_in.tcm_accessor();
    auto out_tcm = t_out.tcm_accessor();
    const int64_t n = t_in.numel();
    for (int64_t off = 0; off < n; off += chunk) {
        const int64_t k = n - off < chunk ? n - off : chunk;
        in_tcm.tensor_to_tcm<float>(buf, off, k);
        for (int64_t i = 0; i < k; i++) {
            buf[i] = buf[i] > 0.0f ? buf[i] : 0.0f; // loop body
        }
        out_tcm.tcm_to_tensor<float>(buf, off, k);
    }
    torch::neuron::tcm_free(buf);
    return t_out;
}
