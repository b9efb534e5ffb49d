// Kernel code in a translation unit without <stdio.h>: here even a printf
// with no argument after the format is the kernel's printf (with the C
// printf declared too, that one call would be the C function's; see
// neuron/printf.hpp). Called by printf_stdio_first.cpp's op.
#include <torch/torch.h>

void greet_without_stdio(int64_t v) {
    printf("no stdio, no arguments\n");
    printf("no stdio, value %lld\n", static_cast<long long>(v));
}
