// A vendor-style custom op, as a kernel author has it: the compute source
// of `custom_op.load(name, compute_srcs=["relu.cpp"], shape_srcs=["shape.cpp"],
// multicore=True)`. README's main job builds it unchanged for the emulated
// cluster and for the host simulator, runs it on 8 cores and compares the
// two outputs bit for bit.
//
// Every core takes an even slice of the flattened tensor (the last one
// also the remainder), stages it through TCM and writes the output in
// place: in multicore mode only TCM access and get_dst_tensor() are safe.
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

torch::Tensor relu_forward(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    const int64_t n = t_in.numel();
    const int64_t cpus = get_cpu_count();
    const int64_t cpu = get_cpu_id();
    const int64_t share = n / cpus;
    const int64_t begin = share * cpu;
    const int64_t end = cpu == cpus - 1 ? n : begin + share;

    constexpr int64_t chunk = 512;
    float* buf = static_cast<float*>(torch::neuron::tcm_malloc(sizeof(float) * chunk));
    if (buf == nullptr) {
        printf("core %d: no TCM for the staging buffer\n", static_cast<int>(cpu));
        return t_out;
    }
    auto in = t_in.tcm_accessor();
    auto out = t_out.tcm_accessor();
    for (int64_t i = begin; i < end; i += chunk) {
        const int64_t len = end - i < chunk ? end - i : chunk;
        in.tensor_to_tcm<float>(buf, i, len);
        for (int64_t j = 0; j < len; j++) {
            buf[j] = buf[j] > 0.0f ? buf[j] : 0.0f;
        }
        out.tcm_to_tensor<float>(buf, i, len);
    }
    torch::neuron::tcm_free(buf);
    printf("core %d: relu of elements [%lld, %lld)\n", static_cast<int>(cpu), static_cast<long long>(begin), static_cast<long long>(end));
    return t_out;
}
