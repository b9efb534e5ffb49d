#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }

NEURON_LIBRARY(report_page, m) {
    m.def("double_parts", &same, "double_parts");
    m.def("double_parts_but_last", &same, "double_parts_but_last");
}
