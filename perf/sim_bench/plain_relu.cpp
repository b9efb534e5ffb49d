// The host floor of `cargo xtask sim-bench`'s kernel figure: the element
// accessor kernel's ReLU (the same expression, double literals) as a
// plain loop over an array. Prints ns per element, the fastest of five
// passes over arrays already touched (as the simulator's output is).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__attribute__((noinline)) static void relu(const float* in, float* out, long n) {
    for (long i = 0; i < n; i++) {
        out[i] = in[i] > 0.0 ? in[i] : 0.0;
    }
}

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 1L << 24;
    std::vector<float> in(n), out(n);
    unsigned s = 1;
    for (long i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        in[i] = static_cast<float>(static_cast<int>(s >> 8) - (1 << 23));
    }
    double best = 1e30;
    for (int pass = 0; pass < 5; pass++) {
        const auto t = std::chrono::steady_clock::now();
        relu(in.data(), out.data(), n);
        const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t).count();
        best = ns < best ? ns : best;
    }
    volatile float sink = out[n / 2];
    (void)sink;
    std::printf("%.4f\n", best / static_cast<double>(n));
    return 0;
}
