// A kernel that uses the C++ standard library inside the kernel, as the
// vendor's device library (libc++) allows: <vector>, <algorithm>,
// <array>, <numeric>, <limits>, <cmath>, <utility>, <type_traits>. Written
// in C++14 (the vendor's level), so it builds with --cflags -std=c++14 too.
// The arithmetic is the exactly rounded part (sorting, float sums in a
// fixed order, sqrt, floor, fmod, ...), so the simulator (the host's
// library) and the device (libc++) agree bit for bit.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <new>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>
#include <torch/torch.h>

// The input as a std::vector, grown with push_back (reallocations through
// operator new/delete on the core's libc heap).
static std::vector<float> to_vector(const torch::Tensor& x) {
    auto in = x.accessor<float, 1>();
    std::vector<float> v;
    for (int64_t i = 0; i < x.numel(); i++) v.push_back(in[i]);
    return v;
}

static void store(torch::Tensor& out, const std::vector<float>& v) {
    auto o = out.accessor<float, 1>();
    for (size_t i = 0; i < v.size(); i++) o[static_cast<int64_t>(i)] = v[i];
}

// <type_traits>: only arithmetic types convert, checked at compile time.
template <class T, class = typename std::enable_if<std::is_arithmetic<T>::value>::type>
static float as_float(T v) {
    static_assert(std::is_same<typename std::decay<const T&>::type, T>::value, "decay");
    return static_cast<float>(v);
}

// <vector> + <algorithm>: std::sort (libc++'s float instantiation lives in
// its algorithm.cpp, compiled into the build), then a stable partition of
// the negatives after the non-negatives and a reverse of the first half.
torch::Tensor sort_vector(const torch::Tensor& x) {
    std::vector<float> v = to_vector(x);
    std::sort(v.begin(), v.end());
    std::vector<float> w(v);
    std::stable_partition(w.begin(), w.end(), [](float f) { return f >= 0.0f; });
    std::reverse(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(w.size() / 2));
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    for (size_t i = 0; i < v.size(); i++) v[i] = v[i] * 2.0f + w[i];
    store(out, v);
    return out;
}

// <numeric> + <array>: prefix sums minus the mean, plus iota/inner_product.
torch::Tensor numeric_ops(const torch::Tensor& x) {
    const std::vector<float> v = to_vector(x);
    std::vector<float> prefix(v.size());
    std::partial_sum(v.begin(), v.end(), prefix.begin());
    const float mean = std::accumulate(v.begin(), v.end(), 0.0f) / static_cast<float>(v.size());
    std::array<int, 4> idx;
    std::iota(idx.begin(), idx.end(), 0);
    const int ip = std::inner_product(idx.begin(), idx.end(), idx.begin(), 0);  // 0+1+4+9
    for (float& p : prefix) p = p - mean + as_float(ip);
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    store(out, prefix);
    return out;
}

// <limits> + <utility> + <algorithm>: the largest element and its index as
// a std::pair, std::swap, std::min/max, and three limits.
torch::Tensor limits_utility(const torch::Tensor& x) {
    std::vector<float> v = to_vector(x);
    std::pair<float, int> best = std::make_pair(std::numeric_limits<float>::lowest(), -1);
    for (size_t i = 0; i < v.size(); i++) {
        if (v[i] > best.first) best = std::make_pair(v[i], static_cast<int>(i));
    }
    float lo = std::numeric_limits<float>::max();
    for (float f : v) lo = std::min(lo, f);
    std::swap(v.front(), v.back());
    for (float& f : v) f = std::max(f - best.first, -1.0f) + as_float(best.second) + lo;
    v[0] = std::numeric_limits<float>::epsilon();
    v[1] = as_float(std::numeric_limits<int16_t>::max());
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    store(out, v);
    return out;
}

// <cmath>: the std:: float overloads.
torch::Tensor cmath_ops(const torch::Tensor& x) {
    auto in = x.accessor<float, 1>();
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++) {
        const float v = in[i];
        o[i] = std::sqrt(std::fabs(v)) + std::floor(v) + std::ceil(v) + std::trunc(v) + std::round(v) + std::fmax(v, 0.0f) +
               std::fmod(v, 1.5f) + std::ldexp(v, 3) + std::copysign(1.0f, v) + (std::isnan(v) ? 100.0f : 0.0f) + std::abs(v);
    }
    return out;
}

// More of <cmath>: frexp, modf, nearbyint, lround, scalbn, ilogb, logb,
// remainder, nextafter, all exact, so the same bits on both sides.
torch::Tensor cmath_more(const torch::Tensor& x) {
    auto in = x.accessor<float, 1>();
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++) {
        const float v = in[i];
        if (v == 0.0f) {  // ilogb(0) is FP_ILOGB0, logb(0) -inf: left out
            o[i] = 0.0f;
            continue;
        }
        int e = 0;
        const float m = std::frexp(v, &e);
        float ip = 0.0f;
        const float fr = std::modf(v, &ip);
        o[i] = m + e + fr + ip * 2.0f + std::nearbyint(v) + std::lround(v) + std::scalbn(v, -2) + std::ilogb(v) + std::logb(v) +
               std::remainder(v, 2.0f) + (std::nextafter(v, 100.0f) - v) * 1048576.0f;
    }
    return out;
}

// A function-local static scratch vector (built on first use, its
// destructor registered with __cxa_atexit and never run): x + 0.5.
torch::Tensor static_scratch(const torch::Tensor& x) {
    static std::vector<float> scratch;
    scratch.assign(static_cast<size_t>(x.numel()), 0.5f);
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto in = x.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++) o[i] = in[i] + scratch[static_cast<size_t>(i)];
    return out;
}

// A std::vector of `count` floats (operator new on the core's libc heap):
// x + the sum of its `count` ones. Past the 1 MiB heap, operator new stops
// the core with the abort report (no std::bad_alloc without exceptions).
torch::Tensor vector_fill(const torch::Tensor& x, int64_t count) {
    std::vector<float> ones(static_cast<size_t>(count), 1.0f);
    const float sum = std::accumulate(ones.begin(), ones.end(), 0.0f);
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto in = x.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++) o[i] = in[i] + sum;
    return out;
}

// new (std::nothrow) of `count` floats: x + 1 when it got memory, x - 1
// when the heap had none (null, no abort; like malloc's, the failure is
// recorded as the core's error, which the kernel acknowledges as handled).
torch::Tensor nothrow_probe(const torch::Tensor& x, int64_t count) {
    float* p = new (std::nothrow) float[static_cast<size_t>(count)];
    const float got = p != nullptr ? 1.0f : -1.0f;
    if (p == nullptr) neuron_clear_error();
    delete[] p;
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto in = x.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++) o[i] = in[i] + got;
    return out;
}

// std::vector::at past the end: libc++ "throws" out_of_range, which
// without exceptions is the abort report with libc++'s message.
torch::Tensor vector_at(const torch::Tensor& x, int64_t index) {
    const std::vector<float> v = to_vector(x);
    const float picked = v.at(static_cast<size_t>(index));
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++) o[i] = picked;
    return out;
}
