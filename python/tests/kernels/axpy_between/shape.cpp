#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor axpy_shape(torch::Tensor x, double alpha, torch::Tensor y) {
    return torch::zeros(x.sizes(), torch::kFloat);
}

NEURON_LIBRARY(axpy_between, m) {
    m.def("axpy", &axpy_shape, "axpy");
}
