// Element accessors over tensors larger than one 16 MiB window, as a
// kernel author writes them: on the simulator each access is answered in
// place by the accessor's host fast path, which must count, check and
// report exactly as the library's per-element hooks.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

// out = 2 * in + 1, the output written then read back and written again.
torch::Tensor walk_twice(const torch::Tensor& t) {
    torch::Tensor out = get_dst_tensor();
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    const int64_t n = t.size(0);
    for (int64_t i = 0; i < n; i++) o[i] = in[i] * 2.0f;
    for (int64_t i = 0; i < n; i++) o[i] = o[i] + 1.0f;
    return out;
}

// As walk_twice, but one element near the end (in the last window) is
// never written before it is read back: one uninitialised read.
torch::Tensor walk_skipping_one(const torch::Tensor& t) {
    torch::Tensor out = get_dst_tensor();
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    const int64_t n = t.size(0);
    for (int64_t i = 0; i < n; i++) {
        if (i != n - 3) o[i] = in[i] * 2.0f;
    }
    for (int64_t i = 0; i < n; i++) o[i] = o[i] + 1.0f;
    return out;
}

// Reads its input to the end, then writes its last element through a
// cast-away const: a write into an input, found past the fast loads.
torch::Tensor write_input_last(const torch::Tensor& t) {
    torch::Tensor& x = const_cast<torch::Tensor&>(t);
    auto a = x.accessor<float, 1>();
    torch::Tensor out = get_dst_tensor();
    auto o = out.accessor<float, 1>();
    const int64_t n = t.size(0);
    for (int64_t i = 0; i < n; i++) o[i] = a[i];
    a[n - 1] = 0.0f;
    return out;
}

// Reads element n-1 of `in` from a frame with `Floats` floats of locals,
// out of line and calling nothing: on the simulator that element's check
// in place (the accessor made, and its window opened by the caller's
// reads, in a shallow frame) is the only thing that sees how deep this
// frame is.
template <int Floats, class Acc>
__attribute__((noinline)) float read_deep(const Acc& in, int64_t n) {
    volatile float scratch[Floats];
    for (int i = 0; i < Floats; i++) scratch[i] = 1.0f;
    return in[n - 1] + scratch[(n - 1) % Floats];
}

// 16 KiB of locals in a frame that reaches the library only through an
// element read: over the core's 8 KiB local stack all the same.
torch::Tensor deep_element(const torch::Tensor& t) {
    auto in = t.accessor<float, 1>();
    torch::Tensor out = get_dst_tensor();
    auto o = out.accessor<float, 1>();
    const int64_t n = t.size(0);
    for (int64_t i = 0; i < n; i++) o[i] = in[i];
    o[0] = read_deep<4096>(in, n);
    return out;
}

// The twin: 1 KiB of locals in that frame.
torch::Tensor shallow_element(const torch::Tensor& t) {
    auto in = t.accessor<float, 1>();
    torch::Tensor out = get_dst_tensor();
    auto o = out.accessor<float, 1>();
    const int64_t n = t.size(0);
    for (int64_t i = 0; i < n; i++) o[i] = in[i];
    o[0] = read_deep<256>(in, n);
    return out;
}
