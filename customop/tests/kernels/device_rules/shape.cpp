#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor two_flags(torch::Tensor t) { return torch::zeros({2}, torch::kFloat); }
torch::Tensor same(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }

NEURON_LIBRARY(device_rules, m) {
    m.def("tcm_with_streams", &two_flags, "tcm_with_streams");
    m.def("big_stack", &same, "big_stack");
    m.def("small_stack", &same, "small_stack");
    m.def("deep_stack", &same, "deep_stack");
    m.def("wrong_shape", &same, "wrong_shape");
    m.def("right_shape", &same, "right_shape");
    m.def("heap_sizes", &two_flags, "heap_sizes");
    m.def("vector_too_big", &same, "vector_too_big");
    m.def("five_streams", &same, "five_streams");
}
