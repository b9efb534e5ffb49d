// The argument types spelled every way the wrapper accepts them: the
// generated declaration must name the same C++ types, or the library
// would not link.
#include <torch/torch.h>

using namespace torch;

at::Tensor sum_all(Tensor t, torch::Tensor& u, const at::Tensor w, c10::Scalar s, int i, float f, long l, const double& d) {
    Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto a = t.accessor<float, 1>();
    auto b = u.accessor<float, 1>();
    auto c = w.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    const float rest = s.toFloat() + static_cast<float>(i) + f + static_cast<float>(l) + static_cast<float>(d);
    for (int64_t k = 0; k < t.size(0); k++) {
        o[k] = a[k] + b[k] + c[k] + rest;
    }
    return out;
}
