// Accessor indices out of range, on the device's inline index arithmetic
// as on the simulator: each is refused with the library's error code
// (83 index out of range; an index into a refused row is then 33, null
// storage, as the peel of address 0 always reported), reads give 0,
// writes are dropped; the in-range corners still read and write.
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

// The last error, handled (the run's verdict counts unhandled ones).
static int taken() {
    const int e = neuron_last_error();
    neuron_clear_error();
    return e;
}

torch::Tensor bounds(const torch::Tensor& x) {
    torch::Tensor out = get_dst_tensor();  // 8 floats
    auto in = x.accessor<float, 2>();
    auto o = out.accessor<float, 1>();
    const int64_t r = x.size(0), c = x.size(1);
    float v[8];
    int e[8];
    v[0] = in[r - 1][c - 1];
    e[0] = taken();
    v[1] = in[r][0];
    e[1] = taken();
    v[2] = in[0][c];
    e[2] = taken();
    v[3] = in[-1][0];
    e[3] = taken();
    v[4] = in[0][-1];
    e[4] = taken();
    v[5] = in[static_cast<int64_t>(1) << 32][0];
    e[5] = taken();
    v[6] = in[0][0];
    e[6] = taken();
    o[8] = 5.0f;
    e[7] = taken();
    v[7] = static_cast<float>(e[7]);
    for (int64_t k = 0; k < 8; k++) o[k] = v[k];
    printf("bounds errors %d %d %d %d %d %d %d %d\n", e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]);
    return out;
}
