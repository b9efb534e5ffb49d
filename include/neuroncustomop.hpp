// libneuroncustomop: the C++ kernel API, a thin header over the C one
// (neuroncustomop.h). Hand-written; every operation calls a C export, so a
// C++ kernel and a Rust kernel run the same implementation.
//
//   neuron::Tensor                 a tensor argument or result
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
//   neuron::empty/full/zeros/ones/eye, abs ... exp (+ _out), pow, clamp,
//   add/sub (alpha), mul, div, bitwise_and/or/not, fill_
//   NEURON_CUSTOM_OPS(op1, op2, ...)  the wrappers, <fn>_stack_switch
//                                     launchers and the get_func_* table
//
// Element types: uint8_t int8_t int16_t int32_t int64_t float, and
// neuron::Half (FP16) / neuron::BFloat16 (uint16_t-backed, with float
// conversions). Failing calls return -1 (or a default value / an undefined
// Tensor) and record a code: neuron_last_error().
#pragma once

#include "neuroncustomop.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <tuple>
#include <type_traits>
#include <utility>

#ifndef NEURON_STACK_SIZE
#ifdef STACK_SIZE
#define NEURON_STACK_SIZE STACK_SIZE
#else
#define NEURON_STACK_SIZE 0 /* the default, 4196 bytes */
#endif
#endif

static_assert(sizeof(neuron_tensor) == 168, "neuron_tensor is 168 bytes");
static_assert(sizeof(NeuronStream) == 48, "NeuronStream is 48 bytes");
static_assert(sizeof(NeuronScalar) == 24, "NeuronScalar is 24 bytes");

// neuron_memcpy in both directions (C has two names; C++ overloads).
inline int neuron_memcpy(void* dst, uint64_t src, uint32_t n) { return neuron_memcpy_from_soc(dst, src, n); }
inline int neuron_memcpy(uint64_t dst, const void* src, uint32_t n) { return neuron_memcpy_to_soc(dst, src, n); }

