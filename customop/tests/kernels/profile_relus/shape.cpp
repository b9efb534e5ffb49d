#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor relu_shape(torch::Tensor t_in) {
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

NEURON_LIBRARY(prof_ops, m) {
    m.def("relu_element", &relu_shape, "relu_element");
    m.def("relu_tcm", &relu_shape, "relu_tcm");
}
