#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor relu_mc_shape(torch::Tensor t_in) {
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

NEURON_LIBRARY(mc_ops, m) {
    m.def("relu_multicore", &relu_mc_shape, "relu_multicore");
}
