// Multicore kernels (8 cores) the emulated cores' check fails, each with a
// correct twin: a tcm_malloc block summed before anything wrote it, cores
// writing the same output bytes, a block read after its free, an array
// written past its end, an input written.
#include <stdint.h>
#include <stdlib.h>
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

// Each core doubles its slice through a tcm_malloc block and copies the
// block out after freeing it (the twin: before).
static torch::Tensor doubled_slice(const torch::Tensor& t, bool after_free) {
    torch::Tensor out = get_dst_tensor();
    const int64_t n = t.numel(), per = (n + get_cpu_count() - 1) / get_cpu_count();
    const int64_t lo = get_cpu_id() * per, hi = lo + per < n ? lo + per : n;
    if (hi <= lo) return out;
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * (hi - lo));
    float* res = (float*)torch::neuron::tcm_malloc(sizeof(float) * (hi - lo));
    auto in = t.tcm_accessor();
    auto o = out.tcm_accessor();
    in.tensor_to_tcm<float>(buf, lo, hi - lo);
    if (after_free) torch::neuron::tcm_free(buf);
    for (int64_t i = 0; i < hi - lo; i++) res[i] = buf[i] * 2.0f;
    if (!after_free) torch::neuron::tcm_free(buf);
    o.tcm_to_tensor<float>(res, lo, hi - lo);
    torch::neuron::tcm_free(res);
    return out;
}

torch::Tensor slice_after_free(const torch::Tensor& t) { return doubled_slice(t, true); }
torch::Tensor slice_before_free(const torch::Tensor& t) { return doubled_slice(t, false); }

// Each core stages its slice in a malloc'd array filled with a loop's
// `<=`: one element past its end (the twin's `<` stays inside).
static torch::Tensor staged_slice(const torch::Tensor& t, bool one_past) {
    torch::Tensor out = get_dst_tensor();
    const int64_t n = t.numel(), per = (n + get_cpu_count() - 1) / get_cpu_count();
    const int64_t lo = get_cpu_id() * per, hi = lo + per < n ? lo + per : n;
    if (hi <= lo) return out;
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * (hi - lo));
    float* v = (float*)malloc(sizeof(float) * (hi - lo));
    auto in = t.tcm_accessor();
    auto o = out.tcm_accessor();
    in.tensor_to_tcm<float>(buf, lo, hi - lo);
    const int64_t last = one_past ? hi - lo : hi - lo - 1;
    for (int64_t i = 0; i <= last; i++) v[i] = i < hi - lo ? buf[i] + 1.0f : 0.0f;
    for (int64_t i = 0; i < hi - lo; i++) buf[i] = v[i];
    o.tcm_to_tensor<float>(buf, lo, hi - lo);
    free(v);
    torch::neuron::tcm_free(buf);
    return out;
}

torch::Tensor slice_past_end(const torch::Tensor& t) { return staged_slice(t, true); }
torch::Tensor slice_to_end(const torch::Tensor& t) { return staged_slice(t, false); }

// Each core doubles its slice; the breaking one also doubles the first
// element of its slice of the input in place, through a raw pointer (the
// twin only reads it that way).
static torch::Tensor doubled_back(const torch::Tensor& t, bool into_input) {
    torch::Tensor out = get_dst_tensor();
    const int64_t n = t.numel(), per = (n + get_cpu_count() - 1) / get_cpu_count();
    const int64_t lo = get_cpu_id() * per, hi = lo + per < n ? lo + per : n;
    if (hi <= lo) return out;
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * (hi - lo));
    auto in = t.tcm_accessor();
    auto o = out.tcm_accessor();
    in.tensor_to_tcm<float>(buf, lo, hi - lo);
    Q7PtrType q = t.q7_data_ptr();
    float* raw = static_cast<float*>(neuron_translate(q.ctx, q.addr));
    if (raw && into_input) raw[lo] *= 2.0f;
    const float first = raw ? raw[lo] : 0.0f;
    for (int64_t i = 0; i < hi - lo; i++) buf[i] = buf[i] * 2.0f + (first - first);
    o.tcm_to_tensor<float>(buf, lo, hi - lo);
    torch::neuron::tcm_free(buf);
    return out;
}

torch::Tensor doubled_into_input(const torch::Tensor& t) { return doubled_back(t, true); }
torch::Tensor doubled_into_output(const torch::Tensor& t) { return doubled_back(t, false); }
