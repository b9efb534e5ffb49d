// Counted between two perf_mark() calls by the profile plugin and by
// QEMU's own log (tests/exact_count.rs): runtime calls (TCM staging
// through the emulated DMA engine), soft-float compares, and a call chain
// deeper than the register file (window overflow and underflow
// exceptions in the middle of the region).
#include <stdint.h>
#include <torch/torch.h>

// The marker: the counts are taken when its first instruction runs.
extern "C" __attribute__((noinline)) void perf_mark(void) { __asm__ volatile("" ::: "memory"); }

// Called through a volatile pointer: the compiler cannot turn the
// recursion into a loop, so every level is a real windowed call.
static int deep(int n);
static int (*volatile deeper)(int) = deep;
__attribute__((noinline)) static int deep(int n) { return n == 0 ? 0 : n + deeper(n - 1); }
static volatile int sink;

torch::Tensor relu_marked(const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    perf_mark();
    const int64_t chunk = 64;
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * chunk);
    auto in_tcm = t_in.tcm_accessor();
    auto out_tcm = t_out.tcm_accessor();
    const int64_t n = t_in.numel();
    for (int64_t off = 0; off < n; off += chunk) {
        const int64_t k = n - off < chunk ? n - off : chunk;
        in_tcm.tensor_to_tcm<float>(buf, off, k);
        for (int64_t i = 0; i < k; i++) {
            buf[i] = buf[i] > 0.0f ? buf[i] : 0.0f;
        }
        out_tcm.tcm_to_tensor<float>(buf, off, k);
    }
    torch::neuron::tcm_free(buf);
    sink = deep(24);
    perf_mark();
    return t_out;
}
