#include <stdint.h>
#include <torch/torch.h>
#include "torchneuron/register.h"

torch::Tensor same_shape(torch::Tensor x) {
    return torch::zeros(x.sizes(), torch::kFloat);
}

// A shape function that stores through a null pointer.
torch::Tensor null_store_shape(torch::Tensor x) {
    volatile uintptr_t zero = 0;
    *reinterpret_cast<volatile int64_t*>(zero) = x.size(0);
    return torch::zeros(x.sizes(), torch::kFloat);
}

// A shape function that recurses without end.
static int64_t deeper(volatile const int64_t* step, int64_t depth) {
    volatile char frame[256];
    frame[depth & 255] = static_cast<char>(depth);
    return deeper(step, depth + *step) + frame[0];
}

torch::Tensor recurse_shape(torch::Tensor x) {
    volatile int64_t step = 1;
    int64_t n = deeper(&step, x.size(0));
    return torch::zeros({n}, torch::kFloat);
}

// A shape function that never returns.
torch::Tensor spin_shape(torch::Tensor x) {
    volatile int64_t n = x.size(0);
    while (n > 0) {
    }
    return torch::zeros(x.sizes(), torch::kFloat);
}

NEURON_LIBRARY(crash_ops, m) {
    m.def("recurse_forever", &same_shape, "recurse_forever");
    m.def("call_abort", &same_shape, "call_abort");
    m.def("divide_by_zero", &same_shape, "divide_by_zero");
    m.def("store_through_null", &same_shape, "store_through_null");
    m.def("illegal_instruction", &same_shape, "illegal_instruction");
    m.def("spin_forever", &same_shape, "spin_forever");
    m.def("shape_null_store", &null_store_shape, "copy_through");
    m.def("shape_spins", &spin_shape, "copy_through");
    m.def("shape_recurses", &recurse_shape, "copy_through");
    m.def("copy_through", &same_shape, "copy_through");
}
