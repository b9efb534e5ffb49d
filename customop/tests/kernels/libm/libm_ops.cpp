// Kernels that call the C math library, written the way kernel authors
// write them: a row softmax staged through TCM (a max loop, expf, a sum,
// a scale loop), on one core or with the rows shared out over all cores,
// and elementwise functions through an accessor. expf, logf, tanhf,
// powf, sinf/cosf round differently in glibc and in musl's libm; the
// simulator and the device both compute them with the device's (musl's),
// so `customop run --on both` finds the same bits.
#include <math.h>
#include <stdint.h>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

// Rows [begin, end) of the [rows, cols] tensor x softmaxed into out, one
// row at a time through a TCM buffer.
static void softmax_rows(const torch::Tensor& x, torch::Tensor& out, int64_t begin, int64_t end) {
    const int64_t cols = x.size(1);
    float* buf = (float*)torch::neuron::tcm_malloc(sizeof(float) * cols);
    auto in_tcm = x.tcm_accessor();
    auto out_tcm = out.tcm_accessor();
    for (int64_t r = begin; r < end; r++) {
        in_tcm.tensor_to_tcm<float>(buf, r * cols, cols);
        float m = buf[0];
        for (int64_t j = 1; j < cols; j++) {
            m = buf[j] > m ? buf[j] : m;
        }
        float sum = 0.0f;
        for (int64_t j = 0; j < cols; j++) {
            buf[j] = expf(buf[j] - m);
            sum += buf[j];
        }
        const float inv = 1.0f / sum;
        for (int64_t j = 0; j < cols; j++) {
            buf[j] = buf[j] * inv;
        }
        out_tcm.tcm_to_tensor<float>(buf, r * cols, cols);
    }
    torch::neuron::tcm_free(buf);
}

torch::Tensor row_softmax(const torch::Tensor& x) {
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    softmax_rows(x, out, 0, x.size(0));
    return out;
}

// Each core takes its share of the rows (the last share is shorter when
// the rows do not divide by the core count) and writes the output in place.
torch::Tensor row_softmax_multicore(const torch::Tensor& x) {
    torch::Tensor out = get_dst_tensor();
    const int64_t rows = x.size(0);
    const int64_t cpu_count = get_cpu_count();
    const int64_t per_core = (rows + cpu_count - 1) / cpu_count;
    const int64_t begin = per_core * get_cpu_id();
    const int64_t end = begin + per_core < rows ? begin + per_core : rows;
    if (begin < end) softmax_rows(x, out, begin, end);
    return out;
}

// One line of <math.h> per element: logf, tanhf, sqrtf, powf, and a sinf
// and a cosf of one argument (which g++ makes one sincosf call).
torch::Tensor math_mix(const torch::Tensor& x) {
    auto in = x.accessor<float, 1>();
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++) {
        const float v = in[i];
        const float a = fabsf(v);
        o[i] = logf(a + 1.0f) + tanhf(v) + sqrtf(a) + powf(a + 0.5f, 1.7f) + sinf(v) * cosf(v);
    }
    return out;
}

// expf of each element.
torch::Tensor exp_each(const torch::Tensor& x) {
    auto in = x.accessor<float, 1>();
    torch::Tensor out = torch::empty(x.sizes(), torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.numel(); i++) o[i] = expf(in[i]);
    return out;
}
