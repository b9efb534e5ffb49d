// A kernel that includes <stdio.h> BEFORE <torch/torch.h> (the other order
// is surface_kernel.cpp's): its printf calls must still reach the core's
// printf ring, formatted by the header's formatter.
#include <stdio.h>

#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

void greet_without_stdio(int64_t v);  // printf_no_stdio.cpp

torch::Tensor say(const torch::Tensor& t, int64_t tag) {
    greet_without_stdio(tag);
    auto acc = t.accessor<float, 1>();
    printf("core %d of %u: %zu elements, first %.3f, tag %lld, %s\n", get_cpu_id(), get_cpu_count(), static_cast<size_t>(t.numel()),
           acc[0], static_cast<long long>(tag), "end");
    printf("%-6s|%+.2e|%08.3f|%#x|%5.1f%%\n", "left", -0.000123, 3.14159, 48879u, 99.5);
    neuron_printf("neuron_printf %d %s", 7, "still works");
    return torch::abs(t);
}

NEURON_CUSTOM_OPS(say)
