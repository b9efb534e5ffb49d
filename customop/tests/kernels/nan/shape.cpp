#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_shape(torch::Tensor x) {
    return torch::zeros(x.sizes(), torch::kFloat);
}

NEURON_LIBRARY(nan_ops, m) {
    m.def("self_sub", &same_shape, "self_sub");
}
