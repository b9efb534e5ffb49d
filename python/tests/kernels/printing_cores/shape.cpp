#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor say_shape(torch::Tensor t, int64_t tag) {
    return torch::zeros(t.sizes(), torch::kFloat);
}

NEURON_LIBRARY(print_ops, m) {
    m.def("say", &say_shape, "say");
}
