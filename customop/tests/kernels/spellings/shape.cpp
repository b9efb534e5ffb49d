#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor sum_shape(const torch::Tensor& t, const torch::Tensor&, const torch::Tensor&, const torch::Scalar&, int, float, long,
                        double) {
    return torch::zeros(t.sizes(), torch::kFloat);
}

NEURON_LIBRARY(spelling_ops, m) {
    m.def("sum_all", &sum_shape, "sum_all");
}
