// Asks TCM for more than its pool holds on purpose (the refusal is the
// point: null back, an error recorded), says so with neuron_clear_error(),
// then copies its input through an accessor. The run passes; the report
// lists the refusal as handled.
#include <stdint.h>
#include <torch/torch.h>
#include <neuroncustomop.h>

torch::Tensor probe(const torch::Tensor& t) {
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    void* too_big = torch::neuron::tcm_malloc(1 << 20);
    neuron_clear_error();
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.size(0); i++) {
        o[i] = too_big == nullptr ? in[i] : -1.0f;
    }
    return out;
}
