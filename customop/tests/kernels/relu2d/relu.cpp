// ReLU forward and backward over a 2-D tensor, element by element through
// accessors: the simplest form of a GPSIMD custom op.
#include <torch/torch.h>

torch::Tensor relu_forward(const torch::Tensor& t_in) {
    size_t num_rows = t_in.size(0);
    size_t num_cols = t_in.size(1);
    torch::Tensor t_out = torch::zeros({t_in.size(0), t_in.size(1)}, torch::kFloat);

    auto in_acc = t_in.accessor<float, 2>();
    auto out_acc = t_out.accessor<float, 2>();
    for (size_t i = 0; i < num_rows; i++) {
        for (size_t j = 0; j < num_cols; j++) {
            out_acc[i][j] = in_acc[i][j] > 0.0 ? in_acc[i][j] : 0.0f;
        }
    }
    return t_out;
}

// Gradient of ReLU: the incoming gradient where the forward input was
// positive, zero elsewhere.
torch::Tensor relu_backward(const torch::Tensor& t_grad, const torch::Tensor& t_in) {
    size_t num_rows = t_grad.size(0);
    size_t num_cols = t_grad.size(1);
    torch::Tensor t_out = torch::zeros(t_grad.sizes(), torch::kFloat);

    auto grad_acc = t_grad.accessor<float, 2>();
    auto in_acc = t_in.accessor<float, 2>();
    auto out_acc = t_out.accessor<float, 2>();
    for (size_t i = 0; i < num_rows; i++) {
        for (size_t j = 0; j < num_cols; j++) {
            out_acc[i][j] = in_acc[i][j] > 0.0 ? grad_acc[i][j] : 0.0f;
        }
    }
    return t_out;
}
