#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }

NEURON_LIBRARY(host_elements, m) {
    m.def("walk_twice", &same, "walk_twice");
    m.def("walk_skipping_one", &same, "walk_skipping_one");
    m.def("write_input_last", &same, "write_input_last");
    m.def("deep_element", &same, "deep_element");
    m.def("shallow_element", &same, "shallow_element");
}
