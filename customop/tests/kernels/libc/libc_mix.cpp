// A kernel that starts the way the vendor's samples do, with the C library
// headers (and their C++ forms): malloc/calloc/free, memcpy/memset, the
// math library in float and double, std:: overloads, snprintf, printf
// with no argument, assert, abs. The math is the exactly rounded part
// (sqrt, floor, fmax, ldexp, fmod, trunc, pow of small integers), so the
// simulator and the device agree bit for bit.
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <assert.h>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <torch/torch.h>

torch::Tensor libc_mix(const torch::Tensor& x) {
    const int64_t n = x.numel();
    assert(n > 0 && x.dim() == 1);
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    float* a = static_cast<float*>(malloc(n * sizeof(float)));
    float* b = static_cast<float*>(calloc(n, sizeof(float)));
    if (a == nullptr || b == nullptr) return out;
    auto in = x.accessor<float, 1>();
    for (int64_t i = 0; i < n; i++) a[i] = in[i];
    memset(b, 0xff, n * sizeof(float));
    memcpy(b, a, n * sizeof(float));
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < n; i++) {
        const float v = b[i];
        o[i] = sqrtf(fabsf(v)) + floorf(v) + fmaxf(v, 0.0f) + ldexpf(v, 2) + fmodf(v, 1.5f) + std::trunc(v) +
               static_cast<float>(std::abs(-3)) + static_cast<float>(pow(2.0, 3.0)) + expf(0.0f) + static_cast<float>(std::sqrt(4.0));
    }
    char line[32];
    const int len = snprintf(line, sizeof line, "n=%d", static_cast<int>(n));
    printf("%s len=%d cmp=%d\n", line, len, memcmp(a, b, n * sizeof(float)));
    free(a);
    free(b);
    return out;
}

// assert(false) on purpose: the run stops with the abort report.
torch::Tensor failing_assert(const torch::Tensor& x) {
    assert(x.numel() < 0);
    return x;
}
