// Two copies whose shape functions misbehave for one input size each
// (shape.cpp): the kernels themselves are correct.
#include <torch/torch.h>

torch::Tensor crashy(const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    auto in = t_in.accessor<float, 1>();
    auto out = t_out.accessor<float, 1>();
    for (int64_t i = 0; i < t_in.size(0); i++) {
        out[i] = in[i];
    }
    return t_out;
}

torch::Tensor spinning(const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    auto in = t_in.accessor<float, 1>();
    auto out = t_out.accessor<float, 1>();
    for (int64_t i = 0; i < t_in.size(0); i++) {
        out[i] = in[i];
    }
    return t_out;
}
