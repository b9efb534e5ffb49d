// The vendor's documented pattern: tcm_malloc returns null when the pool
// cannot hold the request, and the kernel handles it (here by falling
// back to the per-element accessor). The run passes; the failed request
// stays in the report as a handled error.
#include <torch/torch.h>

torch::Tensor negate_or_fall_back(const torch::Tensor& x) {
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    const int64_t n = x.numel();
    float* buf = static_cast<float*>(torch::neuron::tcm_malloc(64 << 10));  // past the 16 KiB pool
    if (buf == nullptr) {
        printf("tcm_malloc: null, falling back\n");
        auto a = x.accessor<float, 1>();
        auto o = out.accessor<float, 1>();
        for (int64_t i = 0; i < n; i++) o[i] = -a[i];
        return out;
    }
    x.tcm_accessor().tensor_to_tcm<float>(buf, 0, n);
    for (int64_t i = 0; i < n; i++) buf[i] = -buf[i];
    out.tcm_accessor().tcm_to_tensor<float>(buf, 0, n);
    torch::neuron::tcm_free(buf);
    return out;
}
