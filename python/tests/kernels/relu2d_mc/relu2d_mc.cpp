// ReLU forward and backward over a 2-D tensor through accessors, on every
// core: core k takes the rows k, k + cores, k + 2*cores, ... and writes
// them in place into get_dst_tensor().
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

torch::Tensor relu_forward(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    auto in_acc = t_in.accessor<float, 2>();
    auto out_acc = t_out.accessor<float, 2>();
    for (int64_t i = get_cpu_id(); i < t_in.size(0); i += get_cpu_count()) {
        for (int64_t j = 0; j < t_in.size(1); j++) {
            out_acc[i][j] = in_acc[i][j] > 0.0f ? in_acc[i][j] : 0.0f;
        }
    }
    return t_out;
}

torch::Tensor relu_backward(const torch::Tensor& t_grad, const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    auto grad_acc = t_grad.accessor<float, 2>();
    auto in_acc = t_in.accessor<float, 2>();
    auto out_acc = t_out.accessor<float, 2>();
    for (int64_t i = get_cpu_id(); i < t_grad.size(0); i += get_cpu_count()) {
        for (int64_t j = 0; j < t_grad.size(1); j++) {
            out_acc[i][j] = in_acc[i][j] > 0.0f ? grad_acc[i][j] : 0.0f;
        }
    }
    return t_out;
}
