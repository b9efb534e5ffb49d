#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor probe_shape(torch::Tensor t) {
    return torch::zeros(t.sizes(), torch::kFloat);
}

NEURON_LIBRARY(probe_ops, m) {
    m.def("probe", &probe_shape, "probe");
}
