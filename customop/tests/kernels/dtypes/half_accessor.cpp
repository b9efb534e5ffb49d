// The 16-bit float types through the per-element accessor, 2-D, as a
// vendor kernel writes them: read as float (`float v = in[i][j]`), written
// from a c10 value, updated in place with a compound assignment. For each
// element: out = (x * 0.5 + 1) * 2, which is x + 2 exactly (x is a small
// value of the type, so every step is exact); other dtypes are left
// zero.
#include <torch/torch.h>

template <class T>
static void halve_and_double(const torch::Tensor& in, torch::Tensor& out) {
    auto a = in.accessor<T, 2>();
    auto o = out.accessor<T, 2>();
    for (int64_t i = 0; i < in.size(0); i++) {
        for (int64_t j = 0; j < in.size(1); j++) {
            float v = a[i][j];
            o[i][j] = T(v * 0.5f + 1.0f);
            o[i][j] *= 2.0f;
        }
    }
}

torch::Tensor plus_two_16bit(const torch::Tensor& t) {
    torch::Tensor out = torch::zeros(t.sizes(), t.scalar_type());
    if (t.scalar_type() == torch::kHalf) halve_and_double<c10::Half>(t, out);
    if (t.scalar_type() == torch::kBFloat16) halve_and_double<at::BFloat16>(t, out);
    return out;
}
