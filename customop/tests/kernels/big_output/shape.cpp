#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }

NEURON_LIBRARY(big_output, m) {
    m.def("relu_big", &same, "relu_big");
    m.def("overrun_by_one", &same, "overrun_by_one");
    m.def("underrun_by_one", &same, "underrun_by_one");
    m.def("half_written", &same, "half_written");
}
