#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_as_input(torch::Tensor t) {
    return torch::zeros(t.sizes(), t.scalar_type());
}

NEURON_LIBRARY(dtype_ops, m) {
    m.def("flip_any", &same_as_input, "flip_any");
    m.def("plus_two_16bit", &same_as_input, "plus_two_16bit");
}
