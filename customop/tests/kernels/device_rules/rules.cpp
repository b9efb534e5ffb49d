// Kernels that each cross one of the device's limits (SPEC §12), each with
// a correct twin, written as a vendor kernel author writes them.
#include <stdint.h>
#include <stdlib.h>
#include <torch/torch.h>
#include <vector>

// Two streams open take 8 KiB of the 16 KiB TCM pool: 12 KiB more does not
// fit, on the device as here. Output: 1 where tcm_malloc gave null.
torch::Tensor tcm_with_streams(const torch::Tensor& t) {
    torch::Tensor out = torch::zeros({2}, torch::kFloat);
    auto o = out.accessor<float, 1>();
    auto a = t.read_stream_accessor<float>();
    auto b = t.read_stream_accessor<float>();
    void* p = torch::neuron::tcm_malloc(12 * 1024);
    o[0] = p == nullptr ? 1.0f : 0.0f;
    if (p) torch::neuron::tcm_free(p);
    a.close();
    b.close();
    // The twin: with the streams closed the pool is free again.
    void* q = torch::neuron::tcm_malloc(12 * 1024);
    o[1] = q == nullptr ? 1.0f : 0.0f;
    if (q) torch::neuron::tcm_free(q);
    return out;
}

// 16 KiB of locals: twice the core's local stack.
torch::Tensor big_stack(const torch::Tensor& t) {
    volatile float scratch[4096];
    auto in = t.accessor<float, 1>();
    for (int i = 0; i < 4096; i++) scratch[i] = in[i % t.size(0)];
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.size(0); i++) o[i] = scratch[i] * 2.0f;
    return out;
}

// 256 KiB of locals: deeper than the simulator paints its run thread's
// stack (the stack rule must judge it all the same).
torch::Tensor deep_stack(const torch::Tensor& t) {
    volatile float scratch[65536];
    auto in = t.accessor<float, 1>();
    for (int i = 0; i < 65536; i++) scratch[i] = in[i % t.size(0)];
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.size(0); i++) o[i] = scratch[i] * 2.0f;
    return out;
}

// The twin: 1 KiB of locals.
torch::Tensor small_stack(const torch::Tensor& t) {
    volatile float scratch[256];
    auto in = t.accessor<float, 1>();
    for (int i = 0; i < 256; i++) scratch[i] = in[i % t.size(0)];
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.size(0); i++) o[i] = scratch[i] * 2.0f;
    return out;
}

// Returns the transpose of what the shape function says.
torch::Tensor wrong_shape(const torch::Tensor& t) {
    return torch::zeros({t.size(1), t.size(0)}, torch::kFloat);
}

// The twin: exactly the shape function's shape.
torch::Tensor right_shape(const torch::Tensor& t) {
    return torch::zeros({t.size(0), t.size(1)}, torch::kFloat);
}

// The device's libc heap is 1 MiB per core: 8 MiB is null there, and 64 KiB
// is not. Output: 1 where malloc gave null.
torch::Tensor heap_sizes(const torch::Tensor& t) {
    torch::Tensor out = torch::zeros({2}, torch::kFloat);
    auto o = out.accessor<float, 1>();
    void* big = malloc(8u << 20);
    void* small = malloc(64u << 10);
    o[0] = big == nullptr ? 1.0f : 0.0f;
    o[1] = small == nullptr ? 1.0f : 0.0f;
    free(big);
    free(small);
    return out;
}

// A std::vector larger than the heap: the device's library has no
// exceptions, so operator new's failure is the abort report.
torch::Tensor vector_too_big(const torch::Tensor& t) {
    std::vector<float> v(4u << 20, 1.0f);
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    o[0] = v[0];
    return out;
}

// Five streams open at once: the fifth has no buffer (per-element speed on
// the device), which the report warns about. Sums five copies.
torch::Tensor five_streams(const torch::Tensor& t) {
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto s0 = t.read_stream_accessor<float>();
    auto s1 = t.read_stream_accessor<float>();
    auto s2 = t.read_stream_accessor<float>();
    auto s3 = t.read_stream_accessor<float>();
    auto s4 = t.read_stream_accessor<float>();
    auto o = out.write_stream_accessor<float>();
    for (int64_t i = 0; i < t.numel(); i++) {
        o.write(s0.read() + s1.read() + s2.read() + s3.read() + s4.read());
    }
    return out;
}
