// Reads the input through a stream accessor (buffered) and an element
// accessor (unbuffered) at once. Under the default COHERENT policy the
// second accessor is refused (its reads give 0); INCOHERENT_QUIET allows
// the mix silently, INCOHERENT_VERBOSE with a warning.
#include <torch/torch.h>

static torch::Tensor twice(const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    auto reader = t_in.read_stream_accessor<float>();
    auto in_acc = t_in.accessor<float, 1>();
    auto out_acc = t_out.accessor<float, 1>();
    for (int64_t i = 0; i < t_in.size(0); i++) {
        out_acc[i] = reader.read() + in_acc[i];
    }
    return t_out;
}

torch::Tensor mixed_quiet(const torch::Tensor& t_in) {
    t_in.set_accessor_coherence_policy(torch::CoherencyEnforcer::Policy::INCOHERENT_QUIET);
    if (t_in.get_accessor_coherence_policy() != torch::CoherencyEnforcer::Policy::INCOHERENT_QUIET) {
        return torch::full(t_in.sizes(), -1.0, torch::kFloat);
    }
    return twice(t_in);
}

torch::Tensor mixed_verbose(const torch::Tensor& t_in) {
    t_in.set_accessor_coherence_policy(torch::CoherencyEnforcer::Policy::INCOHERENT_VERBOSE);
    return twice(t_in);
}

torch::Tensor mixed_coherent(const torch::Tensor& t_in) {
    t_in.set_accessor_coherence_policy(torch::CoherencyEnforcer::Policy::COHERENT);
    return twice(t_in);
}
