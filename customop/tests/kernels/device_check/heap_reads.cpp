// Kernels the emulated cores' check fails, each with a correct twin:
// blocks of tcm_malloc and malloc read before anything wrote them, read
// after they were freed, written past their end.
#include <stdint.h>
#include <stdlib.h>
#include <torch/torch.h>

// Sums the input three times into a tcm_malloc block it never cleared: the
// first += reads whatever the block held.
template <typename T>
static torch::Tensor tcm_sum(const torch::Tensor& t, bool clear_first, c10::ScalarType dtype) {
    const int64_t n = t.size(0);
    T* acc = (T*)torch::neuron::tcm_malloc(sizeof(T) * n);
    if (clear_first) {
        for (int64_t i = 0; i < n; i++) acc[i] = 0;
    }
    auto in = t.accessor<T, 1>();
    for (int rep = 0; rep < 3; rep++) {
        for (int64_t i = 0; i < n; i++) acc[i] += in[i];
    }
    torch::Tensor out = torch::zeros(t.sizes(), dtype);
    auto o = out.accessor<T, 1>();
    for (int64_t i = 0; i < n; i++) o[i] = acc[i];
    torch::neuron::tcm_free(acc);
    return out;
}

torch::Tensor tcm_sum_unwritten(const torch::Tensor& t) { return tcm_sum<float>(t, false, torch::kFloat); }
torch::Tensor tcm_sum_cleared(const torch::Tensor& t) { return tcm_sum<float>(t, true, torch::kFloat); }
torch::Tensor tcm_isum_unwritten(const torch::Tensor& t) { return tcm_sum<int32_t>(t, false, torch::kInt); }
torch::Tensor tcm_isum_cleared(const torch::Tensor& t) { return tcm_sum<int32_t>(t, true, torch::kInt); }

// Counts the input's values (0..15) in a malloc'd array of counters,
// incremented before the array is zeroed (the twin: calloc, zeroed).
static torch::Tensor count_values(const torch::Tensor& t, bool zeroed) {
    int32_t* counts = (int32_t*)(zeroed ? calloc(16, sizeof(int32_t)) : malloc(16 * sizeof(int32_t)));
    auto in = t.accessor<int32_t, 1>();
    for (int64_t i = 0; i < t.size(0); i++) counts[in[i] & 15]++;
    torch::Tensor out = torch::zeros(t.sizes(), torch::kInt);
    auto o = out.accessor<int32_t, 1>();
    for (int64_t i = 0; i < t.size(0); i++) o[i] = counts[in[i] & 15];
    free(counts);
    return out;
}

torch::Tensor count_malloc(const torch::Tensor& t) { return count_values(t, false); }
torch::Tensor count_calloc(const torch::Tensor& t) { return count_values(t, true); }

// Doubles through a tcm_malloc block, then reads it again after freeing
// it (the twin reads it before).
static torch::Tensor doubled(const torch::Tensor& t, bool read_after_free) {
    const int64_t n = t.size(0);
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * n);
    auto in = t.accessor<float, 1>();
    for (int64_t i = 0; i < n; i++) buf[i] = in[i] * 2.0f;
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    if (!read_after_free) {
        for (int64_t i = 0; i < n; i++) o[i] = buf[i];
    }
    torch::neuron::tcm_free(buf);
    if (read_after_free) {
        for (int64_t i = 0; i < n; i++) o[i] = buf[i];
    }
    return out;
}

torch::Tensor read_after_free(const torch::Tensor& t) { return doubled(t, true); }
torch::Tensor read_before_free(const torch::Tensor& t) { return doubled(t, false); }

// Fills a malloc'd array of n floats with a loop's `<=`: one element past
// its end (the twin's `<` stays inside).
static torch::Tensor ramp_copy(const torch::Tensor& t, bool one_past) {
    const int64_t n = t.size(0);
    float* v = (float*)malloc(sizeof(float) * n);
    const int64_t last = one_past ? n : n - 1;
    for (int64_t i = 0; i <= last; i++) v[i] = (float)i;
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < n; i++) o[i] = v[i];
    free(v);
    return out;
}

torch::Tensor write_past_end(const torch::Tensor& t) { return ramp_copy(t, true); }
torch::Tensor write_to_end(const torch::Tensor& t) { return ramp_copy(t, false); }
