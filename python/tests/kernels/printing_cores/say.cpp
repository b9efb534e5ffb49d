// Prints from every core it runs on, then copies its input: the printf
// lines must come back in the report, one set per core.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

torch::Tensor say(const torch::Tensor& t, int64_t tag) {
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.size(0); i++) {
        o[i] = in[i];
    }
    printf("core %u says tag %lld, first %.2f\n", get_cpu_id(), static_cast<long long>(tag), in[0]);
    return out;
}
