// Each documented tensor operation, called the vendor's way (torch::
// free functions, the allocating and the _out forms).
#include <stdint.h>
#include <torch/torch.h>

// x in (-1, 1): abs ceil floor sin cos tan, log log2 log10 of 1 + |x|, exp.
torch::Tensor unary_ops(const torch::Tensor& x) {
    torch::Tensor acc = torch::abs(x);
    acc = torch::add(acc, torch::ceil(x));
    acc = torch::add(acc, torch::floor(x));
    acc = torch::add(acc, torch::sin(x));
    acc = torch::add(acc, torch::cos(x));
    acc = torch::add(acc, torch::tan(x));
    torch::Tensor pos = torch::add(torch::abs(x), torch::ones(x.sizes(), torch::kFloat));
    acc = torch::add(acc, torch::log(pos));
    acc = torch::add(acc, torch::log2(pos));
    acc = torch::add(acc, torch::log10(pos));
    acc = torch::add(acc, torch::exp(x));
    return acc;
}

// b > 0: add/sub with alpha, mul, div, the three pow forms, clamp.
torch::Tensor binary_ops(const torch::Tensor& a, const torch::Tensor& b) {
    torch::Tensor acc = torch::add(a, b, 0.5);
    acc = torch::add(acc, torch::sub(a, b, 2));
    acc = torch::add(acc, torch::mul(a, b));
    acc = torch::add(acc, torch::div(a, b));
    acc = torch::add(acc, torch::pow(b, 2.0));
    acc = torch::add(acc, torch::pow(b, a));
    acc = torch::add(acc, torch::pow(2.0, a));
    acc = torch::add(acc, torch::clamp(a, -0.25, 0.25));
    return acc;
}

// The _out forms write into tensors the kernel made.
torch::Tensor out_ops(const torch::Tensor& x, const torch::Tensor& y) {
    torch::Tensor tmp = torch::empty(x.sizes(), torch::kFloat);
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    torch::exp_out(tmp, x);              // e^x
    torch::mul_out(out, tmp, y);         // e^x * y
    torch::sub_out(tmp, out, x, 0.5);    // e^x * y - x / 2
    torch::abs_out(out, tmp);
    torch::clamp_out(tmp, out, 0.0, 2.0);
    torch::sin_out(out, tmp);
    return out;
}

// Integer tensors: (a & b) | ~a.
torch::Tensor bitwise_ops(const torch::Tensor& a, const torch::Tensor& b) {
    return torch::bitwise_or(torch::bitwise_and(a, b), torch::bitwise_not(a));
}

// The factories: eye + full(2.5) + ones + empty().fill_(0.25) + zeros + like.
torch::Tensor factory_ops(const torch::Tensor& like) {
    const int64_t n = like.size(0);
    torch::Tensor acc = torch::eye(n, torch::kFloat);
    acc = torch::add(acc, torch::full({n, n}, 2.5, torch::kFloat));
    acc = torch::add(acc, torch::ones({n, n}, torch::TensorOptions().dtype(torch::kFloat)));
    torch::Tensor quarter = torch::empty({n, n}, torch::kFloat);
    quarter.fill_(0.25);
    acc = torch::add(acc, quarter);
    acc = torch::add(acc, torch::zeros(like.sizes(), torch::kFloat));
    return torch::add(acc, like);
}
