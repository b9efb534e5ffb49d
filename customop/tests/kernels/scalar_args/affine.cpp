// out = t * alpha + shift: a Scalar and an int64_t argument next to a tensor.
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor affine(const torch::Tensor& t, const torch::Scalar& alpha, int64_t shift) {
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    const float a = alpha.toFloat();
    for (int64_t i = 0; i < t.size(0); i++) {
        o[i] = in[i] * a + static_cast<float>(shift);
    }
    return out;
}

// An int32 tensor plus a long long and a double (the codegen's other kinds).
torch::Tensor offset_int(const torch::Tensor& t, long long add, double mul) {
    torch::Tensor out = torch::zeros(t.sizes(), torch::kInt);
    auto in = t.accessor<int32_t, 1>();
    auto o = out.accessor<int32_t, 1>();
    for (int64_t i = 0; i < t.size(0); i++) {
        o[i] = static_cast<int32_t>((in[i] + add) * mul);
    }
    return out;
}
