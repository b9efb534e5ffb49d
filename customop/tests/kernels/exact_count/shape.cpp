#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor relu_shape(torch::Tensor t_in) {
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

NEURON_LIBRARY(exact_ops, m) {
    m.def("relu_marked", &relu_shape, "relu_marked");
}
