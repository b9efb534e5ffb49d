// Writes the first half of its output, then reads one element past its
// input: the run fails (error 83), and what it wrote is still there to
// look at.
#include <torch/torch.h>

torch::Tensor half_then_past(const torch::Tensor& t) {
    torch::Tensor out = get_dst_tensor();
    auto in = t.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    const int64_t n = t.size(0);
    for (int64_t i = 0; i < n / 2; i++) o[i] = in[i] * 10.0f;
    o[n / 2] = in[n];  // one past the end
    return out;
}
