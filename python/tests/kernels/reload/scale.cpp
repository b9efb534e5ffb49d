// A 1-D float tensor times a factor: the reloading test edits FACTOR and
// loads the library again.
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor scale(const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    auto in = t_in.accessor<float, 1>();
    auto out = t_out.accessor<float, 1>();
    for (int64_t i = 0; i < t_in.size(0); i++) {
        out[i] = in[i] * 2.0f;  // FACTOR
    }
    return t_out;
}
