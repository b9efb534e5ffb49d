#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor int_shape(torch::Tensor t) {
    return torch::zeros(t.sizes(), torch::kInt);
}

torch::Tensor undefined_shape(torch::Tensor t) {
    return torch::Tensor();
}

NEURON_LIBRARY(failing_ops, m) {
    m.def("wrong_dtype", &int_shape, "wrong_dtype");
    m.def("no_shape", &undefined_shape, "no_shape");
}
