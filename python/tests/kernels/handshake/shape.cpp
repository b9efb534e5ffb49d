#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor one_int(torch::Tensor paths) {
    return torch::zeros({1}, torch::kInt);
}

NEURON_LIBRARY(handshake_ops, m) {
    m.def("handshake", &one_int, "handshake");
}
