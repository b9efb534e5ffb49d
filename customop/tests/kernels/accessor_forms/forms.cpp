// The accessor forms libtorch kernels use beyond `auto a = x.accessor<T,
// N>()`: a TensorAccessor sliced from the accessor, a sub-accessor of a
// temporary accessor, and planes and rows kept in variables. Each stays
// valid while its tensor lives.
#include <torch/torch.h>

// x: [r, 2c] -> [r, c], neighbouring pairs summed.
torch::Tensor pair_sum(const torch::Tensor& x) {
    torch::Tensor out = torch::empty({x.size(0), x.size(1) / 2}, torch::kFloat);
    torch::TensorAccessor<float, 2> o = out.accessor<float, 2>();
    for (int64_t i = 0; i < x.size(0); i++) {
        auto row = x.accessor<float, 2>()[i];
        for (int64_t j = 0; j < o.size(1); j++) o[i][j] = row[2 * j] + row[2 * j + 1];
    }
    return out;
}

// x: [p, r, c], each plane scaled by its index + 1.
torch::Tensor plane_scale(const torch::Tensor& x) {
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto xa = x.accessor<float, 3>();
    auto oa = out.accessor<float, 3>();
    for (int64_t p = 0; p < xa.size(0); p++) {
        auto xp = xa[p];
        auto op = oa[p];
        for (int64_t r = 0; r < xp.size(0); r++) {
            auto orow = op[r];
            for (int64_t c = 0; c < xp.size(1); c++) orow[c] = xp[r][c] * static_cast<float>(p + 1);
        }
    }
    return out;
}