// printf into the device ring (one entry per call, up to 255 bytes).
inline void neuron_printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void neuron_printf(const char* fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    neuron_print(buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
}

namespace neuron {

// ---- element types --------------------------------------------------------

// IEEE binary16, stored as its bits.
struct Half {
    uint16_t bits = 0;
    Half() = default;
    Half(float f) : bits(from_float(f)) {}
    operator float() const { return to_float(bits); }
    static float to_float(uint16_t h) {
        const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
        const uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
        if (exp == 0) {
            const float v = static_cast<float>(man) * (1.0f / 16777216.0f);
            return sign ? -v : v;
        }
        const uint32_t bits = exp == 31 ? (sign | 0x7f800000u | (man << 13)) : (sign | ((exp + 112) << 23) | (man << 13));
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    // Round to nearest even.
    static uint16_t from_float(float f) {
        uint32_t x;
        memcpy(&x, &f, 4);
        const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
        const uint32_t ax = x & 0x7fffffffu;
        if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00 : 0x7c00);
        if (ax >= 0x477ff000u) return sign | 0x7c00;  // rounds to inf
        if (ax < 0x38800000u) {                       // subnormal or zero
            if (ax < 0x33000000u) return sign;
            const uint32_t e = ax >> 23, m = (ax & 0x7fffff) | 0x800000;
            const uint32_t shift = 126 - e;  // 14..24
            uint32_t r = m >> shift;
            const uint32_t rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
            if (rem > halfway || (rem == halfway && (r & 1))) ++r;
            return sign | static_cast<uint16_t>(r);
        }
        uint32_t r = ((ax - 0x38000000u) >> 13);
        const uint32_t rem = ax & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) ++r;
        return sign | static_cast<uint16_t>(r);
    }
};

// bfloat16, stored as its bits (the top half of an f32).
struct BFloat16 {
    uint16_t bits = 0;
    BFloat16() = default;
    BFloat16(float f) : bits(from_float(f)) {}
    operator float() const {
        const uint32_t x = static_cast<uint32_t>(bits) << 16;
        float f;
        memcpy(&f, &x, 4);
        return f;
    }
    static uint16_t from_float(float f) {
        uint32_t x;
        memcpy(&x, &f, 4);
        if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
        return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
    }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit element types");

template <class T> struct dtype_of;
template <> struct dtype_of<uint8_t> { static constexpr uint8_t value = DTYPE_UINT8; };
template <> struct dtype_of<int8_t> { static constexpr uint8_t value = DTYPE_INT8; };
template <> struct dtype_of<int16_t> { static constexpr uint8_t value = DTYPE_INT16; };
template <> struct dtype_of<int32_t> { static constexpr uint8_t value = DTYPE_INT32; };
template <> struct dtype_of<int64_t> { static constexpr uint8_t value = DTYPE_INT64; };
template <> struct dtype_of<Half> { static constexpr uint8_t value = DTYPE_FP16; };
template <> struct dtype_of<BFloat16> { static constexpr uint8_t value = DTYPE_BFLOAT16; };
template <> struct dtype_of<float> { static constexpr uint8_t value = DTYPE_FP32; };

// ---- memory ---------------------------------------------------------------

inline void* tcm_malloc(size_t n) { return ::tcm_malloc(n); }
inline void tcm_free(void* p) { ::tcm_free(p); }

// ---- per-element accessor ---------------------------------------------------

// One element: reading or writing it is one translate and one volatile
// access; no pointer is kept (a later translate may move the window).
template <class T, bool Writable>
class ElementRef {
public:
    ElementRef(uint64_t addr, neuron_translation_ctx* ctx) : addr_(addr), ctx_(ctx) {}
    operator T() const {
        void* p = addr_ ? neuron_translate(ctx_, addr_) : nullptr;
        return p ? *static_cast<volatile T*>(p) : T{};
    }
    const ElementRef& operator=(T v) const {
        static_assert(Writable, "a const tensor's accessor is read-only");
        void* p = addr_ ? neuron_translate(ctx_, addr_) : nullptr;
        if (p) *static_cast<volatile T*>(p) = v;
        return *this;
    }
    const ElementRef& operator=(const ElementRef& o) const { return *this = static_cast<T>(o); }

private:
    uint64_t addr_;
    neuron_translation_ctx* ctx_;
};

// N dimensions left to index; acc[i] peels one (an out-of-range index
// yields address 0, which the leaf's translate refuses).
template <class T, size_t N, bool Writable>
class TensorAccessor {
public:
    TensorAccessor(const int64_t* sizes, const int64_t* strides, uint64_t addr, neuron_translation_ctx* ctx)
        : sizes_(sizes), strides_(strides), addr_(addr), ctx_(ctx) {}
    auto operator[](int64_t i) const {
        const uint64_t a = neuron_index_peel(addr_, sizes_[0], strides_[0], i, sizeof(T));
        if constexpr (N == 1) {
            return ElementRef<T, Writable>(a, ctx_);
        } else {
            return TensorAccessor<T, N - 1, Writable>(sizes_ + 1, strides_ + 1, a, ctx_);
        }
    }
    int64_t size(size_t d) const { return d < N ? sizes_[d] : 0; }

protected:
    const int64_t* sizes_;
    const int64_t* strides_;
    uint64_t addr_;
    neuron_translation_ctx* ctx_;
};

// The accessor a Tensor hands out: registered with the coherency enforcer
// for its lifetime. If the tensor is refused (wrong rank/type, or a
// coherency conflict under COHERENT), ok() is false and every access is
// refused.
template <class T, size_t N, bool Writable>
class Accessor : public TensorAccessor<T, N, Writable> {
public:
    explicit Accessor(const neuron_tensor& t)
        : TensorAccessor<T, N, Writable>(t_.sizes, t_.strides, 0, t.storage.ctx), t_(t) {
        ok_ = neuron_accessor_check(&t_, N, dtype_of<T>::value, sizeof(T)) == 0 &&
              neuron_accessor_register(&t_, ACCESSOR_KIND_UNBUFFERED) == 0;
        if (ok_) this->addr_ = t_.storage.addr;
    }
    Accessor(const Accessor&) = delete;
    Accessor& operator=(const Accessor&) = delete;
    ~Accessor() {
        if (ok_) neuron_accessor_release(&t_, ACCESSOR_KIND_UNBUFFERED);
    }
    bool ok() const { return ok_; }

private:
    neuron_tensor t_;
    bool ok_ = false;
};

// ---- stream accessors -------------------------------------------------------

template <class T, uint32_t Mode>
class StreamAccessor {
public:
    explicit StreamAccessor(const neuron_tensor& t) {
        memset(&s_, 0, sizeof s_);
        neuron_stream_open(&s_, &t, Mode, dtype_of<T>::value, sizeof(T));
    }
    StreamAccessor(const StreamAccessor&) = delete;
    StreamAccessor& operator=(const StreamAccessor&) = delete;
    ~StreamAccessor() { close(); }
    // Flushes (write streams), frees the buffer, deregisters. 0 or -1.
    int close() { return neuron_stream_close(&s_); }
    bool ok() const { return s_.open == 1; }
    bool buffered() const { return s_.slot >= 0; }

protected:
    NeuronStream s_;
};

template <class T>
class ReadStreamAccessor : public StreamAccessor<T, 0> {
public:
    using StreamAccessor<T, 0>::StreamAccessor;
    // The next element (T{} past the end or on error).
    T read() {
        T v{};
        neuron_stream_read(&this->s_, &v, sizeof(T));
        return v;
    }
};

template <class T>
class WriteStreamAccessor : public StreamAccessor<T, 1> {
public:
    using StreamAccessor<T, 1>::StreamAccessor;
    // Appends v. 0 or -1.
    int write(T v) { return neuron_stream_write(&this->s_, &v, sizeof(T)); }
};

// ---- TCM accessor -----------------------------------------------------------

class TcmAccessor {
public:
    explicit TcmAccessor(const neuron_tensor& t) : t_(t) {}
    template <class T>
    int tensor_to_tcm(T* tcm, uint64_t flat_offset, uint64_t n) const {
        return neuron_tensor_to_tcm(&t_, dtype_of<T>::value, tcm, flat_offset, n);
    }
    template <class T>
    int tcm_to_tensor(const T* tcm, uint64_t flat_offset, uint64_t n) const {
        return neuron_tcm_to_tensor(&t_, dtype_of<T>::value, tcm, flat_offset, n);
    }

private:
    neuron_tensor t_;
};

// ---- Tensor -----------------------------------------------------------------

class Tensor {
public:
    Tensor() { memset(&t_, 0, sizeof t_); }
    Tensor(const neuron_tensor& t) : t_(t) {}
    Tensor(const Tensor& o) : t_(o.t_) {}  // a view: never owns
    Tensor(Tensor&& o) : t_(o.t_), owned_(o.owned_) { o.owned_ = false; }
    Tensor& operator=(const Tensor& o) {
        if (this != &o) {
            release();
            t_ = o.t_;
        }
        return *this;
    }
    Tensor& operator=(Tensor&& o) {
        if (this != &o) {
            release();
            t_ = o.t_;
            owned_ = o.owned_;
            o.owned_ = false;
        }
        return *this;
    }
    ~Tensor() { release(); }

    // A tensor whose HBM storage this object frees (factories, results).
    static Tensor adopt(const neuron_tensor& t) {
        Tensor r(t);
        r.owned_ = true;
        return r;
    }

    const neuron_tensor& raw() const { return t_; }
    bool defined() const { return t_.storage.addr != 0; }
    int64_t numel() const { return t_.numel; }
    int64_t nbytes() const { return t_.nbytes; }
    int64_t dim() const { return t_.num_dim; }
    int64_t size(int64_t d) const { return d >= 0 && d < t_.num_dim ? t_.sizes[d] : 0; }
    int64_t stride(int64_t d) const { return d >= 0 && d < t_.num_dim ? t_.strides[d] : 0; }
    uint8_t dtype() const { return t_.dtype; }
    uint64_t data_addr() const { return t_.storage.addr; }

    template <class T, size_t N>
    Accessor<T, N, true> accessor() { return Accessor<T, N, true>(t_); }
    template <class T, size_t N>
    Accessor<T, N, false> accessor() const { return Accessor<T, N, false>(t_); }
    template <class T>
    ReadStreamAccessor<T> read_stream_accessor() const { return ReadStreamAccessor<T>(t_); }
    template <class T>
    WriteStreamAccessor<T> write_stream_accessor() const { return WriteStreamAccessor<T>(t_); }
    TcmAccessor tcm_accessor() const { return TcmAccessor(t_); }

    int get_accessor_coherence_policy() const { return neuron_get_accessor_coherence_policy(&t_); }
    int set_accessor_coherence_policy(int policy) const { return neuron_set_accessor_coherence_policy(&t_, static_cast<uint32_t>(policy)); }

private:
    void release() {
        if (owned_) neuron_tensor_free(&t_);
        owned_ = false;
    }
    neuron_tensor t_;
    bool owned_ = false;
};

// A scalar argument / operand: an integer or a double.
struct Scalar {
    NeuronScalar s;
    Scalar(const NeuronScalar& v) : s(v) {}
    Scalar(int v) : Scalar(static_cast<int64_t>(v)) {}
    Scalar(long v) : s{static_cast<int64_t>(v), static_cast<double>(v), 0, 0} {}
    Scalar(long long v) : s{static_cast<int64_t>(v), static_cast<double>(v), 0, 0} {}
    Scalar(double v) : s{static_cast<int64_t>(v), v, 0, 1} {}
    Scalar(float v) : Scalar(static_cast<double>(v)) {}
    bool is_floating_point() const { return s.is_float != 0; }
    int64_t to_long() const { return s.i; }
    double to_double() const { return s.f; }
};

// get_dst_tensor(): the output, to write in place (multicore kernels).
inline Tensor get_dst_tensor() { return Tensor(::get_dst_tensor()); }
inline int get_cpu_id() { return ::get_cpu_id(); }
inline int get_cpu_count() { return ::get_cpu_count(); }

// ---- tensor operations ------------------------------------------------------

template <size_t K>
inline Tensor empty(const int64_t (&shape)[K], uint8_t dtype) {
    neuron_tensor t;
    memset(&t, 0, sizeof t);
    if (neuron_tensor_empty(dtype, shape, K, &t) != 0) return Tensor();
    return Tensor::adopt(t);
}
inline Tensor empty_like(const Tensor& x) {
    neuron_tensor t;
    memset(&t, 0, sizeof t);
    if (neuron_tensor_empty(x.dtype(), x.raw().sizes, static_cast<uint32_t>(x.dim()), &t) != 0) return Tensor();
    return Tensor::adopt(t);
}
inline int fill_(const Tensor& t, Scalar v) { return neuron_op_fill(&t.raw(), v.s); }
template <size_t K>
inline Tensor full(const int64_t (&shape)[K], Scalar v, uint8_t dtype) {
    Tensor t = empty(shape, dtype);
    if (t.defined() && fill_(t, v) != 0) return Tensor();
    return t;
}
template <size_t K>
inline Tensor zeros(const int64_t (&shape)[K], uint8_t dtype) { return full(shape, 0, dtype); }
template <size_t K>
inline Tensor ones(const int64_t (&shape)[K], uint8_t dtype) { return full(shape, 1, dtype); }
inline Tensor eye(int64_t n, int64_t m, uint8_t dtype) {
    const int64_t shape[2] = {n, m};
    Tensor t = empty(shape, dtype);
    if (t.defined() && neuron_op_eye(&t.raw()) != 0) return Tensor();
    return t;
}

namespace detail {
inline Tensor unary(uint32_t op, const Tensor& x) {
    Tensor out = empty_like(x);
    if (out.defined() && neuron_op_unary(op, &x.raw(), &out.raw()) != 0) return Tensor();
    return out;
}
inline Tensor binary(uint32_t op, const Tensor& a, const Tensor& b, Scalar alpha) {
    Tensor out = empty_like(a);
    if (out.defined() && neuron_op_binary(op, &a.raw(), &b.raw(), alpha.s, &out.raw()) != 0) return Tensor();
    return out;
}
}  // namespace detail

#define NEURON_UNARY_OP_(name, code)                                                                  \
    inline Tensor name(const Tensor& x) { return detail::unary(code, x); }                            \
    inline int name##_out(const Tensor& x, const Tensor& out) { return neuron_op_unary(code, &x.raw(), &out.raw()); }
NEURON_UNARY_OP_(abs, 0)
NEURON_UNARY_OP_(ceil, 1)
NEURON_UNARY_OP_(floor, 2)
NEURON_UNARY_OP_(sin, 3)
NEURON_UNARY_OP_(cos, 4)
NEURON_UNARY_OP_(tan, 5)
NEURON_UNARY_OP_(log, 6)
NEURON_UNARY_OP_(log2, 7)
NEURON_UNARY_OP_(log10, 8)
NEURON_UNARY_OP_(exp, 9)
NEURON_UNARY_OP_(bitwise_not, 10)
#undef NEURON_UNARY_OP_

inline Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1) { return detail::binary(0, a, b, alpha); }
inline int add_out(const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out) { return neuron_op_binary(0, &a.raw(), &b.raw(), alpha.s, &out.raw()); }
inline Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1) { return detail::binary(1, a, b, alpha); }
inline int sub_out(const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out) { return neuron_op_binary(1, &a.raw(), &b.raw(), alpha.s, &out.raw()); }
#define NEURON_BINARY_OP_(name, code)                                                                 \
    inline Tensor name(const Tensor& a, const Tensor& b) { return detail::binary(code, a, b, 1); }    \
    inline int name##_out(const Tensor& a, const Tensor& b, const Tensor& out) { return neuron_op_binary(code, &a.raw(), &b.raw(), Scalar(1).s, &out.raw()); }
