#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor scale_shape(torch::Tensor t_in) {
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

NEURON_LIBRARY(reload_ops, m) {
    m.def("scale", &scale_shape, "scale");
}
