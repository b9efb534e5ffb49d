#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_shape(torch::Tensor x) {
    return torch::zeros(x.sizes(), torch::kFloat);
}

NEURON_LIBRARY(libm_ops, m) {
    m.def("row_softmax", &same_shape, "row_softmax");
    m.def("row_softmax_multicore", &same_shape, "row_softmax_multicore");
    m.def("math_mix", &same_shape, "math_mix");
    m.def("exp_each", &same_shape, "exp_each");
}
