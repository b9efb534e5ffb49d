// A row softmax as a kernel author writes it: each row of the [rows, cols]
// float32 input copied into TCM, its maximum found, every element replaced
// by exp(x - max) while the row's sum is taken, then scaled by 1/sum and
// copied back.
#include <math.h>
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor softmax_rows(const torch::Tensor& t_in) {
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    const int64_t rows = t_in.sizes()[0];
    const int64_t cols = t_in.sizes()[1];
    float* row = (float*)torch::neuron::tcm_malloc(sizeof(float) * cols);
    auto in_tcm = t_in.tcm_accessor();
    auto out_tcm = t_out.tcm_accessor();
    for (int64_t r = 0; r < rows; r++) {
        in_tcm.tensor_to_tcm<float>(row, r * cols, cols);
        float top = row[0];
        for (int64_t i = 1; i < cols; i++) {
            top = row[i] > top ? row[i] : top; // max loop
        }
        float sum = 0.0f;
        for (int64_t i = 0; i < cols; i++) {
            row[i] = expf(row[i] - top); // exp loop
            sum += row[i]; // sum
        }
        const float scale = 1.0f / sum;
        for (int64_t i = 0; i < cols; i++) {
            row[i] *= scale; // scale loop
        }
        out_tcm.tcm_to_tensor<float>(row, r * cols, cols);
    }
    torch::neuron::tcm_free(row);
    return t_out;
}
