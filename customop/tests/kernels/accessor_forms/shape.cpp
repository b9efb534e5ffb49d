#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor pair_sum_shape(torch::Tensor x) {
    return torch::zeros({x.size(0), x.size(1) / 2}, torch::kFloat);
}

torch::Tensor same_shape(torch::Tensor x) {
    return torch::zeros(x.sizes(), torch::kFloat);
}

NEURON_LIBRARY(accessor_forms, m) {
    m.def("pair_sum", &pair_sum_shape, "pair_sum");
    m.def("plane_scale", &same_shape, "plane_scale");
}
