// Kernels the simulator's sanitizer fails (SPEC §12), each with a correct
// twin: reads of memory nothing wrote, writes into a const input.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

// Accumulates into torch::empty: every += reads an element nothing wrote.
torch::Tensor empty_accumulate(const torch::Tensor& t) {
    torch::Tensor out = torch::empty(t.sizes(), torch::kFloat);
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.size(0); i++) o[i] += in[i];
    return out;
}

// The twin: accumulates into torch::zeros.
torch::Tensor zeros_accumulate(const torch::Tensor& t) {
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.size(0); i++) o[i] += in[i];
    return out;
}

// Clamps its input in place through a cast-away const: the caller's data.
torch::Tensor clamp_in_place(const torch::Tensor& t) {
    torch::Tensor& in = const_cast<torch::Tensor&>(t);
    auto a = in.accessor<float, 1>();
    for (int64_t i = 0; i < in.size(0); i++) {
        if (a[i] < 0.0f) a[i] = 0.0f;
    }
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.size(0); i++) o[i] = a[i];
    return out;
}

// Adds into the output before writing it: get_dst_tensor()'s elements hold
// whatever was there on the device.
torch::Tensor add_into_dst(const torch::Tensor& t) {
    torch::Tensor out = get_dst_tensor();
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.size(0); i++) o[i] = o[i] + in[i];
    return out;
}

// The twin: writes each output element before reading it back.
torch::Tensor set_then_add_dst(const torch::Tensor& t) {
    torch::Tensor out = get_dst_tensor();
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.size(0); i++) {
        o[i] = in[i];
        o[i] = o[i] + in[i];
    }
    return out;
}

// Stages through a tcm_malloc buffer of which it wrote only the first half:
// on the device the rest holds whatever was there; on the simulator the
// fill, a NaN, so the result shows it.
torch::Tensor tcm_half_written(const torch::Tensor& t) {
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    const int64_t n = t.numel();
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * n);
    for (int64_t i = 0; i < n / 2; i++) buf[i] = 1.0f;
    out.tcm_accessor().tcm_to_tensor<float>(buf, 0, n);
    torch::neuron::tcm_free(buf);
    return out;
}

// Doubles its input's second element in place through a raw pointer: no
// accessor sees the store, the caller's data changes all the same.
torch::Tensor scale_input_raw(const torch::Tensor& t) {
    Q7PtrType q = t.q7_data_ptr();
    float* p = static_cast<float*>(neuron_translate(q.ctx, q.addr));
    if (p) p[1] *= 2.0f;
    return torch::zeros(t.sizes(), torch::kFloat);
}
