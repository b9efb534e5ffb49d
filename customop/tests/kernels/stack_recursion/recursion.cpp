// Recursions whose deep frames call no library function: the stack the
// kernel uses is only seen by what the frames leave on the stack.
#include <torch/torch.h>

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

// y = 2x, computed beside a recursion `levels` deep.
static torch::Tensor doubled_beside(const torch::Tensor& t, int levels) {
    float depth = descend(levels, 0.0f);
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.size(0); i++) {
        o[i] = in[i] * 2.0f + (depth - levels);
    }
    return out;
}

// About 130 KiB of stack: over a -DSTACK_SIZE=65536 build's 64 KiB.
torch::Tensor deep_recursion(const torch::Tensor& t) { return doubled_beside(t, 240); }

// About 32 KiB: within 64 KiB (the twin of deep_recursion).
torch::Tensor shallow_recursion(const torch::Tensor& t) { return doubled_beside(t, 56); }

// About 40 KiB: over the core's 8 KiB local stack (no -DSTACK_SIZE), and
// deeper below its library calls than a debug build's library frames go.
torch::Tensor local_overflow(const torch::Tensor& t) { return doubled_beside(t, 76); }

// About 2 KiB: within the local stack (the twin of local_overflow).
torch::Tensor local_fits(const torch::Tensor& t) { return doubled_beside(t, 3); }
