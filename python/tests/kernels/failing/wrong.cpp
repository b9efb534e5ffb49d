// Two ways to fail at run time: the kernel returns a float tensor where
// its shape function promised int32 (the runtime refuses the output), and
// a shape function that returns no tensor at all.
#include <torch/torch.h>

torch::Tensor wrong_dtype(const torch::Tensor& t) {
    return torch::zeros(t.sizes(), torch::kFloat);
}

torch::Tensor no_shape(const torch::Tensor& t) {
    return torch::zeros(t.sizes(), torch::kFloat);
}