NEURON_BINARY_OP_(mul, 2)
NEURON_BINARY_OP_(div, 3)
NEURON_BINARY_OP_(bitwise_and, 4)
NEURON_BINARY_OP_(bitwise_or, 5)
#undef NEURON_BINARY_OP_

inline int pow_out(const Tensor& x, double e, const Tensor& out) { return neuron_op_pow(&x.raw(), e, &out.raw()); }
inline Tensor pow(const Tensor& x, double e) {
    Tensor out = empty_like(x);
    if (out.defined() && pow_out(x, e, out) != 0) return Tensor();
    return out;
}
inline int clamp_out(const Tensor& x, Scalar lo, Scalar hi, const Tensor& out) { return neuron_op_clamp(&x.raw(), lo.s, hi.s, &out.raw()); }
inline Tensor clamp(const Tensor& x, Scalar lo, Scalar hi) {
    Tensor out = empty_like(x);
    if (out.defined() && clamp_out(x, lo, hi, out) != 0) return Tensor();
    return out;
}

// ---- the generated side: wrappers, launchers, table ---------------------------

namespace detail {
template <class A> struct next_arg;
template <> struct next_arg<Tensor> { static Tensor get() { return Tensor(customop_next_tensor()); } };
template <> struct next_arg<Scalar> { static Scalar get() { return Scalar(customop_next_scalar()); } };
template <> struct next_arg<int> { static int get() { return customop_next_int(); } };
template <> struct next_arg<float> { static float get() { return customop_next_float(); } };
template <> struct next_arg<long> { static long get() { return static_cast<long>(customop_next_long_long()); } };
template <> struct next_arg<long long> { static long long get() { return customop_next_long_long(); } };
template <> struct next_arg<double> { static double get() { return customop_next_double(); } };

// setup -> customop_next_* in declared order -> the op if every read
// succeeded, then return its tensor -> cleanup.
template <class R, class... A>
inline void run_wrapper(R (*op)(A...)) {
    customop_setup(true);
    // Braced initialisation evaluates the readers left to right.
    std::tuple<std::decay_t<A>...> args{next_arg<std::decay_t<A>>::get()...};
    if (customop_status() == 0) {
        Tensor out = std::apply(op, args);
        customop_return_tensor(&out.raw());
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
// `neuron::Tensor fn(args...)` with args among Tensor, Scalar, int, float,
// long long / int64_t, double): for each op `fn_wrapper` and
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
