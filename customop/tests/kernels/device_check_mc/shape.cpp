#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }

NEURON_LIBRARY(device_check_mc, m) {
    m.def("slice_sum_unwritten", &same, "slice_sum_unwritten");
    m.def("slice_sum_cleared", &same, "slice_sum_cleared");
    m.def("all_write_first", &same, "all_write_first");
    m.def("one_writes_first", &same, "one_writes_first");
    m.def("slice_after_free", &same, "slice_after_free");
    m.def("slice_before_free", &same, "slice_before_free");
    m.def("slice_past_end", &same, "slice_past_end");
    m.def("slice_to_end", &same, "slice_to_end");
    m.def("doubled_into_input", &same, "doubled_into_input");
    m.def("doubled_into_output", &same, "doubled_into_output");
}
