// A heap buffer overflow into a freed neighbour: the store lands on the
// heap's own bookkeeping, which lives in free heap memory on the device
// as here. The next malloc must find it, not hand out wild memory.
#include <stdint.h>
#include <stdlib.h>
#include <torch/torch.h>

// Writes 16 elements past the end of a 64-element block whose neighbour
// was just freed. Output: 1 where the later malloc gave null.
torch::Tensor overflow_into_freed(const torch::Tensor& t) {
    torch::Tensor out = torch::zeros({1}, torch::kFloat);
    int64_t* a = static_cast<int64_t*>(malloc(64 * sizeof(int64_t)));
    int64_t* b = static_cast<int64_t*>(malloc(64 * sizeof(int64_t)));
    free(b);
    for (int i = 0; i < 80; i++) a[i] = INT64_MAX - i;  // 64 are a's
    void* c = malloc(256);
    out.accessor<float, 1>()[0] = c == nullptr ? 1.0f : 0.0f;
    free(c);
    free(a);
    return out;
}

// The twin: the same blocks, every store inside a.
torch::Tensor stays_in_bounds(const torch::Tensor& t) {
    torch::Tensor out = torch::zeros({1}, torch::kFloat);
    int64_t* a = static_cast<int64_t*>(malloc(64 * sizeof(int64_t)));
    int64_t* b = static_cast<int64_t*>(malloc(64 * sizeof(int64_t)));
    free(b);
    for (int i = 0; i < 64; i++) a[i] = INT64_MAX - i;
    void* c = malloc(256);
    out.accessor<float, 1>()[0] = c == nullptr ? 1.0f : 0.0f;
    free(c);
    free(a);
    return out;
}
