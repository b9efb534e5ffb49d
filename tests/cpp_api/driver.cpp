// Runs api_kernel.cpp's ops on the simulator and checks their outputs.
#include "neuroncustomop.hpp"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#define CHECK(c, ...)                                                         \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #c);           \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

template <class T>
static std::vector<T> run(NeuronSim* s, const char* op, uint8_t dtype, std::vector<uint64_t> shape, const std::vector<T>& in, int extra = -1) {
    neuron_sim_clear_args(s);
    CHECK(neuron_sim_arg_tensor(s, dtype, shape.data(), shape.size(), in.data(), in.size() * sizeof(T)) == 0, "arg");
    if (extra >= 0) {
        const int32_t v = extra;
        CHECK(neuron_sim_arg_value(s, 3, DTYPE_INT32, &v) == 0, "int arg");
    }
    CHECK(neuron_sim_set_output(s, dtype, shape.data(), shape.size()) == 0, "output");
    const int rc = neuron_sim_run(s, op, 1);
    CHECK(rc == 0, "%s: %d %s", op, rc, neuron_error_message(rc));
    std::vector<T> out(in.size());
    neuron_sim_read_output(s, out.data(), out.size() * sizeof(T));
    return out;
}

int main() {
    NeuronSim* s = neuron_sim_new();
    CHECK(neuron_sim_register(s) == 4, "register");

    std::vector<float> a(3000);
    for (size_t i = 0; i < a.size(); i++) a[i] = static_cast<float>(i) * 0.5f - 100.0f;
    auto o = run(s, "streams", DTYPE_FP32, {3000}, a);
    for (size_t i = 0; i < a.size(); i++) CHECK(o[i] == 2 * a[i], "streams %zu", i);
    printf("ok: streams\n");

    for (int p = 0; p < 3; p++) {
        auto c = run(s, "coherency", DTYPE_INT32, {4}, std::vector<int32_t>{1, 2, 3, 4}, p);
        CHECK(c[0] == 42, "coherency %d", p);
    }
    printf("ok: coherency\n");

    std::vector<neuron::Half> x(777);
    for (size_t i = 0; i < x.size(); i++) x[i] = neuron::Half(static_cast<float>(static_cast<int>(i % 41) - 20) * 0.125f);
    auto h = run(s, "half_ops", DTYPE_FP16, {777}, x);
    for (size_t i = 0; i < x.size(); i++) {
        const float v = x[i];
        const float e = neuron::Half(expf(v));
        const float want = fminf(fmaxf(static_cast<float>(neuron::Half(e + 2 * v)), -1.0f), 8.0f);
        CHECK(fabsf(static_cast<float>(h[i]) - want) <= fabsf(want) / 512 + 1e-3f, "half_ops %zu: %f vs %f", i, static_cast<float>(h[i]), want);
    }
    printf("ok: half_ops\n");

    std::vector<int64_t> g(5 * 6);
    for (size_t i = 0; i < g.size(); i++) g[i] = static_cast<int64_t>(i) - 7;
    auto go = run(s, "grid", DTYPE_INT64, {5, 6}, g);
    for (int64_t i = 0; i < 5; i++)
        for (int64_t j = 0; j < 6; j++) CHECK(go[i * 6 + j] == g[i * 6 + j] * 10 + i - j, "grid %lld %lld", (long long)i, (long long)j);
    printf("ok: grid\n");
    neuron_sim_free(s);
    return 0;
}
