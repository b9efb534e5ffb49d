#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor like_first(torch::Tensor a) { return torch::zeros(a.sizes(), torch::kFloat); }
torch::Tensor like_first2(torch::Tensor a, torch::Tensor b) { return torch::zeros(a.sizes(), torch::kFloat); }
torch::Tensor like_first_int(torch::Tensor a, torch::Tensor b) { return torch::zeros(a.sizes(), torch::kInt); }

NEURON_LIBRARY(tensor_ops, m) {
    m.def("unary_ops", &like_first, "unary_ops");
    m.def("binary_ops", &like_first2, "binary_ops");
    m.def("out_ops", &like_first2, "out_ops");
    m.def("bitwise_ops", &like_first_int, "bitwise_ops");
    m.def("factory_ops", &like_first, "factory_ops");
}
