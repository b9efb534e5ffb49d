#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor say_shape(torch::Tensor t_in, int64_t tag) {
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

NEURON_LIBRARY(printing, m) {
    m.def("say", &say_shape, "say");
}
