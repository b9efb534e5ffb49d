// Runs surface_kernel.cpp's ops on the simulator (through its C API) and
// checks each against a reference computed here with libm in float, the
// precision the runtime computes in. Prints "ok: <what>" per feature and
// exits 1 on the first mismatch.
#include "../cpp/sim_check.h"

#include <math.h>
#include <string.h>

#include <string>
#include <vector>

namespace {

NeuronSim* sim;

struct Arg {
    enum { Tensor, Value } kind;
    uint8_t dtype;
    std::vector<uint64_t> shape;
    std::vector<uint8_t> bytes;
    uint8_t value_kind;
};

template <class T>
Arg tensor(uint8_t dtype, std::vector<uint64_t> shape, const std::vector<T>& v) {
    Arg a{Arg::Tensor, dtype, shape, {}, 0};
    a.bytes.resize(v.size() * sizeof(T));
    memcpy(a.bytes.data(), v.data(), a.bytes.size());
    return a;
}
// kind 2 scalar, 5 long long / int64_t, 6 double.
template <class T>
Arg value(uint8_t kind, uint8_t dtype, T v) {
    Arg a{Arg::Value, dtype, {}, {}, kind};
    a.bytes.resize(sizeof(T));
    memcpy(a.bytes.data(), &v, sizeof(T));
    return a;
}
Arg i64(int64_t v) { return value<int64_t>(5, DTYPE_INT64, v); }

// Runs op with args on `cores` cores; the output has `out_shape`, dtype
// `out_dtype`; returns its elements.
template <class T>
std::vector<T> run(const char* op, const std::vector<Arg>& args, uint8_t out_dtype, std::vector<uint64_t> out_shape, uint32_t cores = 1) {
    neuron_sim_clear_args(sim);
    for (const Arg& a : args) {
        if (a.kind == Arg::Tensor) {
            CHECK(neuron_sim_arg_tensor(sim, a.dtype, a.shape.data(), a.shape.size(), a.bytes.data(), a.bytes.size()) == 0, "tensor arg");
        } else {
            CHECK(neuron_sim_arg_value(sim, a.value_kind, a.dtype, a.bytes.data()) == 0, "value arg");
        }
    }
    CHECK(neuron_sim_set_output(sim, out_dtype, out_shape.data(), out_shape.size()) == 0, "output");
    const int rc = neuron_sim_run(sim, op, cores);
    CHECK(rc == 0, "%s: %s\n%s", op, describe(rc).c_str(), neuron_sim_report(sim));
    size_t n = 1;
    for (uint64_t d : out_shape) n *= d;
    std::vector<T> out(n);
    CHECK(neuron_sim_read_output(sim, out.data(), n * sizeof(T)) == 0, "read output");
    return out;
}

bool close_to(float got, float want) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabsf(got - want) <= 1e-5f * fmaxf(1.0f, fabsf(want));
}

void check_floats(const char* what, int which, const std::vector<float>& got, const std::vector<float>& want) {
    CHECK(got.size() == want.size(), "%s %d: size", what, which);
    for (size_t i = 0; i < got.size(); i++) CHECK(close_to(got[i], want[i]), "%s %d: [%zu] = %.9g, want %.9g", what, which, i, got[i], want[i]);
}

void unary() {
    std::vector<float> x(301);
    for (size_t i = 0; i < x.size(); i++) x[i] = (static_cast<float>(i) - 150.0f) * 0.037f;
    float (*const ref[])(float) = {fabsf, ceilf, floorf, sinf, cosf, tanf, logf, log2f, log10f, expf};
    for (int which = 0; which < 10; which++) {
        std::vector<float> want(x.size());
        for (size_t i = 0; i < x.size(); i++) want[i] = ref[which](x[i]);
        for (int form = 0; form < 2; form++) {
            auto got = run<float>("unary_ops", {tensor(DTYPE_FP32, {301}, x), i64(which), i64(form)}, DTYPE_FP32, {301});
            // Transcendentals: libm's float functions and the runtime's may
            // differ in the last place; allow a few ulps there.
            for (size_t i = 0; i < x.size(); i++) {
                const float tol = which >= 3 ? 4e-6f * fmaxf(1.0f, fabsf(want[i])) : 0.0f;
                CHECK((isnan(want[i]) && isnan(got[i])) || (isinf(want[i]) && got[i] == want[i]) || fabsf(got[i] - want[i]) <= tol,
                      "unary %d form %d: x=%g got %.9g want %.9g", which, form, x[i], got[i], want[i]);
            }
        }
    }
    printf("ok: unary ops abs ceil floor sin cos tan log log2 log10 exp, allocating and _out\n");
}

