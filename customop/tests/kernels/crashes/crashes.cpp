// Kernels that die the ways a host process can: each must end in a crash
// report naming the core, the op and the signal, never a silent death.
// The fatal value comes from the input tensor, so the compiler cannot see
// (and fold) the fault: x holds zeros.
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <stdint.h>
#include <torch/torch.h>

// Unbounded recursion: each frame keeps a buffer live, so the call is no
// tail call and the stack overflows.
static int64_t dive(volatile const float* x, int64_t depth) {
    volatile char frame[256];
    frame[depth & 255] = static_cast<char>(depth);
    return dive(x, depth + 1 + static_cast<int64_t>(x[0])) + frame[0];
}

torch::Tensor recurse_forever(const torch::Tensor& x) {
    auto in = x.accessor<float, 1>();
    float first = in[0];
    torch::Tensor out = torch::zeros(x.sizes(), torch::kFloat);
    out.accessor<float, 1>()[0] = static_cast<float>(dive(&first, 0));
    return out;
}

torch::Tensor call_abort(const torch::Tensor& x) {
    if (x.accessor<float, 1>()[0] == 0.0f) abort();
    return x;
}

torch::Tensor divide_by_zero(const torch::Tensor& x) {
    int d = static_cast<int>(x.accessor<float, 1>()[0]);
    volatile int n = 7;
    torch::Tensor out = torch::zeros(x.sizes(), torch::kFloat);
    out.accessor<float, 1>()[0] = static_cast<float>(n / d);
    return out;
}

torch::Tensor store_through_null(const torch::Tensor& x) {
    float* p = reinterpret_cast<float*>(static_cast<uintptr_t>(x.accessor<float, 1>()[0]));
    *p = 1.0f;
    return x;
}

torch::Tensor illegal_instruction(const torch::Tensor& x) {
    if (x.accessor<float, 1>()[0] == 0.0f) __builtin_trap();
    return x;
}

torch::Tensor spin_forever(const torch::Tensor& x) {
    auto in = x.accessor<float, 1>();
    volatile float v = in[0];
    // x[1] != 0: a line to stderr every millisecond, so the caller's wait
    // keeps receiving output and never has a quiet 50 ms tick; it must
    // still hear Ctrl-C.
    const bool chatty = in[1] != 0.0f;
    while (v == 0.0f) {
        if (chatty) {
            fputs("still spinning\n", stderr);
            usleep(1000);
        }
    }
    return x;
}

// The correct twin: the same input, an op that returns.
torch::Tensor copy_through(const torch::Tensor& x) {
    torch::Tensor out = torch::zeros(x.sizes(), torch::kFloat);
    auto in = x.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.size(0); i++) o[i] = in[i];
    return out;
}
