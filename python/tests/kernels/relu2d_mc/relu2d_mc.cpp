// ReLU forward and backward over a 2-D tensor on every core: core k takes
// the rows k, k + cores, k + 2*cores, ... and writes them in place into
// get_dst_tensor(), staging each row through TCM (in multicore mode the
// TCM accessor is the one that is correct on the device).
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

static const int64_t kChunk = 512;

torch::Tensor relu_forward(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    float* buf = static_cast<float*>(torch::neuron::tcm_malloc(sizeof(float) * kChunk));
    auto in = t_in.tcm_accessor();
    auto out = t_out.tcm_accessor();
    const int64_t cols = t_in.size(1);
    for (int64_t i = get_cpu_id(); i < t_in.size(0); i += get_cpu_count()) {
        for (int64_t j = 0; j < cols; j += kChunk) {
            const int64_t n = cols - j < kChunk ? cols - j : kChunk;
            in.tensor_to_tcm<float>(buf, i * cols + j, n);
            for (int64_t k = 0; k < n; k++) buf[k] = buf[k] > 0.0f ? buf[k] : 0.0f;
            out.tcm_to_tensor<float>(buf, i * cols + j, n);
        }
    }
    torch::neuron::tcm_free(buf);
    return t_out;
}

torch::Tensor relu_backward(const torch::Tensor& t_grad, const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    float* g = static_cast<float*>(torch::neuron::tcm_malloc(sizeof(float) * kChunk));
    float* x = static_cast<float*>(torch::neuron::tcm_malloc(sizeof(float) * kChunk));
    auto grad = t_grad.tcm_accessor();
    auto in = t_in.tcm_accessor();
    auto out = t_out.tcm_accessor();
    const int64_t cols = t_grad.size(1);
    for (int64_t i = get_cpu_id(); i < t_grad.size(0); i += get_cpu_count()) {
        for (int64_t j = 0; j < cols; j += kChunk) {
            const int64_t n = cols - j < kChunk ? cols - j : kChunk;
            grad.tensor_to_tcm<float>(g, i * cols + j, n);
            in.tensor_to_tcm<float>(x, i * cols + j, n);
            for (int64_t k = 0; k < n; k++) g[k] = x[k] > 0.0f ? g[k] : 0.0f;
            out.tcm_to_tensor<float>(g, i * cols + j, n);
        }
    }
    torch::neuron::tcm_free(x);
    torch::neuron::tcm_free(g);
    return t_out;
}