void binary() {
    const size_t n = 97;
    std::vector<float> a(n), b(n);
    for (size_t i = 0; i < n; i++) {
        a[i] = (static_cast<float>(i) - 40.0f) * 0.25f;
        b[i] = 0.5f + static_cast<float>(i % 7) * 0.75f;
    }
    const float s = 1.5f;
    for (int which = 0; which < 20; which++) {
        std::vector<float> want(n);
        for (size_t i = 0; i < n; i++) {
            const float x = a[i], y = b[i];
            float w = 0;
            switch (which) {
                case 0: w = x + y; break;
                case 1: w = x + s * y; break;
                case 2: w = x + 2 * s; break;
                case 3: w = x - s * y; break;
                case 4: w = x - s; break;
                case 5: w = x * y; break;
                case 6: w = x * s; break;
                case 7: w = x / y; break;
                case 8: w = x / s; break;
                case 9: w = powf(x, s); break;
                case 10: w = powf(x, y); break;
                case 11: w = powf(s, y); break;
                case 12: w = fminf(fmaxf(x, -s), s); break;
                case 13: w = fminf(fmaxf(x, -1.0f), 1.5f); break;
                case 14: w = powf(s, x); break;
                case 15: w = x + 0.5f * y; break;
                case 16: w = x - 1.25f; break;
                case 17: w = x * y; break;
                case 18: w = x / y; break;
                case 19: w = powf(x, y); break;
            }
            want[i] = w;
        }
        auto got = run<float>("binary_ops", {tensor(DTYPE_FP32, {n}, a), tensor(DTYPE_FP32, {n}, b), value<float>(2, DTYPE_FP32, s), i64(which)},
                              DTYPE_FP32, {n});
        check_floats("binary", which, got, want);
    }
    printf("ok: add/sub (alpha), mul, div, pow (3 forms), clamp, with tensors and scalars, allocating and _out\n");
}

void bitwise() {
    const size_t n = 40;
    std::vector<int32_t> a(n), b(n);
    for (size_t i = 0; i < n; i++) {
        a[i] = static_cast<int32_t>(i * 37 + 5) - 300;
        b[i] = static_cast<int32_t>(i * 1103515245u >> 7);
    }
    for (int which = 0; which < 9; which++) {
        std::vector<int32_t> want(n);
        for (size_t i = 0; i < n; i++) {
            const int32_t x = a[i], y = b[i];
            const int32_t w[] = {x & y, x & 0xF0, 0x0F & y, x | y, x | 0x100, 0x3 | y, ~x, ~x, x & y};
            want[i] = w[which];
        }
        auto got = run<int32_t>("bitwise_ops", {tensor(DTYPE_INT32, {n}, a), tensor(DTYPE_INT32, {n}, b), i64(which)}, DTYPE_INT32, {n});
        for (size_t i = 0; i < n; i++) CHECK(got[i] == want[i], "bitwise %d [%zu]: %d want %d", which, i, got[i], want[i]);
    }
    // pow on integers (DtypeNotSupported, 88) and operands of two shapes
    // (ShapeMismatch, 89) are refused with their codes, and the first
    // failure fails the op: an allocating form (case 9) or an _out form
    // (case 10, add_out over two shapes first).
    for (int which = 9; which <= 10; which++) {
        const int want = which == 9 ? 88 : 89;
        neuron_sim_clear_args(sim);
        const uint64_t shape[1] = {n};
        CHECK(neuron_sim_arg_tensor(sim, DTYPE_INT32, shape, 1, a.data(), n * 4) == 0, "a");
        CHECK(neuron_sim_arg_tensor(sim, DTYPE_INT32, shape, 1, b.data(), n * 4) == 0, "b");
        const int64_t w = which;
        CHECK(neuron_sim_arg_value(sim, 5, DTYPE_INT64, &w) == 0, "which");
        CHECK(neuron_sim_set_output(sim, DTYPE_INT32, shape, 1) == 0, "output");
        const int rc = neuron_sim_run(sim, "bitwise_ops", 1);
        const std::string report = neuron_sim_report(sim);
        CHECK(rc == want, "refusal case %d: the run returned %s, want %d\n%s", which, describe(rc).c_str(), want, report.c_str());
        char line[128];
        snprintf(line, sizeof line, "    refused %d: defined 0 0 0, errors %d 88 88 89, status %d\n", which, which == 9 ? 0 : 89, want);
        CHECK(report.find(line) != std::string::npos, "refusals: [%s] missing\n%s", line, report.c_str());
    }
    printf("ok: bitwise_and/or (tensor-tensor, tensor-scalar, scalar-tensor), bitwise_not, allocating and _out; pow on integers and mismatched shapes refused and fail the op\n");
}

