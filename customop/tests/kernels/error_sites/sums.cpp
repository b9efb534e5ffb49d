// Kernels as a new user writes them, one off by one: each error the
// library records names the tensor, the index, the size and the line.
#include <torch/torch.h>

// Prefix sums, reading one element past the input (`<=`).
torch::Tensor prefix_past(const torch::Tensor& x) {
    torch::Tensor out = get_dst_tensor();
    auto in = x.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    const int64_t n = x.size(0);
    float s = 0.0f;
    for (int64_t i = 0; i <= n; i++) {
        s += in[i];  // PAST: the read one past the end
        if (i < n) o[i] = s;
    }
    return out;
}

// Its correct twin.
torch::Tensor prefix(const torch::Tensor& x) {
    torch::Tensor out = get_dst_tensor();
    auto in = x.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    const int64_t n = x.size(0);
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        s += in[i];  // BREAK: a debugger stops here
        o[i] = s;
    }
    return out;
}

// Rows of a matrix summed, the column running one past its end.
torch::Tensor row_sums_past(const torch::Tensor& x) {
    torch::Tensor out = get_dst_tensor();
    auto in = x.accessor<float, 2>();
    auto o = out.accessor<float, 1>();
    for (int64_t r = 0; r < x.size(0); r++) {
        float s = 0.0f;
        for (int64_t c = 0; c <= x.size(1); c++) s += in[r][c];  // ROW PAST
        o[r] = s;
    }
    return out;
}

// The input read as ints: the wrong element type for a float tensor.
torch::Tensor wrong_type(const torch::Tensor& x) {
    torch::Tensor out = get_dst_tensor();
    auto in = x.accessor<int32_t, 1>();  // WRONG TYPE
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.size(0); i++) o[i] = static_cast<float>(in[i]);
    return out;
}

// A read stream asked for one element more than the input holds.
torch::Tensor stream_past(const torch::Tensor& x) {
    torch::Tensor out = get_dst_tensor();
    auto in = x.read_stream_accessor<float>();
    auto o = out.write_stream_accessor<float>();
    const int64_t n = x.numel();
    float last = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        last = in.read();
        o.write(last);
    }
    last += in.read();  // STREAM PAST
    (void)last;
    return out;
}

// A scratch tensor far larger than the core's HBM heap.
torch::Tensor huge_scratch(const torch::Tensor& x) {
    torch::Tensor out = get_dst_tensor();
    torch::Tensor scratch = torch::empty({INT64_C(1) << 32}, torch::kFloat);  // HUGE
    (void)scratch;
    auto in = x.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.size(0); i++) o[i] = in[i];
    return out;
}

// Computes in int32 and returns that, where the output is float32.
torch::Tensor counts_as_int(const torch::Tensor& x) {
    torch::Tensor r = torch::zeros({x.size(0)}, torch::kInt);
    auto in = x.accessor<float, 1>();
    auto o = r.accessor<int32_t, 1>();
    for (int64_t i = 0; i < x.size(0); i++) o[i] = in[i] > 2.0f ? 1 : 0;
    return r;
}


// Adds a bias of the wrong length (there is no broadcasting).
torch::Tensor add_bias(const torch::Tensor& x) {
    torch::Tensor bias = torch::ones({3}, torch::kFloat);
    return torch::add(x, bias);  // SHAPES
}

// A vector read as a matrix: the accessor's rank is not the tensor's.
torch::Tensor wrong_rank(const torch::Tensor& x) {
    torch::Tensor out = get_dst_tensor();
    auto in = x.accessor<float, 2>();  // WRONG RANK
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.size(0); i++) o[i] = in[0][i];
    return out;
}
