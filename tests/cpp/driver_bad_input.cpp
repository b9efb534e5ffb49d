// Bad input through the C++ path: the relu_affine kernel (relu_affine.cpp)
// invoked through the simulator's C API with invocations the runtime must
// refuse. For each: the run returns the gate's code, neuron_error_message
// gives its reason, and the output (filled with a sentinel first) is
// untouched. Prints "refused: <code> (<message>)" per case.
#include "sim_check.h"

#include <string.h>

namespace {

constexpr uint8_t SENTINEL = 0xA5;
constexpr uint8_t KIND_INT = 3, KIND_FLOAT = 4;
constexpr uint64_t N = 21;  // 21 % 8 = 5

struct Case {
    const char* what;
    NeuronSim* sim;
};

std::vector<float> input(float base) {
    std::vector<float> v(N);
    for (uint64_t i = 0; i < N; ++i) v[i] = base + static_cast<float>(i);
    return v;
}

// A simulator with a valid output of `out_dtype`, filled with the sentinel.
NeuronSim* with_output(uint8_t out_dtype) {
    NeuronSim* s = new_sim(2);
    const uint64_t shape[1] = {N};
    CHECK(neuron_sim_set_output(s, out_dtype, shape, 1) == 0, "output");
    CHECK(neuron_sim_fill_output(s, SENTINEL) == 0, "fill output");
    return s;
}

void add_tensor(NeuronSim* s) {
    const uint64_t shape[1] = {N};
    const std::vector<float> a = input(-10.0f);
    CHECK(neuron_sim_arg_tensor(s, DTYPE_FP32, shape, 1, a.data(), N * 4) == 0, "tensor arg");
}

void add_float(NeuronSim* s, uint8_t kind) {
    const float v = 0.5f;
    CHECK(neuron_sim_arg_value(s, kind, DTYPE_FP32, &v) == 0, "value arg");
}

// A 48-byte descriptor (docs/abi.md §3) of an HBM FP32 vector of N
// elements at `addr`, with `dtype` and `num_dim` as given.
void add_raw(NeuronSim* s, uint8_t dtype, uint8_t num_dim) {
    uint8_t d[48] = {};
    d[2] = dtype;
    d[3] = num_dim;
    const uint64_t addr = 0x4000000000ULL + (3ULL << 30);
    memcpy(d + 8, &addr, 8);
    const uint16_t n = N;
    memcpy(d + 16, &n, 2);
    const uint64_t bytes = N * 4;
    memcpy(d + 32, &bytes, 8);
    CHECK(neuron_sim_arg_raw(s, 1 /* TENSOR */, d) == 0, "raw arg");
}

void expect_refused(NeuronSim* s, const char* op, uint32_t cores, int code, const char* what) {
    const int rc = neuron_sim_run(s, op, cores);
    CHECK(rc == code, "%s: run returned %s, want %s", what, describe(rc).c_str(), describe(code).c_str());
    const char* msg = neuron_error_message(rc);
    CHECK(msg != nullptr && strlen(msg) > 0, "%s: no message", what);
    std::vector<uint8_t> out(N * 4, 0);
    // A failed run has no result to read; its bytes as they are show it
    // wrote nothing.
    CHECK(neuron_sim_read_output(s, out.data(), out.size()) == 106 /* NoRunResult */, "%s: read output after a failed run", what);
    CHECK(neuron_sim_inspect_output(s, out.data(), out.size()) == 0, "inspect output");
    for (size_t i = 0; i < out.size(); ++i) {
        CHECK(out[i] == SENTINEL, "%s: output byte %zu was written (0x%02x)", what, i, out[i]);
    }
    printf("refused: %d (%s) [%s]\n", rc, msg, what);
    neuron_sim_free(s);
}

}  // namespace

int main() {
    // FP32R (11) as the first tensor: the dtype gate.
    {
        NeuronSim* s = with_output(DTYPE_FP32);
        add_raw(s, DTYPE_FP32_R, 1);
        add_tensor(s);
        add_float(s, KIND_FLOAT);
        expect_refused(s, "relu_affine", 1, 34, "FP32R input");
    }
    // The same on 8 cores: every core refuses, none writes.
    {
        NeuronSim* s = with_output(DTYPE_FP32);
        add_raw(s, DTYPE_FP32_R, 1);
        add_tensor(s);
        add_float(s, KIND_FLOAT);
        expect_refused(s, "relu_affine_mc", 8, 34, "FP32R input, 8 cores");
    }
    // Rank 0.
    {
        NeuronSim* s = with_output(DTYPE_FP32);
        add_raw(s, DTYPE_FP32, 0);
        add_tensor(s);
        add_float(s, KIND_FLOAT);
        expect_refused(s, "relu_affine", 1, 36, "rank 0");
    }
    // The kernel returns an FP32 tensor into an INT32 output.
    {
        NeuronSim* s = with_output(DTYPE_INT32);
        add_tensor(s);
        add_tensor(s);
        add_float(s, KIND_FLOAT);
        expect_refused(s, "relu_affine", 1, 35, "dtype mismatch on return");
    }
    // The float argument passed as an int: the wrapper's reader refuses.
    {
        NeuronSim* s = with_output(DTYPE_FP32);
        add_tensor(s);
        add_tensor(s);
        add_float(s, KIND_INT);
        expect_refused(s, "relu_affine", 1, 32, "float read from an int argument");
    }
    // The float argument missing: reading past the last argument.
    {
        NeuronSim* s = with_output(DTYPE_FP32);
        add_tensor(s);
        add_tensor(s);
        expect_refused(s, "relu_affine_mc", 8, 31, "read past the last argument");
    }
    // Eleven arguments (the simulator's block builder refuses them).
    {
        NeuronSim* s = with_output(DTYPE_FP32);
        for (int i = 0; i < 10; ++i) add_tensor(s);
        add_float(s, KIND_FLOAT);
        expect_refused(s, "relu_affine", 1, 30, "11 arguments");
    }
    return 0;
}