void factories() {
    for (int which = 0; which < 7; which++) {
        const uint64_t r = which == 6 ? 4 : 3, c = which == 6 ? 4 : 5;
        std::vector<float> like(r * c, 9.0f);
        auto got = run<float>("factories", {tensor(DTYPE_FP32, {r, c}, like), i64(which)}, DTYPE_FP32, {r, c});
        for (uint64_t i = 0; i < r; i++)
            for (uint64_t j = 0; j < c; j++) {
                const float eye = i == j ? 1.0f : 0.0f;
                const float want[] = {0.0f, 1.0f, 2.5f, eye, -3.0f, -0.25f, eye};
                CHECK(got[i * c + j] == want[which], "factories %d [%llu][%llu] = %g", which, (unsigned long long)i, (unsigned long long)j,
                      got[i * c + j]);
            }
    }
    printf("ok: factories empty/zeros/ones/full/eye over braced lists, IntArrayRef, sizes(), ScalarType, TensorOptions\n");
}

void probe() {
    std::vector<uint16_t> x(15, 0x3c00);
    const int64_t k = -123456789012LL;
    const float d = 2.5f;  // a double argument travels as an FP32 element
    for (int floating = 0; floating < 2; floating++) {
        Arg s = floating ? value<float>(2, DTYPE_FP32, -7.75f) : value<int32_t>(2, DTYPE_INT32, 42);
        auto got = run<int64_t>("probe", {tensor(DTYPE_FP16, {3, 5}, x), s, i64(k), value<float>(6, DTYPE_FP32, d), i64(-5)}, DTYPE_INT64, {64});
        const double sv = floating ? -7.75 : 42.0;
        const int64_t want[] = {
            15, 2, 5, 3, 3, 5, 2, 5, 15, 2, 30, 1, 1, 0, 1, 1, 2, 1,
            floating, !floating,
            static_cast<int64_t>(sv), static_cast<int64_t>(sv), static_cast<int64_t>(sv * 1000), static_cast<int64_t>(sv * 1000),
            static_cast<int64_t>(sv), static_cast<int64_t>(sv * 1000),
            k, 2500,
            0, 1,
            // 1.1 rounded to FP16 (0x3c66) and to BF16 (0x3f8d).
            static_cast<int64_t>(1.099609375f * 1e6f), static_cast<int64_t>(1.1015625f * 1e6f),
            0x7bff, 0xc000,
            1, 1, 1, 1, 1, 1, 1, 1,
            8,
            -5,
            1, 0x3c00,
        };
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            CHECK(got[i] == want[i], "probe (floating %d) value %zu = %lld, want %lld", floating, i, (long long)got[i], (long long)want[i]);
    }
    printf("ok: tensor methods (negative size(d), sizes/strides iteration, dtype, itemsize, nbytes), Scalar conversions, int64_t/double/long long args, q7_data_ptr, Half/BFloat16, dtype codes\n");
}

