// The quick start's shape source: the output has the input's shape, as
// float; NEURON_LIBRARY names the library (torch.ops.my_ops) and its op.
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor relu_fwd_shape(torch::Tensor t_in) {
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

NEURON_LIBRARY(my_ops, m) {
    m.def("relu_forward", &relu_fwd_shape, "relu_forward");  // op, shape fn, compute fn
}
