#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_shape(torch::Tensor x) {
    return torch::zeros(x.sizes(), torch::kFloat);
}

NEURON_LIBRARY(fallback_ops, m) {
    m.def("negate_or_fall_back", &same_shape, "negate_or_fall_back");
}
