// Multicore kernels (8 cores) the emulated cores' check fails, each with a
// correct twin: a tcm_malloc block summed before anything wrote it, and
// cores writing the same output bytes.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

// Each core sums its slice of the input into a tcm_malloc block, three
// times; `clear_first` zeroes the block first (the twin).
static torch::Tensor slice_sum(const torch::Tensor& t, bool clear_first) {
    torch::Tensor out = get_dst_tensor();
    const int64_t n = t.numel(), per = (n + get_cpu_count() - 1) / get_cpu_count();
    const int64_t lo = get_cpu_id() * per, hi = lo + per < n ? lo + per : n;
    if (hi <= lo) return out;
    float* acc = (float*)torch::neuron::tcm_malloc(sizeof(float) * (hi - lo));
    float* part = (float*)torch::neuron::tcm_malloc(sizeof(float) * (hi - lo));
    auto in = t.tcm_accessor();
    auto o = out.tcm_accessor();
    in.tensor_to_tcm<float>(part, lo, hi - lo);
    if (clear_first) {
        for (int64_t i = 0; i < hi - lo; i++) acc[i] = 0.0f;
    }
    for (int rep = 0; rep < 3; rep++) {
        for (int64_t i = 0; i < hi - lo; i++) acc[i] += part[i];
    }
    o.tcm_to_tensor<float>(acc, lo, hi - lo);
    torch::neuron::tcm_free(part);
    torch::neuron::tcm_free(acc);
    return out;
}

torch::Tensor slice_sum_unwritten(const torch::Tensor& t) { return slice_sum(t, false); }
torch::Tensor slice_sum_cleared(const torch::Tensor& t) { return slice_sum(t, true); }

// Every core writes the first element of the output besides its slice
// (the twin: only core 0 does).
static torch::Tensor doubled_with_first(const torch::Tensor& t, bool every_core) {
    torch::Tensor out = get_dst_tensor();
    const int64_t n = t.numel(), per = (n + get_cpu_count() - 1) / get_cpu_count();
    const int64_t lo = get_cpu_id() * per, hi = lo + per < n ? lo + per : n;
    if (hi <= lo) return out;
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * (hi - lo));
    auto in = t.tcm_accessor();
    auto o = out.tcm_accessor();
    in.tensor_to_tcm<float>(buf, lo, hi - lo);
    for (int64_t i = 0; i < hi - lo; i++) buf[i] *= 2.0f;
    if (every_core || lo == 0) {
        o.tcm_to_tensor<float>(buf, 0, 1);
    }
    o.tcm_to_tensor<float>(buf, lo, hi - lo);
    torch::neuron::tcm_free(buf);
    return out;
}

torch::Tensor all_write_first(const torch::Tensor& t) { return doubled_with_first(t, true); }
torch::Tensor one_writes_first(const torch::Tensor& t) { return doubled_with_first(t, false); }
