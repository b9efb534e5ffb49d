// A multicore kernel whose recursion (deep frames calling no library
// function) needs ~130 KiB of stack on each core, built with
// -DSTACK_SIZE=65536; the twin's needs ~32 KiB.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

// One level: 512 B of locals, then the next level; x + levels at the end.
__attribute__((noinline)) static float descend(int levels, float x) {
    volatile float pad[128];
    pad[levels % 128] = x;
    if (levels == 0) {
        return pad[0];
    }
    float below = descend(levels - 1, x + 1.0f);
    return below + pad[levels % 128] * 0.0f;
}

// Each core doubles its slice through TCM, beside a recursion `levels` deep.
static torch::Tensor doubled_beside(const torch::Tensor& t, int levels) {
    torch::Tensor out = get_dst_tensor();
    const float depth = descend(levels, 0.0f);
    const int64_t n = t.numel(), per = (n + get_cpu_count() - 1) / get_cpu_count();
    const int64_t lo = get_cpu_id() * per, hi = lo + per < n ? lo + per : n;
    if (hi <= lo) return out;
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * (hi - lo));
    auto in = t.tcm_accessor();
    auto o = out.tcm_accessor();
    in.tensor_to_tcm<float>(buf, lo, hi - lo);
    for (int64_t i = 0; i < hi - lo; i++) buf[i] = buf[i] * 2.0f + (depth - levels);
    o.tcm_to_tensor<float>(buf, lo, hi - lo);
    torch::neuron::tcm_free(buf);
    return out;
}

torch::Tensor deep_slices(const torch::Tensor& t) { return doubled_beside(t, 240); }
torch::Tensor shallow_slices(const torch::Tensor& t) { return doubled_beside(t, 56); }
