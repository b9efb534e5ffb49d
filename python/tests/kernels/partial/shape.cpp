#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }

NEURON_LIBRARY(partial_ops, m) {
    m.def("half_then_past", &same, "half_then_past");
}
