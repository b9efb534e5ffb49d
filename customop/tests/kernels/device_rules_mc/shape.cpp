#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }

NEURON_LIBRARY(device_rules_mc, m) {
    m.def("double_elem", &same, "double_elem");
    m.def("double_tcm", &same, "double_tcm");
    m.def("peek_neighbour", &same, "peek_neighbour");
}
