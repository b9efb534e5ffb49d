// The C++ kernels `cargo xtask perf` counts on the emulated cores
// (perf/profile.c): vendor-style code, built by `customop build
// --target qemu` with the open toolchain every C++ kernel uses. Each
// measured operation sits between two calls of perf_mark(); the kernel
// prints `perf: region NAME` (outside the region) for every region in the
// order it runs them, so xtask pairs the k-th region of a core with that
// core's marks 2k and 2k+1 and subtracts the `empty` region.
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

// The marker: the plugin reports the counts when its first instruction
// runs. Never inlined; the asm keeps memory accesses on their side.
extern "C" __attribute__((noinline)) void perf_mark(void) { __asm__ volatile("" ::: "memory"); }

static void region(const char* name) { printf("perf: region %s\n", name); }

// Each measured access in a function of its own: its code (register
// allocation included) does not depend on the kernel around it. The
// accessor is read through the reference, as from a kernel's frame; the
// marker call may change that memory, so no load moves above it.
template <class A>
__attribute__((noinline)) float read_1d(const A& a, int64_t i) {
    perf_mark();
    const float v = a[i];
    perf_mark();
    return v;
}
template <class A>
__attribute__((noinline)) void write_1d(const A& a, int64_t i, float v) {
    perf_mark();
    a[i] = v;
    perf_mark();
}
template <class A>
__attribute__((noinline)) float read_2d(const A& a, int64_t i, int64_t j) {
    perf_mark();
    const float v = a[i][j];
    perf_mark();
    return v;
}
template <class A>
__attribute__((noinline)) void write_2d(const A& a, int64_t i, int64_t j, float v) {
    perf_mark();
    a[i][j] = v;
    perf_mark();
}
__attribute__((noinline)) void* hit_inline(neuron_translation_ctx* ctx, uint64_t a) {
    perf_mark();
    void* p = at::detail::translate_hit_inline(ctx, a);
    // The pointer in a register before the closing marker: without this
    // the compiler may finish the arithmetic after it (the region then
    // counts part of the hit).
    __asm__ volatile("" ::"r"(p));
    perf_mark();
    return p;
}

static volatile float sink;

static void* volatile sink_ptr;

// One element read and written through the accessors, 1-D and 2-D, each
// after a first access (the window is in place, as inside a loop).
// out[i] = x1[i] for i = 5, and y2[3][4] = x2[3][4]: the output is checked.
// Then the translate hit of the dynamic-window path alone, on HBM address
// `hbm` (the emulator backs no HBM behind those windows, so no tensor can
// live there): out[7] is 1 when it gave the library's pointer (also on
// its fallback path).
torch::Tensor acc_elem(const torch::Tensor& x1, const torch::Tensor& x2, int64_t hbm) {
    torch::Tensor out = get_dst_tensor();
    torch::Tensor y2 = torch::zeros(x2.sizes(), torch::kFloat);
    auto a1 = x1.accessor<float, 1>();
    auto o1 = out.accessor<float, 1>();
    auto a2 = x2.accessor<float, 2>();
    auto o2 = y2.accessor<float, 2>();
    const int64_t i0 = 5, j0 = 4, r0 = 3;
    o1[i0] = a1[i0];
    o2[r0][j0] = a2[r0][j0];

    region("empty");
    perf_mark();
    perf_mark();

    region("cpp_acc_read_1d");
    sink = read_1d(a1, i0);
    region("cpp_acc_write_1d");
    write_1d(o1, i0, sink);
    region("cpp_acc_read_2d");
    sink = read_2d(a2, r0, j0);
    region("cpp_acc_write_2d");
    write_2d(o2, r0, j0, sink);

    // `hbm`'s region is installed by this miss.
    neuron_translation_ctx* ctx = x1.q7_data_ptr().ctx;
    void* want = neuron_translate(ctx, static_cast<uint64_t>(hbm) + 64);
    region("cpp_translate_hit_inline");
    void* p = hit_inline(ctx, static_cast<uint64_t>(hbm) + 64);
    sink_ptr = p;

    // Another region installed after it: the inline hit serves both (the
    // hit table holds every record's granule). A third whose granule
    // shares `hbm`'s slot (4 GiB - 16 MiB further: the slot is the low
    // word's top byte plus the high word) takes that slot, so the inline
    // hit on `hbm` falls back to neuron_translate (which scans and puts it
    // back), and then the third's does: each must give its own pointer.
    const uint64_t other = static_cast<uint64_t>(hbm) + (UINT64_C(16) << 20) + 64;
    void* want_other = neuron_translate(ctx, other);
    const uint64_t twin = static_cast<uint64_t>(hbm) + (UINT64_C(4) << 30) - (UINT64_C(16) << 20) + 64;
    void* want_twin = neuron_translate(ctx, twin);
    const bool fallback_ok = at::detail::translate_hit_inline(ctx, other) == want_other &&
                             at::detail::translate_hit_inline(ctx, static_cast<uint64_t>(hbm) + 64) == want &&
                             at::detail::translate_hit_inline(ctx, twin) == want_twin && want_other != nullptr &&
                             want_twin != nullptr && want_twin != want;

    // The 2-D write is checked through the output: element 6 = y2[3][4].
    o1[6] = static_cast<float>(o2[r0][j0]);
    o1[7] = p != nullptr && p == want && fallback_ok ? 1.0f : 0.0f;
    return out;
}

