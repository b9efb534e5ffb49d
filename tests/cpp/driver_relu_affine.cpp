// Drives relu_affine.cpp through the simulator's C API: places the inputs
// in mock HBM, runs the op on 1 core and the SPMD op on 8 cores, and checks
// each output against a reference computed here in double precision.
#include "sim_check.h"

#include <math.h>
#include <string.h>

namespace {

void run_case(const char* op, uint32_t cores, std::vector<uint64_t> shape, float s) {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    std::vector<float> a(n), b(n), out(n, -12345.0f);
    Lcg g{n * 31 + cores};
    for (uint64_t i = 0; i < n; ++i) {
        a[i] = static_cast<float>(static_cast<int32_t>(g.next() % 2001) - 1000) / 64.0f;
        b[i] = static_cast<float>(static_cast<int32_t>(g.next() % 201) - 100) / 8.0f;
    }
    NeuronSim* sim = new_sim(2);
    const uint32_t nd = static_cast<uint32_t>(shape.size());
    CHECK(neuron_sim_arg_tensor(sim, DTYPE_FP32, shape.data(), nd, a.data(), n * 4) == 0, "arg a");
    CHECK(neuron_sim_arg_tensor(sim, DTYPE_FP32, shape.data(), nd, b.data(), n * 4) == 0, "arg b");
    CHECK(neuron_sim_arg_value(sim, 4 /* FLOAT */, DTYPE_FP32, &s) == 0, "arg s");
    CHECK(neuron_sim_set_output(sim, DTYPE_FP32, shape.data(), nd) == 0, "output");
    const int rc = neuron_sim_run(sim, op, cores);
    CHECK(rc == 0, "%s on %u cores: %s", op, cores, describe(rc).c_str());
    CHECK(neuron_sim_read_output(sim, out.data(), n * 4) == 0, "read output");
    for (uint64_t i = 0; i < n; ++i) {
        const double x = a[i] > 0 ? static_cast<double>(a[i]) : 0.0;
        const double want = x * static_cast<double>(s) + static_cast<double>(b[i]);
        CHECK(fabs(out[i] - want) <= 1e-5 * (1.0 + fabs(want)), "%s on %u cores, n=%llu: element %llu is %g, want %g", op,
              cores, static_cast<unsigned long long>(n), static_cast<unsigned long long>(i), out[i], want);
    }
    neuron_sim_free(sim);
    printf("ok: %s on %u core(s), numel %llu (numel %% 8 = %llu)\n", op, cores, static_cast<unsigned long long>(n),
           static_cast<unsigned long long>(n % 8));
}

}  // namespace

int main() {
    check_registration({"relu_affine", "relu_affine_mc"});
    run_case("relu_affine", 1, {1001}, 0.75f);
    run_case("relu_affine", 1, {7, 293}, -1.5f);
    run_case("relu_affine_mc", 8, {8 * 300 + 5}, 0.75f);
    run_case("relu_affine_mc", 8, {7, 293}, -1.5f);  // 2051 = 8 * 256 + 3
    run_case("relu_affine_mc", 8, {5}, 2.0f);         // fewer elements than cores
    return 0;
}
