// Shape functions with a bug for one input size each: a null store for a
// 3-element input, an endless loop for a 5-element one. Tracing
// (FakeTensorMode, torch.compile) must report them as an eager call does,
// never take Python down or hang it.
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor crashy_shape(torch::Tensor t) {
    if (t.size(0) == 3) {
        volatile int* p = nullptr;
        *p = 1;
    }
    return torch::zeros(t.sizes(), torch::kFloat);
}

torch::Tensor spinning_shape(torch::Tensor t) {
    volatile bool forever = t.size(0) == 5;
    while (forever) {
    }
    return torch::zeros(t.sizes(), torch::kFloat);
}

NEURON_LIBRARY(shape_crash_ops, m) {
    m.def("crashy", &crashy_shape, "crashy");
    m.def("spinning", &spinning_shape, "spinning");
}
