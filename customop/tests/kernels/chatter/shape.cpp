#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_shape(torch::Tensor x) {
    return torch::zeros(x.sizes(), torch::kFloat);
}

NEURON_LIBRARY(chatter_ops, m) {
    m.def("chatter_then_crash", &same_shape, "chatter_then_crash");
    m.def("quiet_copy", &same_shape, "quiet_copy");
}
