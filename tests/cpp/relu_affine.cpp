// An elementwise FP32 custom op, written the way a kernel author writes one:
//
//     out = relu(a) * s + b        (a, b: FP32 tensors of one shape; s: float)
//
// The kernel stages its data through data RAM (tcm_malloc) with
// neuron_memcpy_from_soc / neuron_memcpy_to_soc, a chunk at a time.
//
// Two ops, as the vendor's two builds of one kernel:
//   relu_affine     single core: computes into an HBM temporary and hands it
//                   back with customop_return_tensor (the runtime copies it
//                   into the output through a data-RAM bounce buffer);
//   relu_affine_mc  SPMD on every core: each core takes its slice of the
//                   elements by get_cpu_id()/get_cpu_count() and writes it in
//                   place through get_dst_tensor() (in multicore mode only TCM
//                   and the claimed destination are safe). The slices cover
//                   numel exactly, whatever numel % cores is.
#include "neuroncustomop.h"

#include <stdint.h>

namespace {

constexpr int64_t CHUNK = 256;  // elements per staging buffer

struct Slice {
    int64_t start;
    int64_t len;
};

// Core `cpu` of `cores` takes [start, start + len): the first n % cores
// cores take one element more, so every element is covered exactly once
// (the vendor sample's last core drops the remainder).
Slice slice_of(int64_t n, int64_t cpu, int64_t cores) {
    const int64_t q = n / cores, r = n % cores;
    return Slice{cpu * q + (cpu < r ? cpu : r), q + (cpu < r ? 1 : 0)};
}

// out[i] = relu(a[i]) * s + b[i] for i in the slice; `dst` is the SoC
// address of out[0]. Returns 0, or -1 if a transfer or the TCM allocation
// failed.
int relu_affine_range(const neuron_tensor& a, const neuron_tensor& b, float s, uint64_t dst, Slice sl) {
    float* xa = static_cast<float*>(tcm_malloc(CHUNK * sizeof(float)));
    float* xb = static_cast<float*>(tcm_malloc(CHUNK * sizeof(float)));
    int rc = (xa && xb) ? 0 : -1;
    for (int64_t i = sl.start; rc == 0 && i < sl.start + sl.len;) {
        const int64_t k = (sl.start + sl.len - i) < CHUNK ? (sl.start + sl.len - i) : CHUNK;
        const uint32_t bytes = static_cast<uint32_t>(k * sizeof(float));
        const uint64_t off = static_cast<uint64_t>(i) * sizeof(float);
        if (neuron_memcpy_from_soc(xa, a.storage.addr + off, bytes) != 0 ||
            neuron_memcpy_from_soc(xb, b.storage.addr + off, bytes) != 0) {
            rc = -1;
            break;
        }
        for (int64_t j = 0; j < k; ++j) {
            const float x = xa[j] > 0.0f ? xa[j] : 0.0f;
            xa[j] = x * s + xb[j];
        }
        if (neuron_memcpy_to_soc(dst + off, xa, bytes) != 0) {
            rc = -1;
            break;
        }
        i += k;
    }
    tcm_free(xb);
    tcm_free(xa);
    return rc;
}

// The single-core kernel: returns a new tensor (storage in HBM) that the
// caller hands to customop_return_tensor and then frees.
neuron_tensor relu_affine(const neuron_tensor& a, const neuron_tensor& b, float s, bool* ok) {
    neuron_tensor out = a;  // same shape and dtype
    uint64_t tmp = 0;
    *ok = a.numel == b.numel && a.dtype == DTYPE_FP32 && b.dtype == DTYPE_FP32 &&
          neuron_hbm_allocate(static_cast<uint32_t>(a.nbytes), &tmp, 64) == 0;
    if (!*ok) {
        return out;
    }
    out.storage.addr = tmp;
    *ok = relu_affine_range(a, b, s, tmp, Slice{0, a.numel}) == 0;
    return out;
}

// The multicore kernel: this core's slice, written in place.
void relu_affine_mc(const neuron_tensor& a, const neuron_tensor& b, float s) {
    const neuron_tensor out = get_dst_tensor();
    if (out.numel != a.numel || a.numel != b.numel) {
        return;  // the run then fails: the output was claimed but not written
    }
    relu_affine_range(a, b, s, out.storage.addr, slice_of(out.numel, get_cpu_id(), get_cpu_count()));
}

}  // namespace

// ---- what the custom-op build generates ----

void relu_affine_wrapper() {
    customop_setup(true);
    const neuron_tensor a = customop_next_tensor();
    const neuron_tensor b = customop_next_tensor();
    const float s = customop_next_float();
    if (customop_status() == 0) {
        bool ok = false;
        const neuron_tensor out = relu_affine(a, b, s, &ok);
        if (ok) {
            customop_return_tensor(&out);
        }
        if (out.storage.addr != a.storage.addr) {
            neuron_hbm_deallocate(out.storage.addr);
        }
    }
    customop_cleanup();
}

void relu_affine_mc_wrapper() {
    customop_setup(true);
    const neuron_tensor a = customop_next_tensor();
    const neuron_tensor b = customop_next_tensor();
    const float s = customop_next_float();
    if (customop_status() == 0) {
        relu_affine_mc(a, b, s);
    }
    customop_cleanup();
}

int relu_affine_stack_switch() { return switch_stack_or_call_wrapper(relu_affine_wrapper, 4196); }
int relu_affine_mc_stack_switch() { return switch_stack_or_call_wrapper(relu_affine_mc_wrapper, 4196); }

static const char* const k_names[] = {"relu_affine", "relu_affine_mc"};
static int (*const k_ptrs[])(void) = {relu_affine_stack_switch, relu_affine_mc_stack_switch};

extern "C" int32_t get_func_cnt(void) { return 2; }
extern "C" const char* get_func_name(int32_t i) { return (i >= 0 && i < 2) ? k_names[i] : nullptr; }
extern "C" int32_t (*get_func_ptr(int32_t i))(void) { return (i >= 0 && i < 2) ? k_ptrs[i] : nullptr; }
