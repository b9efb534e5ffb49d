// Prints from every core it runs on; core 0 copies the input in place
// into get_dst_tensor(), through TCM (in multicore mode the TCM accessor is
// the one that is correct on the device). Built multicore, it runs whole on
// 1 core or on 8: the printf lines must come back in the report, one set
// per core.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

torch::Tensor say(const torch::Tensor& t, int64_t tag) {
    torch::Tensor out = get_dst_tensor();
    const int64_t chunk = 256;
    float* buf = static_cast<float*>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    auto in = t.tcm_accessor();
    in.tensor_to_tcm<float>(buf, 0, 1);
    const float first = buf[0];
    if (get_cpu_id() == 0) {
        auto o = out.tcm_accessor();
        for (int64_t i = 0; i < t.numel(); i += chunk) {
            const int64_t n = t.numel() - i < chunk ? t.numel() - i : chunk;
            in.tensor_to_tcm<float>(buf, i, n);
            o.tcm_to_tensor<float>(buf, i, n);
        }
    }
    torch::neuron::tcm_free(buf);
    printf("core %u says tag %lld, first %.2f\n", get_cpu_id(), static_cast<long long>(tag), first);
    return out;
}
