// The shape source of the C++ perf kernels: each output has the first
// input's shape, as float.
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_shape(torch::Tensor t_in) { return torch::zeros(t_in.sizes(), torch::kFloat); }
torch::Tensor first_shape(torch::Tensor x1, torch::Tensor x2, int64_t hbm) {
    (void)x2;
    (void)hbm;
    return torch::zeros(x1.sizes(), torch::kFloat);
}

NEURON_LIBRARY(cpp_perf, m) {
    m.def("acc_elem", &first_shape, "acc_elem");
    m.def("relu_acc", &same_shape, "relu_acc");
    m.def("relu_tcm", &same_shape, "relu_tcm");
}