void relu_backward() {
    const uint64_t r = 7, c = 9;
    std::vector<float> g(r * c), x(r * c);
    for (size_t i = 0; i < g.size(); i++) {
        g[i] = static_cast<float>(i) * 0.5f + 1.0f;
        x[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
    }
    auto got = run<float>("relu_backward", {tensor(DTYPE_FP32, {r, c}, g), tensor(DTYPE_FP32, {r, c}, x)}, DTYPE_FP32, {r, c});
    for (size_t i = 0; i < g.size(); i++) {
        const float want = x[i] > 0 ? g[i] + 0.5f : 0.0f;
        CHECK(got[i] == want, "relu_backward [%zu] = %g want %g", i, got[i], want);
    }
    printf("ok: 2-D accessors read, write, compare with double literals, +=\n");
}

void streams() {
    std::vector<float> a(5000);
    for (size_t i = 0; i < a.size(); i++) a[i] = static_cast<float>(i % 101) - 50.0f;
    auto got = run<float>("streams", {tensor(DTYPE_FP32, {50, 100}, a)}, DTYPE_FP32, {50, 100});
    for (size_t i = 0; i < a.size(); i++) CHECK(got[i] == 3 * a[i] + 1, "streams [%zu]", i);
    printf("ok: read and write stream accessors\n");
}

void tcm() {
    // get_cpu_count() is always 8: a multicore kernel runs on all cores.
    for (uint32_t cores : {8u}) {
        std::vector<float> a(2021);
        for (size_t i = 0; i < a.size(); i++) a[i] = static_cast<float>(i) * 0.01f - 7.0f;
        auto got = run<float>("tcm_square", {tensor(DTYPE_FP32, {2021}, a)}, DTYPE_FP32, {2021}, cores);
        for (size_t i = 0; i < a.size(); i++) CHECK(got[i] == a[i] * a[i], "tcm on %u cores [%zu]", cores, i);
    }
    printf("ok: TCM accessor, torch::neuron::tcm_malloc, get_dst_tensor/get_cpu_id/get_cpu_count on 8 cores (numel %% 8 = 5)\n");
}

void coherence() {
    for (int64_t p = 0; p < 3; p++) {
        auto got = run<int64_t>("coherence", {tensor(DTYPE_INT32, {4}, std::vector<int32_t>{1, 2, 3, 4}), i64(p)}, DTYPE_INT64, {2});
        CHECK(got[0] == p, "coherence policy read back %lld want %lld", (long long)got[0], (long long)p);
        // COHERENT refuses an accessor while a write stream is open.
        CHECK(got[1] == (p == 0 ? 0 : 1), "coherence %lld: accessor admitted %lld", (long long)p, (long long)got[1]);
        // The refusal the kernel handled is in the report, marked so.
        const bool listed = strstr(neuron_sim_report(sim), " (handled)\n") != nullptr;
        CHECK(listed == (p == 0), "coherence %lld: handled refusal listed %d\n%s", (long long)p, listed, neuron_sim_report(sim));
    }
    printf("ok: coherence policy set by name (COHERENT refuses, INCOHERENT_* admit)\n");
}

void lifetime() {
    std::vector<float> a(10);
    for (size_t i = 0; i < a.size(); i++) a[i] = static_cast<float>(i);
    auto got = run<float>("lifetime", {tensor(DTYPE_FP32, {10}, a)}, DTYPE_FP32, {10});
    for (size_t i = 0; i < a.size(); i++) CHECK(got[i] == 7 + a[i], "lifetime [%zu] = %g", i, got[i]);
    const std::string report = neuron_sim_report(sim);
    CHECK(report.find("    lifetime last error 0\n") != std::string::npos, "printf line missing:\n%s", report.c_str());
    char want[128];
    snprintf(want, sizeof want, "    r[0]=%.2f n=%lld %s %5.1e|%-4d|%x|%c\n", 7.0, 10LL, "done", 12345.678, 42, 255u, 'z');
    CHECK(report.find(want) != std::string::npos, "printf line [%s] missing:\n%s", want, report.c_str());
    // 50 rounds of a 64 KiB tensor and its copies: freed each round, the
    // HBM high water stays below a few of them.
    const size_t at = report.find("HBM heap ");
    CHECK(at != std::string::npos, "no HBM high water in the report");
    const long hw = atol(report.c_str() + at + 9);
    CHECK(hw > 64 * 1024 && hw < 4 * 64 * 1024, "HBM high water %ld B: the copies do not free their storage\n%s", hw, report.c_str());
    printf("ok: copies outlive the original, the last frees (HBM high water %ld B), printf reaches the ring\n", hw);
}

}  // namespace

int main() {
    sim = new_sim(10);
    unary();
    binary();
    bitwise();
    factories();
    probe();
    relu_backward();
    streams();
    tcm();
    coherence();
    lifetime();
    neuron_sim_free(sim);
    return 0;
}
