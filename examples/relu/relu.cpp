// The quick start's kernel (README.md, docs/quickstart.md): a vendor-style
// compute source, single-core. The output is a fresh tensor written
// element by element through accessors, so it runs on 1 core; the
// multicore form (each core its share, staged through TCM) is
// examples/vendor-relu/relu.cpp.
#include <torch/torch.h>

torch::Tensor relu_forward(const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros({t_in.size(0), t_in.size(1)}, torch::kFloat);
    auto in_acc = t_in.accessor<float, 2>();
    auto out_acc = t_out.accessor<float, 2>();
    for (int64_t i = 0; i < t_in.size(0); i++)
        for (int64_t j = 0; j < t_in.size(1); j++)
            out_acc[i][j] = in_acc[i][j] > 0.0f ? in_acc[i][j] : 0.0f;
    return t_out;
}
