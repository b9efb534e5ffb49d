// Multicore kernels (a --multicore build runs on 8 cores): only the TCM
// accessor is correct there on the device (SPEC §12).
#include <stdint.h>
#include <stdio.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

// Each core doubles its slice through the element accessor: undefined in
// multicore mode on the device.
torch::Tensor double_elem(const torch::Tensor& t) {
    torch::Tensor out = get_dst_tensor();
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    const int64_t n = t.numel(), per = (n + get_cpu_count() - 1) / get_cpu_count();
    const int64_t lo = get_cpu_id() * per, hi = lo + per < n ? lo + per : n;
    for (int64_t i = lo; i < hi; i++) o[i] = in[i] * 2.0f;
    return out;
}

// The twin: the same through TCM. Every core prints; the device keeps only
// core 0's output.
torch::Tensor double_tcm(const torch::Tensor& t) {
    torch::Tensor out = get_dst_tensor();
    const int64_t n = t.numel(), per = (n + get_cpu_count() - 1) / get_cpu_count();
    const int64_t lo = get_cpu_id() * per, hi = lo + per < n ? lo + per : n;
    printf("core %d: elements %d..%d\n", (int)get_cpu_id(), (int)lo, (int)hi);
    if (hi <= lo) return out;
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * (hi - lo));
    auto in = t.tcm_accessor();
    auto o = out.tcm_accessor();
    in.tensor_to_tcm<float>(buf, lo, hi - lo);
    for (int64_t i = 0; i < hi - lo; i++) buf[i] *= 2.0f;
    o.tcm_to_tensor<float>(buf, lo, hi - lo);
    torch::neuron::tcm_free(buf);
    return out;
}

// Each core doubles its slice into the output, then adds the next core's
// first element from the output: written by another core, with no barrier.
torch::Tensor peek_neighbour(const torch::Tensor& t) {
    torch::Tensor out = get_dst_tensor();
    const int64_t n = t.numel(), per = (n + get_cpu_count() - 1) / get_cpu_count();
    const int64_t lo = get_cpu_id() * per, hi = lo + per < n ? lo + per : n;
    if (hi <= lo) return out;
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * (hi - lo + 1));
    auto in = t.tcm_accessor();
    auto o = out.tcm_accessor();
    in.tensor_to_tcm<float>(buf, lo, hi - lo);
    for (int64_t i = 0; i < hi - lo; i++) buf[i] *= 2.0f;
    o.tcm_to_tensor<float>(buf, lo, hi - lo);
    if (hi < n) {
        o.tensor_to_tcm<float>(buf + (hi - lo), hi, 1);
        buf[0] += buf[hi - lo];
        o.tcm_to_tensor<float>(buf, lo, 1);
    }
    torch::neuron::tcm_free(buf);
    return out;
}
