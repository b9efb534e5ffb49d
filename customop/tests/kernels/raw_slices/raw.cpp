// Each of the cores writes its slice of the output through a raw pointer
// (no accessor sees the stores): the simulator can only tell who wrote what
// by running each core again alone, after which the output it reports is
// the one the cores computed together.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

torch::Tensor double_raw(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    const int64_t n = t_in.numel();
    const int64_t cpus = get_cpu_count();
    const int64_t cpu = get_cpu_id();
    const int64_t share = n / cpus;
    const int64_t begin = share * cpu;
    const int64_t end = cpu == cpus - 1 ? n : begin + share;
    Q7PtrType qi = t_in.q7_data_ptr();
    Q7PtrType qo = t_out.q7_data_ptr();
    for (int64_t i = begin; i < end; i++) {
        const float* src = static_cast<const float*>(neuron_translate(qi.ctx, qi.addr + sizeof(float) * i));
        float* dst = static_cast<float*>(neuron_translate(qo.ctx, qo.addr + sizeof(float) * i));
        if (src && dst) *dst = 2.0f * *src;
    }
    return t_out;
}
