// The vendor's TCM-staged relu over all cores: each core stages its share
// in 1,024-element chunks and writes the output tensor in place.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

torch::Tensor relu_mc(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    const uint32_t cpu_id = get_cpu_id();
    const uint32_t cpu_count = get_cpu_count();
    const int64_t n = t_in.numel();
    const int64_t per_core = (n + cpu_count - 1) / cpu_count;
    const int64_t begin = per_core * cpu_id;
    const int64_t end = begin + per_core < n ? begin + per_core : n;
    const int64_t chunk = 1024;
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * chunk);
    auto in_tcm = t_in.tcm_accessor();
    auto out_tcm = t_out.tcm_accessor();
    for (int64_t off = begin; off < end; off += chunk) {
        const int64_t k = end - off < chunk ? end - off : chunk;
        in_tcm.tensor_to_tcm<float>(buf, off, k);
        for (int64_t i = 0; i < k; i++) {
            buf[i] = buf[i] > 0.0f ? buf[i] : 0.0f; // loop body
        }
        out_tcm.tcm_to_tensor<float>(buf, off, k);
    }
    torch::neuron::tcm_free(buf);
    return t_out;
}
