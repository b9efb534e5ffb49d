#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor softmax_shape(torch::Tensor t_in) {
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

NEURON_LIBRARY(prof_softmax_ops, m) {
    m.def("softmax_rows", &softmax_shape, "softmax_rows");
}
