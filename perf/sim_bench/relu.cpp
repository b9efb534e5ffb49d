// The kernels of `cargo xtask sim-bench` (issue 28): the vendor's two
// ReLUs over a float tensor, written as vendor users write them. The
// same source builds single-core and `--multicore` (CUSTOMOP_MULTICORE):
// in a multicore build each of the cores takes an even slice of the
// elements, the last one also the remainder.
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

// Per element through the accessors (as in the vendor's documentation:
// double literals, the input read twice when positive).
torch::Tensor relu_acc(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    const int64_t num_elem = t_in.numel();
    auto t_in_acc = t_in.accessor<float, 1>();
    auto t_out_acc = t_out.accessor<float, 1>();
    for (int64_t i = 0; i < num_elem; i++) {
        t_out_acc[i] = t_in_acc[i] > 0.0 ? t_in_acc[i] : 0.0;
    }
    return t_out;
}

// Through TCM, 1024-element chunks staged by the TCM accessors.
torch::Tensor relu_tcm(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    const int64_t num_elem = t_in.numel();
#if defined(CUSTOMOP_MULTICORE)
    const int64_t cpus = get_cpu_count();
    const int64_t cpu = get_cpu_id();
    const int64_t share = num_elem / cpus;
    const int64_t begin = share * cpu;
    const int64_t end = cpu == cpus - 1 ? num_elem : begin + share;
#else
    const int64_t begin = 0;
    const int64_t end = num_elem;
#endif
    static constexpr int64_t buffer_size = 1024;
    float* tcm_buffer = static_cast<float*>(torch::neuron::tcm_malloc(sizeof(float) * buffer_size));
    if (tcm_buffer == nullptr) {
        return t_out;
    }
    auto t_in_tcm_acc = t_in.tcm_accessor();
    auto t_out_tcm_acc = t_out.tcm_accessor();
    for (int64_t i = begin; i < end; i += buffer_size) {
        const int64_t remaining_elem = end - i;
        const int64_t copy_size = remaining_elem > buffer_size ? buffer_size : remaining_elem;
        t_in_tcm_acc.tensor_to_tcm<float>(tcm_buffer, i, copy_size);
        for (int64_t j = 0; j < copy_size; j++) {
            tcm_buffer[j] = tcm_buffer[j] > 0.0f ? tcm_buffer[j] : 0.0f;
        }
        t_out_tcm_acc.tcm_to_tensor<float>(tcm_buffer, i, copy_size);
    }
    torch::neuron::tcm_free(tcm_buffer);
    return t_out;
}
