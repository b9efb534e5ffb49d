// A kernel that stores through a pointer it computed wrong: the first
// element's value (1.0f's bits taken as an offset from null), as a new
// user's pointer arithmetic goes astray.
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor store_wild(const torch::Tensor& x) {
    torch::Tensor out = get_dst_tensor();
    auto in = x.accessor<float, 1>();
    float* p = reinterpret_cast<float*>(static_cast<uintptr_t>(in[0]) * 28);
    *p = in[0];  // WILD STORE
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.size(0); i++) o[i] = in[i];
    return out;
}
