#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor relu_fwd_shape(torch::Tensor t_in) {
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

torch::Tensor relu_bwd_shape(torch::Tensor t_grad, torch::Tensor t_in) {
    return torch::zeros(t_grad.sizes(), torch::kFloat);
}

NEURON_LIBRARY(relu2d_mc_ops, m) {
    m.def("relu_forward", &relu_fwd_shape, "relu_forward");
    m.def("relu_backward", &relu_bwd_shape, "relu_backward");
}
