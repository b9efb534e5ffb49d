// A realloc'd array keeps what was written before it grew; the bytes it
// grew by hold whatever was there until written.
#include <stdint.h>
#include <stdlib.h>
#include <torch/torch.h>

// Copies the input into a malloc'd array of half its length, grows the
// array with realloc and copies the rest; `read_early` reads the grown
// part before writing it.
static torch::Tensor grown_copy(const torch::Tensor& t, bool read_early) {
    const int64_t n = t.size(0), half = n / 2;
    auto in = t.accessor<float, 1>();
    float* v = (float*)malloc(sizeof(float) * half);
    for (int64_t i = 0; i < half; i++) v[i] = in[i];
    v = (float*)realloc(v, sizeof(float) * n);
    float carry = read_early ? v[half] : 0.0f;
    for (int64_t i = half; i < n; i++) v[i] = in[i] + carry * 0.0f;
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < n; i++) o[i] = v[i];
    free(v);
    return out;
}

torch::Tensor grown_read_early(const torch::Tensor& t) { return grown_copy(t, true); }
torch::Tensor grown_written_first(const torch::Tensor& t) { return grown_copy(t, false); }
