// libneuroncustomop: the C++ kernel API, a thin header over the C one
// (neuroncustomop.h). Hand-written; every operation calls a C export, so a
// C++ kernel and a Rust kernel run the same implementation. The vendor's
// torch/at/c10 surface (<torch/torch.h>) is the same classes with the
// vendor's names and signatures, over the functions here.
//
//   neuron::Tensor (= at::Tensor)  a tensor argument or result
//   t.accessor<T, N>()             per-element access (const Tensor: read-only);
//                                  acc[i][j] peels dimensions with 64-bit
//                                  address arithmetic, the one translate happens
//                                  when the element is read or written
//   t.read_stream_accessor<T>()    read(), close()
//   t.write_stream_accessor<T>()   write(v), close(); writes reach memory at
//                                  close() or end of scope
//   t.tcm_accessor()               tensor_to_tcm<T>(tcm, flat_offset, n),
//                                  tcm_to_tensor<T>(tcm, flat_offset, n)
//   t.get_/set_accessor_coherence_policy()
//   neuron::tcm_malloc / tcm_free, neuron_memcpy overloads, neuron_printf
//   neuron::empty/full/zeros/ones/eye (shape, ISA dtype code),
//   abs ... exp (+ _out(x, out)), pow, clamp, add/sub (alpha), mul, div,
//   bitwise_and/or/not, fill_: the _out forms return 0 or -1
//   NEURON_CUSTOM_OPS(op1, op2, ...)  the wrappers, <fn>_stack_switch
//                                     launchers and the get_func_* table
//
// Element types: uint8_t int8_t int16_t int32_t int64_t float, and
// neuron::Half (FP16) / neuron::BFloat16 (uint16_t-backed, with float
// conversions). Failing calls return -1 (or a default value / an undefined
// Tensor) and record a code: neuron_last_error().
//
// Freestanding: this header and those it includes use only stddef.h,
// stdint.h and the project's headers (the device has no hosted
// libc or C++ library).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ATen/core/Tensor.h"
#include "c10/core/Scalar.h"
#include "c10/core/ScalarType.h"
#include "c10/util/ArrayRef.h"
#include "neuron/detail/format.hpp"
#include "neuron/detail/traits.hpp"
#include "neuroncustomop.h"

#ifndef NEURON_STACK_SIZE
#ifdef STACK_SIZE
#define NEURON_STACK_SIZE STACK_SIZE
#else
#define NEURON_STACK_SIZE 0 /* the default, 4196 bytes */
#endif
#endif

// neuron_memcpy in both directions (C has two names; C++ overloads).
inline int neuron_memcpy(void* dst, uint64_t src, uint32_t n) { return neuron_memcpy_from_soc(dst, src, n); }
inline int neuron_memcpy(uint64_t dst, const void* src, uint32_t n) { return neuron_memcpy_to_soc(dst, src, n); }

namespace neuron {
namespace detail {
// The printf ring takes one entry per call, up to 255 bytes.
constexpr size_t kPrintfEntry = 256;
inline int print_formatted(const char* buf, int n) {
    if (n < 0) return n;
    const size_t len = static_cast<size_t>(n) < kPrintfEntry ? static_cast<size_t>(n) : kPrintfEntry - 1;
    neuron_print(buf, len);
    return n;
}
}  // namespace detail
}  // namespace neuron

// printf into the device ring (one entry per call, up to 255 bytes),
// formatted by the header's own formatter. Returns the formatted length.
// A variadic template, as the kernel's printf, not a C `...` function: C
// variadic arguments do not survive the device toolchain (zig's clang
// front end and the nightly's llc disagree on the Xtensa va_list, and
// an int argument came out as garbage).
template <class... A>
inline int neuron_printf(const char* fmt, A... args) {
    char buf[neuron::detail::kPrintfEntry];
    return neuron::detail::print_formatted(buf, neuron::fmt::format_to(buf, sizeof buf, fmt, args...));
}

