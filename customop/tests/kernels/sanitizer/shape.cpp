#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }

NEURON_LIBRARY(sanitizer, m) {
    m.def("empty_accumulate", &same, "empty_accumulate");
    m.def("zeros_accumulate", &same, "zeros_accumulate");
    m.def("clamp_in_place", &same, "clamp_in_place");
    m.def("add_into_dst", &same, "add_into_dst");
    m.def("set_then_add_dst", &same, "set_then_add_dst");
    m.def("tcm_half_written", &same, "tcm_half_written");
    m.def("scale_input_raw", &same, "scale_input_raw");
}
