#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor one_flag(torch::Tensor t) { return torch::zeros({1}, torch::kFloat); }

NEURON_LIBRARY(heap_corruption, m) {
    m.def("overflow_into_freed", &one_flag, "overflow_into_freed");
    m.def("stays_in_bounds", &one_flag, "stays_in_bounds");
}
