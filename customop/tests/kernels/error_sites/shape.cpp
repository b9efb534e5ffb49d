#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_shape(torch::Tensor x) {
    return torch::zeros(x.sizes(), torch::kFloat);
}

torch::Tensor one_per_row(torch::Tensor x) {
    return torch::zeros({x.size(0)}, torch::kFloat);
}

NEURON_LIBRARY(error_sites, m) {
    m.def("prefix_past", &same_shape, "prefix_past");
    m.def("prefix", &same_shape, "prefix");
    m.def("row_sums_past", &one_per_row, "row_sums_past");
    m.def("wrong_type", &same_shape, "wrong_type");
    m.def("stream_past", &same_shape, "stream_past");
    m.def("huge_scratch", &same_shape, "huge_scratch");
    m.def("counts_as_int", &same_shape, "counts_as_int");
    m.def("add_bias", &same_shape, "add_bias");
    m.def("wrong_rank", &same_shape, "wrong_rank");
}