namespace neuron {

// ---- element types and tensors ----------------------------------------------

using Half = c10::Half;
using BFloat16 = c10::BFloat16;
using Tensor = at::Tensor;
using Scalar = c10::Scalar;
using IntArrayRef = c10::IntArrayRef;
template <class T, size_t N, bool ReadOnly>
using Accessor = at::Accessor<T, N, ReadOnly>;
template <class T>
using ReadStreamAccessor = at::TensorReadStreamAccessor<T>;
template <class T>
using WriteStreamAccessor = at::TensorWriteStreamAccessor<T>;

template <class T> struct dtype_of { static constexpr uint8_t value = at::detail::isa_dtype_of<T>(); };

// ---- memory ---------------------------------------------------------------

inline void* tcm_malloc(size_t n) { return ::tcm_malloc(n); }
inline void tcm_free(void* p) { ::tcm_free(p); }

// get_dst_tensor(): the output, to write in place (multicore kernels).
inline Tensor get_dst_tensor() { return Tensor(::get_dst_tensor()); }
inline int get_cpu_id() { return ::get_cpu_id(); }
inline int get_cpu_count() { return ::get_cpu_count(); }

// ---- tensor operations ------------------------------------------------------

// A contiguous tensor of ISA dtype `dtype` in this core's HBM heap, owned
// (freed with its last copy); undefined on failure.
inline Tensor empty(IntArrayRef shape, uint8_t dtype) {
    neuron_tensor t = neuron_tensor();
    if (neuron_tensor_empty(dtype, shape.data(), static_cast<uint32_t>(shape.size()), &t) != 0) return Tensor();
    return Tensor::adopt(t);
}
inline Tensor empty_like(const Tensor& x) { return empty(x.sizes(), x.isa_dtype()); }
inline int fill_(const Tensor& t, const Scalar& v) { return neuron_op_fill(&t.raw(), v.raw()); }
inline Tensor full(IntArrayRef shape, const Scalar& v, uint8_t dtype) {
    Tensor t = empty(shape, dtype);
    if (t.defined() && fill_(t, v) != 0) return Tensor();
    return t;
}
inline Tensor zeros(IntArrayRef shape, uint8_t dtype) { return full(shape, 0, dtype); }
inline Tensor ones(IntArrayRef shape, uint8_t dtype) { return full(shape, 1, dtype); }
inline Tensor eye(int64_t n, int64_t m, uint8_t dtype) {
    Tensor t = empty({n, m}, dtype);
    if (t.defined() && neuron_op_eye(&t.raw()) != 0) return Tensor();
    return t;
}

// An allocating form: a tensor like `like`, filled by `out_form` (0 or
// -1); undefined if either fails.
template <class F>
inline Tensor allocating(const Tensor& like, F out_form) {
    Tensor out = empty_like(like);
    if (out.defined() && out_form(out) != 0) return Tensor();
    return out;
}

#define NEURON_UNARY_OP_(name, code)                                                                   \
    inline int name##_out(const Tensor& x, const Tensor& out) { return neuron_op_unary(code, &x.raw(), &out.raw()); } \
    inline Tensor name(const Tensor& x) {                                                              \
        return allocating(x, [&](const Tensor& out) { return name##_out(x, out); });                   \
    }
NEURON_UNARY_OP_(abs, UNARY_OP_ABS)
NEURON_UNARY_OP_(ceil, UNARY_OP_CEIL)
NEURON_UNARY_OP_(floor, UNARY_OP_FLOOR)
NEURON_UNARY_OP_(sin, UNARY_OP_SIN)
NEURON_UNARY_OP_(cos, UNARY_OP_COS)
NEURON_UNARY_OP_(tan, UNARY_OP_TAN)
NEURON_UNARY_OP_(log, UNARY_OP_LOG)
NEURON_UNARY_OP_(log2, UNARY_OP_LOG2)
NEURON_UNARY_OP_(log10, UNARY_OP_LOG10)
NEURON_UNARY_OP_(exp, UNARY_OP_EXP)
NEURON_UNARY_OP_(bitwise_not, UNARY_OP_BITWISE_NOT)
#undef NEURON_UNARY_OP_

// out = a op b (alpha scales b for add and sub).
inline int binary_out(uint32_t op, const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out) {
    return neuron_op_binary(op, &a.raw(), &b.raw(), alpha.raw(), &out.raw());
}
// out = a op s: the scalar is first converted to the tensor's dtype (a
// tensor of it), then the tensor-tensor form runs.
inline int binary_scalar_out(uint32_t op, const Tensor& a, const Scalar& s, const Scalar& alpha, const Tensor& out) {
    Tensor b = full(a.sizes(), s, a.isa_dtype());
    return b.defined() ? binary_out(op, a, b, alpha, out) : -1;
}
// out = s op b (the bitwise forms with a scalar first operand).
inline int scalar_binary_out(uint32_t op, const Scalar& s, const Tensor& b, const Tensor& out) {
    Tensor a = full(b.sizes(), s, b.isa_dtype());
    return a.defined() ? binary_out(op, a, b, 1, out) : -1;
}

inline int add_out(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out) { return binary_out(BINARY_OP_ADD, a, b, alpha, out); }
inline Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1) {
    return allocating(a, [&](const Tensor& out) { return add_out(a, b, alpha, out); });
}
inline int sub_out(const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out) { return binary_out(BINARY_OP_SUB, a, b, alpha, out); }
inline Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1) {
    return allocating(a, [&](const Tensor& out) { return sub_out(a, b, alpha, out); });
}
#define NEURON_BINARY_OP_(name, code)                                                                  \
    inline int name##_out(const Tensor& a, const Tensor& b, const Tensor& out) { return binary_out(code, a, b, 1, out); } \
    inline Tensor name(const Tensor& a, const Tensor& b) {                                             \
        return allocating(a, [&](const Tensor& out) { return name##_out(a, b, out); });                \
    }
NEURON_BINARY_OP_(mul, BINARY_OP_MUL)
NEURON_BINARY_OP_(div, BINARY_OP_DIV)
NEURON_BINARY_OP_(bitwise_and, BINARY_OP_BITWISE_AND)
NEURON_BINARY_OP_(bitwise_or, BINARY_OP_BITWISE_OR)
#undef NEURON_BINARY_OP_

inline int pow_out(const Tensor& x, double e, const Tensor& out) { return neuron_op_pow(&x.raw(), e, &out.raw()); }
inline Tensor pow(const Tensor& x, double e) {
    return allocating(x, [&](const Tensor& out) { return pow_out(x, e, out); });
}
inline int pow_out(const Tensor& x, const Tensor& e, const Tensor& out) { return neuron_op_pow_tensor(&x.raw(), &e.raw(), &out.raw()); }
inline int pow_out(double base, const Tensor& e, const Tensor& out) { return neuron_op_pow_scalar_base(base, &e.raw(), &out.raw()); }
inline int clamp_out(const Tensor& x, const Scalar& lo, const Scalar& hi, const Tensor& out) {
    return neuron_op_clamp(&x.raw(), lo.raw(), hi.raw(), &out.raw());
}
inline Tensor clamp(const Tensor& x, const Scalar& lo, const Scalar& hi) {
    return allocating(x, [&](const Tensor& out) { return clamp_out(x, lo, hi, out); });
}

// ---- the generated side: wrappers, launchers, table ---------------------------

namespace detail {
// How each kernel argument type is read (the codegen's map, SPEC §11):
// Tensor, Scalar, int, float, long long / int64_t, double.
template <class A, class = void> struct next_arg {
    static_assert(always_false<A>::value,
                  "a kernel argument must be a Tensor, a Scalar, int, float, long long / int64_t or double");
};
template <> struct next_arg<Tensor> { static Tensor get() { return Tensor(customop_next_tensor()); } };
template <> struct next_arg<Scalar> { static Scalar get() { return Scalar(customop_next_scalar()); } };
template <> struct next_arg<int> { static int get() { return customop_next_int(); } };
template <> struct next_arg<float> { static float get() { return customop_next_float(); } };
template <> struct next_arg<double> { static double get() { return customop_next_double(); } };
template <> struct next_arg<int64_t> { static int64_t get() { return customop_next_int64(); } };
// The 64-bit integer type that is not int64_t (long long on LP64 hosts;
// on the 32-bit device int64_t is long long and this is not generated).
template <class A>
struct next_arg<A, enable_if_t<(is_same<A, long>::value || is_same<A, long long>::value) && !is_same<A, int64_t>::value && sizeof(A) == 8>> {
    static A get() { return static_cast<A>(customop_next_long_long()); }
};

// setup -> customop_next_* in declared order -> the op if every read
// succeeded, then return its tensor -> cleanup.
template <class R, class... A>
inline void run_wrapper(R (*op)(A...)) {
    static_assert(sizeof...(A) <= 10, "a kernel takes at most 10 arguments");
    static_assert(is_same<decay_t<R>, Tensor>::value, "a kernel returns exactly one tensor");
    customop_setup(true);
    {
        // List-initialisation evaluates the readers left to right.
        Tuple<decay_t<A>...> args{next_arg<decay_t<A>>::get()...};
        if (customop_status() == 0) {
            Tensor out = apply(op, args);
            customop_return_tensor(&out.raw());
        }
    }
    customop_cleanup();
}
}  // namespace detail

}  // namespace neuron

#define NEURON_OP_(fn)                                                                                 \
    extern "C" void fn##_wrapper(void) { ::neuron::detail::run_wrapper(&fn); }                      \
    extern "C" int fn##_stack_switch(void) { return switch_stack_or_call_wrapper(fn##_wrapper, NEURON_STACK_SIZE); }
#define NEURON_NAME_(fn) #fn,
#define NEURON_PTR_(fn) fn##_stack_switch,

#define NEURON_EACH_1_(m, a) m(a)
#define NEURON_EACH_2_(m, a, ...) m(a) NEURON_EACH_1_(m, __VA_ARGS__)
#define NEURON_EACH_3_(m, a, ...) m(a) NEURON_EACH_2_(m, __VA_ARGS__)
#define NEURON_EACH_4_(m, a, ...) m(a) NEURON_EACH_3_(m, __VA_ARGS__)
#define NEURON_EACH_5_(m, a, ...) m(a) NEURON_EACH_4_(m, __VA_ARGS__)
#define NEURON_EACH_6_(m, a, ...) m(a) NEURON_EACH_5_(m, __VA_ARGS__)
#define NEURON_EACH_7_(m, a, ...) m(a) NEURON_EACH_6_(m, __VA_ARGS__)
#define NEURON_EACH_8_(m, a, ...) m(a) NEURON_EACH_7_(m, __VA_ARGS__)
#define NEURON_EACH_9_(m, a, ...) m(a) NEURON_EACH_8_(m, __VA_ARGS__)
#define NEURON_EACH_10_(m, a, ...) m(a) NEURON_EACH_9_(m, __VA_ARGS__)
#define NEURON_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, N, ...) N
#define NEURON_EACH_(m, ...)                                                                           \
    NEURON_PICK_(__VA_ARGS__, NEURON_EACH_10_, NEURON_EACH_9_, NEURON_EACH_8_, NEURON_EACH_7_,         \
                 NEURON_EACH_6_, NEURON_EACH_5_, NEURON_EACH_4_, NEURON_EACH_3_, NEURON_EACH_2_,       \
                 NEURON_EACH_1_, )(m, __VA_ARGS__)

// The generated side of a custom-op library (1 to 10 ops, each a function
// `Tensor fn(args...)` — neuron::Tensor and torch::Tensor are the same
// class — with args among Tensor, Scalar (by value or const&), int,
// float, long long / int64_t, double): for each op `fn_wrapper` and
// `fn_stack_switch`, then `get_func_cnt`, `get_func_name`, `get_func_ptr`.
// Use once per library, at global scope, after the ops.
#define NEURON_CUSTOM_OPS(...)                                                                         \
    NEURON_EACH_(NEURON_OP_, __VA_ARGS__)                                                              \
    static const char* const neuron_op_names_[] = {NEURON_EACH_(NEURON_NAME_, __VA_ARGS__)};           \
    static int (*const neuron_op_ptrs_[])(void) = {NEURON_EACH_(NEURON_PTR_, __VA_ARGS__)};            \
    static_assert(sizeof(neuron_op_names_) / sizeof(neuron_op_names_[0]) <= 10, "at most 10 ops");     \
    extern "C" int32_t get_func_cnt(void) { return sizeof(neuron_op_names_) / sizeof(neuron_op_names_[0]); } \
    extern "C" const char* get_func_name(int32_t i) { return i >= 0 && i < get_func_cnt() ? neuron_op_names_[i] : nullptr; } \
    extern "C" int32_t (*get_func_ptr(int32_t i))(void) { return i >= 0 && i < get_func_cnt() ? neuron_op_ptrs_[i] : nullptr; }
