#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor bounds_shape(torch::Tensor x) {
    (void)x;
    return torch::zeros({8}, torch::kFloat);
}

NEURON_LIBRARY(bounds_ops, m) {
    m.def("bounds", &bounds_shape, "bounds");
}
