// Runs the relu examples on the host simulator and checks them against a
// reference: relu on 1 core, relu_tcm on all 8 cores (get_cpu_count() is
// always 8, so a multicore kernel runs on all of them), numel % 8 != 0.
// Exits non-zero on any mismatch. Build (see docs/kernel-guide.md):
//   g++ -std=c++17 -Wall -Werror -I include examples/cpp/relu.cpp
//       examples/cpp/relu_driver.cpp libneuroncustomop.a -lpthread -ldl -lm
#include "neuroncustomop.h"

#include <stdio.h>
#include <stdlib.h>

#include <vector>

static int run(NeuronSim* s, const char* op, uint32_t cores, uint64_t n) {
    std::vector<float> in(n), out(n, -1.0f);
    for (uint64_t i = 0; i < n; i++) in[i] = static_cast<float>(static_cast<int64_t>(i % 97) - 48) * 0.5f;
    const uint64_t shape[1] = {n};
    neuron_sim_clear_args(s);
    if (neuron_sim_arg_tensor(s, DTYPE_FP32, shape, 1, in.data(), n * sizeof(float)) != 0 ||
        neuron_sim_set_output(s, DTYPE_FP32, shape, 1) != 0) {
        fprintf(stderr, "placing tensors failed\n");
        return 1;
    }
    const int rc = neuron_sim_run(s, op, cores);
    if (rc != 0) {
        fprintf(stderr, "%s on %u core(s): error %d (%s)\n", op, cores, rc, neuron_error_message(rc));
        return 1;
    }
    neuron_sim_read_output(s, out.data(), n * sizeof(float));
    for (uint64_t i = 0; i < n; i++) {
        const float want = in[i] > 0.0f ? in[i] : 0.0f;
        if (out[i] != want) {
            fprintf(stderr, "%s: element %llu is %f, want %f\n", op, static_cast<unsigned long long>(i), out[i], want);
            return 1;
        }
    }
    printf("ok: %s on %u core(s), numel %llu\n", op, cores, static_cast<unsigned long long>(n));
    return 0;
}

int main() {
    NeuronSim* s = neuron_sim_new();
    if (s == nullptr || neuron_sim_register(s) != 2) {
        fprintf(stderr, "simulator or registration failed\n");
        return 1;
    }
    int bad = run(s, "relu", 1, 1000) + run(s, "relu_tcm", 8, 5000) + run(s, "relu_tcm", 8, 8 * 1500 + 3);
    neuron_sim_free(s);
    return bad;
}
