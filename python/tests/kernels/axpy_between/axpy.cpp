// out = alpha * x + y, with the scalar between the two tensors in the
// signature (its place in HBM lies between theirs), per element through
// the accessors, as a vendor kernel author writes it.
#include <torch/torch.h>

torch::Tensor axpy(const torch::Tensor& x, double alpha, const torch::Tensor& y) {
    torch::Tensor out = get_dst_tensor();
    const int64_t n = x.numel();
    auto xa = x.accessor<float, 1>();
    auto ya = y.accessor<float, 1>();
    auto oa = out.accessor<float, 1>();
    for (int64_t i = 0; i < n; i++) {
        oa[i] = static_cast<float>(alpha) * xa[i] + ya[i];
    }
    return out;
}
