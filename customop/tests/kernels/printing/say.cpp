// A kernel that prints with every conversion the device formatter knows,
// then returns a copy of its input: the device run's printf ring must show the same
// text as the simulator's.
#include <torch/torch.h>

torch::Tensor say(const torch::Tensor& t_in, int64_t tag) {
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    auto in = t_in.accessor<float, 1>();
    auto out = t_out.accessor<float, 1>();
    printf("core %d of %d: tag=%lld n=%zu\n", (int)get_cpu_id(), (int)get_cpu_count(), (long long)tag, (size_t)t_in.numel());
    printf("|%5d|%-5i|%05u|%+d|% d|%ld|\n", 42, -7, 9u, 3, 4, -123456789L);
    printf("|%x|%X|%#x|%08X|%c|%s|%.3s|\n", 0xbeefu, 0xbeefu, 255u, 0xabcu, 'Q', "text", "abcdef");
    printf("|%f|%.2f|%e|%g|%10.4f|%-8.1e|\n", 3.14159, -2.5, 12345.678, 0.0001, 2.0 / 3.0, 6.02e23);
    printf("wide:%0190d|\n", 5);  // longer than the board console's line buffer
    // Every core returns its own copy (the same bytes): the output does
    // not depend on which core's return lands last.
    for (int64_t i = 0; i < t_in.size(0); i++) out[i] = in[i];
    return t_out;
}
