// The vendor's public relu kernel, in its two forms, written as a vendor
// kernel is: <torch/torch.h>, torch::Tensor, torch::zeros over a braced
// list, get_dst_tensor()/get_cpu_id()/get_cpu_count() from
// <neuron/neuron-utils.hpp>, torch::neuron::tcm_malloc. Copy this file to
// start a kernel.
//
//   relu      per-element accessor: simple, slow (one translate per
//             element access); single core.
//   relu_tcm  TCM staging + every core: each core takes its slice by
//             get_cpu_id()/get_cpu_count(), stages it through tcm_malloc
//             memory with the TCM accessor and writes the output in place
//             (get_dst_tensor). In multicore mode only TCM access and the
//             claimed destination are safe.
//
// NEURON_CUSTOM_OPS at the end generates the wrappers and the op table
// (the vendor's build generates them from a NEURON_LIBRARY shape file).
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

torch::Tensor relu(const torch::Tensor& t_in) {
    const int64_t num_elem = t_in.numel();
    torch::Tensor t_out = torch::zeros({num_elem}, torch::kFloat);
    auto in = t_in.accessor<float, 1>();  // const tensor: read-only
    auto out = t_out.accessor<float, 1>();
    for (int64_t i = 0; i < num_elem; i++) {
        out[i] = in[i] > 0.0 ? in[i] : 0.0f;
    }
    return t_out;  // copied into the output by the wrapper, then freed
}

torch::Tensor relu_tcm(const torch::Tensor& t_in) {
    const int64_t num_elem = t_in.numel();
    torch::Tensor t_out = get_dst_tensor();
    const int64_t cpu_id = get_cpu_id();
    const int64_t cpu_count = get_cpu_count();
    // Even slices; the last core also takes the remainder. (The vendor
    // sample offsets the last core by its own, larger, partition; the
    // start must use the common one.)
    const int64_t base = num_elem / cpu_count;
    const int64_t start = base * cpu_id;
    const int64_t partition = cpu_id == cpu_count - 1 ? num_elem - base * (cpu_count - 1) : base;

    static constexpr int64_t buffer_size = 1024;
    float* tcm_buffer = static_cast<float*>(torch::neuron::tcm_malloc(sizeof(float) * buffer_size));
    if (tcm_buffer != nullptr) {
        auto in_tcm = t_in.tcm_accessor();
        auto out_tcm = t_out.tcm_accessor();
        for (int64_t i = 0; i < partition; i += buffer_size) {
            const int64_t remaining = partition - i;
            const int64_t copy_size = remaining > buffer_size ? buffer_size : remaining;
            in_tcm.tensor_to_tcm<float>(tcm_buffer, start + i, copy_size);
            for (int64_t j = 0; j < copy_size; j++) {
                tcm_buffer[j] = tcm_buffer[j] > 0.0f ? tcm_buffer[j] : 0.0f;
            }
            out_tcm.tcm_to_tensor<float>(tcm_buffer, start + i, copy_size);
        }
    }
    torch::neuron::tcm_free(tcm_buffer);
    return t_out;
}

NEURON_CUSTOM_OPS(relu, relu_tcm)
