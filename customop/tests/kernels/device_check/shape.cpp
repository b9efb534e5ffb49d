#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_float(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }
torch::Tensor same_int(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kInt); }

NEURON_LIBRARY(device_check, m) {
    m.def("tcm_sum_unwritten", &same_float, "tcm_sum_unwritten");
    m.def("tcm_sum_cleared", &same_float, "tcm_sum_cleared");
    m.def("tcm_isum_unwritten", &same_int, "tcm_isum_unwritten");
    m.def("tcm_isum_cleared", &same_int, "tcm_isum_cleared");
    m.def("count_malloc", &same_int, "count_malloc");
    m.def("count_calloc", &same_int, "count_calloc");
    m.def("read_after_free", &same_float, "read_after_free");
    m.def("read_before_free", &same_float, "read_before_free");
    m.def("write_past_end", &same_float, "write_past_end");
    m.def("write_to_end", &same_float, "write_to_end");
}
