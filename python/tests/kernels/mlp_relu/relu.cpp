// The MLP tutorial's activation, written as a vendor user writes it: a
// forward and a backward op over [batch, features] float tensors, element
// by element through accessors.
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor relu_forward(const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    auto in = t_in.accessor<float, 2>();
    auto out = t_out.accessor<float, 2>();
    for (int64_t b = 0; b < t_in.size(0); b++) {
        for (int64_t f = 0; f < t_in.size(1); f++) {
            float v = in[b][f];
            out[b][f] = v > 0.0f ? v : 0.0f;
        }
    }
    return t_out;
}

// d relu(x) / dx is 1 where x > 0, else 0: the incoming gradient passes
// where the forward input was positive.
torch::Tensor relu_backward(const torch::Tensor& t_grad, const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros(t_grad.sizes(), torch::kFloat);
    auto grad = t_grad.accessor<float, 2>();
    auto in = t_in.accessor<float, 2>();
    auto out = t_out.accessor<float, 2>();
    for (int64_t b = 0; b < t_grad.size(0); b++) {
        for (int64_t f = 0; f < t_grad.size(1); f++) {
            out[b][f] = in[b][f] > 0.0f ? grad[b][f] : 0.0f;
        }
    }
    return t_out;
}
