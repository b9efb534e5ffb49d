#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor relu_tcm_shape(torch::Tensor t_in) {
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

NEURON_LIBRARY(tcm_ops, m) {
    m.def("relu_tcm", &relu_tcm_shape, "relu_tcm");
}
