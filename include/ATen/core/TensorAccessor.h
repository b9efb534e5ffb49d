// The accessors a Tensor hands out (SPEC §8): per-element
// (TensorAccessor, acc[i][j]), read and write streams, and the TCM
// accessor. Every element access is a C export call (neuron_translate at
// the leaf, the stream and TCM exports).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "c10/core/ScalarType.h"
#include "c10/util/ArrayRef.h"
#include "neuron/detail/traits.hpp"
#include "neuroncustomop.h"

namespace at {

namespace detail {
template <class T>
constexpr uint8_t isa_dtype_of() {
    return c10::isa_dtype(c10::CppTypeToScalarType<T>::value);
}
template <class T>
constexpr bool is_arithmetic() {
    return neuron::detail::is_integral<T>::value || neuron::detail::is_floating_point<T>::value;
}
}  // namespace detail

// ---- per-element accessor -----------------------------------------------------

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
    // Half/BFloat16 elements read straight as float too (one conversion,
    // as from libtorch's Half&).
    template <class U = T, class = neuron::detail::enable_if_t<!detail::is_arithmetic<U>()>>
    operator float() const {
        return static_cast<float>(static_cast<T>(*this));
    }
    const ElementRef& operator=(T v) const {
        static_assert(Writable, "a const tensor's accessor is read-only");
        void* p = addr_ ? neuron_translate(ctx_, addr_) : nullptr;
        if (p) *static_cast<volatile T*>(p) = v;
        return *this;
    }
    const ElementRef& operator=(const ElementRef& o) const { return *this = static_cast<T>(o); }
    template <class V>
    const ElementRef& operator+=(const V& v) const { return *this = static_cast<T>(static_cast<T>(*this) + v); }
    template <class V>
    const ElementRef& operator-=(const V& v) const { return *this = static_cast<T>(static_cast<T>(*this) - v); }
    template <class V>
    const ElementRef& operator*=(const V& v) const { return *this = static_cast<T>(static_cast<T>(*this) * v); }
    template <class V>
    const ElementRef& operator/=(const V& v) const { return *this = static_cast<T>(static_cast<T>(*this) / v); }

private:
    uint64_t addr_;
    neuron_translation_ctx* ctx_;
};

// N dimensions left to index; acc[i] peels one (an out-of-range index
// yields address 0, which the leaf's translate refuses).
template <class T, size_t N, bool Writable = true>
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
    int64_t stride(size_t d) const { return d < N ? strides_[d] : 0; }
    c10::IntArrayRef sizes() const { return c10::IntArrayRef(sizes_, N); }
    c10::IntArrayRef strides() const { return c10::IntArrayRef(strides_, N); }

protected:
    const int64_t* sizes_;
    const int64_t* strides_;
    uint64_t addr_;
    neuron_translation_ctx* ctx_;
};

// The accessor a Tensor hands out: registered with the coherency enforcer
// for its lifetime. If the tensor is refused (wrong rank/type, or a
// coherency conflict under COHERENT), ok() is false and every access is
// refused (reads give 0, writes are dropped, the error is recorded).
template <class T, size_t N, bool Writable>
class Accessor : public TensorAccessor<T, N, Writable> {
public:
    explicit Accessor(const neuron_tensor& t) : TensorAccessor<T, N, Writable>(t_.sizes, t_.strides, 0, t.storage.ctx), t_(t) {
        ok_ = neuron_accessor_check(&t_, N, detail::isa_dtype_of<T>(), sizeof(T)) == 0 &&
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

// ---- stream accessors -----------------------------------------------------------

template <class T, uint32_t Mode>
class StreamAccessor {
public:
    explicit StreamAccessor(const neuron_tensor& t) : s_() { neuron_stream_open(&s_, &t, Mode, detail::isa_dtype_of<T>(), sizeof(T)); }
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
class TensorReadStreamAccessor : public StreamAccessor<T, 0> {
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
class TensorWriteStreamAccessor : public StreamAccessor<T, 1> {
public:
    using StreamAccessor<T, 1>::StreamAccessor;
    // Appends v; it reaches memory at close() or the end of scope.
    void write(T v) { neuron_stream_write(&this->s_, &v, sizeof(T)); }
};

// ---- TCM accessor -----------------------------------------------------------------

// Bulk copies between the tensor (indexed as if flattened) and TCM
// memory from tcm_malloc. A const tensor's is read-only.
template <bool ReadOnly>
class TensorTcmAccessor {
public:
    explicit TensorTcmAccessor(const neuron_tensor& t) : t_(t) {}
    template <class T>
    int tensor_to_tcm(T* tcm, uint64_t tensor_offset, uint64_t num_elem) const {
        return neuron_tensor_to_tcm(&t_, detail::isa_dtype_of<T>(), tcm, tensor_offset, num_elem);
    }
    template <class T>
    int tcm_to_tensor(const T* tcm, uint64_t tensor_offset, uint64_t num_elem) const {
        static_assert(!ReadOnly, "tcm_to_tensor: a const tensor's TCM accessor is read-only");
        return neuron_tcm_to_tensor(&t_, detail::isa_dtype_of<T>(), tcm, tensor_offset, num_elem);
    }

private:
    neuron_tensor t_;
};

}  // namespace at
