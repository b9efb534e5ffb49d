// x - x: 0 for every finite x, NaN for an infinite one (inf - inf), a NaN
// whose sign the arithmetic decides (x86: negative; the device's soft
// float: positive).
#include <torch/torch.h>

torch::Tensor self_sub(const torch::Tensor& x) {
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto a = x.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.size(0); i++) o[i] = a[i] - a[i];
    return out;
}
