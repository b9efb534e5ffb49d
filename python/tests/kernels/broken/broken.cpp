// Does not compile: the build must fail with the compiler's diagnostics.
#include <torch/torch.h>

torch::Tensor broken(const torch::Tensor& t) {
    return t.this_member_does_not_exist();
}
