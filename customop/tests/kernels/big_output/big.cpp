// Outputs of a MiB and more: `customop run -o` places them in the output
// file's own pages. A ReLU staged through TCM, and kernels that store one
// element past either end of the output or leave half of it unwritten.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

static void relu_into(const torch::Tensor& t_in, torch::Tensor& t_out, int64_t end) {
    constexpr int64_t chunk = 1024;
    float* buf = static_cast<float*>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    if (buf == nullptr) return;
    auto in = t_in.tcm_accessor();
    auto out = t_out.tcm_accessor();
    for (int64_t i = 0; i < end; i += chunk) {
        const int64_t len = end - i < chunk ? end - i : chunk;
        in.tensor_to_tcm<float>(buf, i, len);
        for (int64_t j = 0; j < len; j++) buf[j] = buf[j] > 0.0f ? buf[j] : 0.0f;
        out.tcm_to_tensor<float>(buf, i, len);
    }
    torch::neuron::tcm_free(buf);
}

torch::Tensor relu_big(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    relu_into(t_in, t_out, t_in.numel());
    return t_out;
}

// The whole output, then one float just past its end, through a raw pointer.
torch::Tensor overrun_by_one(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    relu_into(t_in, t_out, t_in.numel());
    Q7PtrType q = t_out.q7_data_ptr();
    float* p = static_cast<float*>(neuron_translate(q.ctx, q.addr + sizeof(float) * t_in.numel()));
    if (p) *p = 1.0f;
    return t_out;
}

// The whole output, then one float just before its start.
torch::Tensor underrun_by_one(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    relu_into(t_in, t_out, t_in.numel());
    Q7PtrType q = t_out.q7_data_ptr();
    float* p = static_cast<float*>(neuron_translate(q.ctx, q.addr - sizeof(float)));
    if (p) *p = 1.0f;
    return t_out;
}

// Only the first half of the output.
torch::Tensor half_written(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    relu_into(t_in, t_out, t_in.numel() / 2);
    return t_out;
}
