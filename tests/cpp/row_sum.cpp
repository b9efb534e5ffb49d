// An INT32 reduction custom op, written the way a kernel author writes one:
//
//     out[r] = sum over c of x[r][c]      (x: INT32 [rows, cols]; out: INT32 [rows])
//
// Every element is read (and every result written) through neuron_translate
// at the point of access: a translate can reprogram a window, and an NX
// pointer obtained earlier through that window would then show another
// region, so no pointer is held across another translate.
//
// Two ops, both writing in place through get_dst_tensor():
//   row_sum     single core: all rows;
//   row_sum_mc  SPMD on every core: each core takes its slice of the rows by
//               get_cpu_id()/get_cpu_count(), rows % cores handled.
#include "neuroncustomop.h"

#include <stdint.h>
#include <string.h>

namespace {

struct Slice {
    int64_t start;
    int64_t len;
};

Slice slice_of(int64_t n, int64_t cpu, int64_t cores) {
    const int64_t q = n / cores, r = n % cores;
    return Slice{cpu * q + (cpu < r ? cpu : r), q + (cpu < r ? 1 : 0)};
}

// Element `i` of an INT32 tensor, translated now. Sets *ok = false if the
// address cannot be translated.
int32_t load_i32(const neuron_tensor& t, int64_t i, bool* ok) {
    const void* p = neuron_translate(t.storage.ctx, t.storage.addr + static_cast<uint64_t>(i) * 4);
    if (p == nullptr) {
        *ok = false;
        return 0;
    }
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

void store_i32(const neuron_tensor& t, int64_t i, int32_t v, bool* ok) {
    void* p = neuron_translate(t.storage.ctx, t.storage.addr + static_cast<uint64_t>(i) * 4);
    if (p == nullptr) {
        *ok = false;
        return;
    }
    memcpy(p, &v, sizeof v);
}

// Rows [sl.start, sl.start + sl.len) of x summed into out. Sums wrap as
// int32 arithmetic does on the device (computed unsigned: no UB).
bool row_sum_range(const neuron_tensor& x, const neuron_tensor& out, Slice sl) {
    const int64_t cols = x.sizes[1];
    bool ok = true;
    for (int64_t r = sl.start; ok && r < sl.start + sl.len; ++r) {
        uint32_t acc = 0;
        for (int64_t c = 0; ok && c < cols; ++c) {
            acc += static_cast<uint32_t>(load_i32(x, r * x.strides[0] + c * x.strides[1], &ok));
        }
        store_i32(out, r, static_cast<int32_t>(acc), &ok);
    }
    return ok;
}

bool shapes_ok(const neuron_tensor& x, const neuron_tensor& out) {
    return x.num_dim == 2 && out.num_dim == 1 && x.dtype == DTYPE_INT32 && out.dtype == DTYPE_INT32 &&
           out.sizes[0] == x.sizes[0];
}

void row_sum(const neuron_tensor& x) {
    const neuron_tensor out = get_dst_tensor();
    if (shapes_ok(x, out)) {
        row_sum_range(x, out, Slice{0, x.sizes[0]});
    }
}

void row_sum_mc(const neuron_tensor& x) {
    const neuron_tensor out = get_dst_tensor();
    if (shapes_ok(x, out)) {
        row_sum_range(x, out, slice_of(x.sizes[0], get_cpu_id(), get_cpu_count()));
    }
}

}  // namespace

// ---- what the custom-op build generates ----

void row_sum_wrapper() {
    customop_setup(true);
    const neuron_tensor x = customop_next_tensor();
    if (customop_status() == 0) {
        row_sum(x);
    }
    customop_cleanup();
}

void row_sum_mc_wrapper() {
    customop_setup(true);
    const neuron_tensor x = customop_next_tensor();
    if (customop_status() == 0) {
        row_sum_mc(x);
    }
    customop_cleanup();
}

int row_sum_stack_switch() { return switch_stack_or_call_wrapper(row_sum_wrapper, 4196); }
int row_sum_mc_stack_switch() { return switch_stack_or_call_wrapper(row_sum_mc_wrapper, 4196); }

static const char* const k_names[] = {"row_sum", "row_sum_mc"};
static int (*const k_ptrs[])(void) = {row_sum_stack_switch, row_sum_mc_stack_switch};

extern "C" int32_t get_func_cnt(void) { return 2; }
extern "C" const char* get_func_name(int32_t i) { return (i >= 0 && i < 2) ? k_names[i] : nullptr; }
extern "C" int32_t (*get_func_ptr(int32_t i))(void) { return (i >= 0 && i < 2) ? k_ptrs[i] : nullptr; }