// The vendor's per-element ReLU (as in its documentation: double
// literals, the input read twice when positive).
torch::Tensor relu_acc(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    region("empty");
    perf_mark();
    perf_mark();
    region("cpp_relu_acc");
    perf_mark();
    const int64_t num_elem = t_in.numel();
    auto t_in_acc = t_in.accessor<float, 1>();
    auto t_out_acc = t_out.accessor<float, 1>();
    for (int64_t i = 0; i < num_elem; i++) {
        t_out_acc[i] = t_in_acc[i] > 0.0 ? t_in_acc[i] : 0.0;
    }
    perf_mark();
    return t_out;
}

// The vendor's TCM ReLU (1024-element chunks through tcm_malloc). In a
// multicore build (`--multicore` defines CUSTOMOP_MULTICORE) each of the
// eight cores takes an even slice, the last one also the remainder; a
// single-core build does the whole tensor (get_cpu_count() is the
// cluster's 8 either way).
torch::Tensor relu_tcm(const torch::Tensor& t_in) {
    torch::Tensor t_out = get_dst_tensor();
    region("empty");
    perf_mark();
    perf_mark();
    region("cpp_relu_tcm");
    perf_mark();
    const int64_t num_elem = t_in.numel();
#if defined(CUSTOMOP_MULTICORE)
    const int64_t cpus = get_cpu_count();
    const int64_t cpu = get_cpu_id();
    const int64_t share = num_elem / cpus;
    const int64_t begin = share * cpu;
    const int64_t end = cpu == cpus - 1 ? num_elem : begin + share;
#else
    const int64_t begin = 0;
    const int64_t end = num_elem;
#endif
    static constexpr int64_t buffer_size = 1024;
    float* tcm_buffer = static_cast<float*>(torch::neuron::tcm_malloc(sizeof(float) * buffer_size));
    if (tcm_buffer != nullptr) {
        auto t_in_tcm_acc = t_in.tcm_accessor();
        auto t_out_tcm_acc = t_out.tcm_accessor();
        for (int64_t i = begin; i < end; i += buffer_size) {
            const int64_t remaining_elem = end - i;
            const int64_t copy_size = remaining_elem > buffer_size ? buffer_size : remaining_elem;
            t_in_tcm_acc.tensor_to_tcm<float>(tcm_buffer, i, copy_size);
            for (int64_t j = 0; j < copy_size; j++) {
                tcm_buffer[j] = tcm_buffer[j] > 0.0 ? tcm_buffer[j] : 0.0;
            }
            t_out_tcm_acc.tcm_to_tensor<float>(tcm_buffer, i, copy_size);
        }
    }
    torch::neuron::tcm_free(tcm_buffer);
    perf_mark();
    return t_out;
}
