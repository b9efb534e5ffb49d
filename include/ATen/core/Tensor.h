// at::Tensor (torch::Tensor, neuron::Tensor): a kernel's tensor, over the
// runtime's 168-byte neuron_tensor descriptor, with the vendor's methods
// and accessors (SPEC §8, §11). Every access calls a C export.
//
// Copies and assignments are views of the same storage, as in libtorch. A
// tensor the kernel made (a factory, an op's result) owns its HBM storage
// jointly with its copies: the copies are linked in a ring and the last
// one to go frees the storage, so a copy may outlive the original. An
// argument tensor or get_dst_tensor() is a view the kernel never frees.
//
// What the vendor's Tensor does not have is a compile error: autograd
// (backward, grad, requires_grad_), devices (to, cuda, cpu), data_ptr()
// (HBM is not directly addressable: q7_data_ptr() or an accessor), item(),
// and every aten method not listed here.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "c10/core/Scalar.h"
#include "c10/core/ScalarType.h"
#include "c10/util/ArrayRef.h"
#include "neuron/detail/traits.hpp"
#include "neuroncustomop.h"

static_assert(sizeof(neuron_tensor) == 168, "neuron_tensor is 168 bytes");
static_assert(sizeof(NeuronStream) == 48, "NeuronStream is 48 bytes");
static_assert(sizeof(NeuronScalar) == 24, "NeuronScalar is 24 bytes");

namespace at {

// The coherence policy of a tensor's accessors (values 0, 1, 2 as the
// runtime's CoherencePolicy).
struct CoherencyEnforcer {
    enum Policy : int {
        // Potentially incoherent accessor combinations are refused.
        COHERENT = COHERENCE_POLICY_COHERENT,
        // Admitted with a warning.
        INCOHERENT_VERBOSE = COHERENCE_POLICY_INCOHERENT_VERBOSE,
        // Admitted silently.
        INCOHERENT_QUIET = COHERENCE_POLICY_INCOHERENT_QUIET,
    };
};

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

// ---- Tensor -------------------------------------------------------------------------

class Tensor {
public:
    // An undefined tensor.
    Tensor() : t_(), prev_(this), next_(this) {}
    // A view of a tensor the kernel does not own (an argument, the
    // destination): never freed from here.
    Tensor(const neuron_tensor& t) : t_(t), prev_(this), next_(this) {}
    Tensor(const Tensor& o) : t_(o.t_), prev_(this), next_(this) { join(o); }
    Tensor(Tensor&& o) noexcept : t_(o.t_), prev_(this), next_(this) { take(o); }
    Tensor& operator=(const Tensor& o) {
        if (this != &o) {
            release();
            t_ = o.t_;
            join(o);
        }
        return *this;
    }
    Tensor& operator=(Tensor&& o) noexcept {
        if (this != &o) {
            release();
            t_ = o.t_;
            take(o);
        }
        return *this;
    }
    ~Tensor() { release(); }

    // A tensor whose HBM storage the kernel made with neuron_tensor_empty:
    // freed with the last copy.
    static Tensor adopt(const neuron_tensor& t) {
        Tensor r(t);
        r.owned_ = true;
        return r;
    }

    // The runtime's descriptor (for the C exports and the generated code).
    const neuron_tensor& raw() const { return t_; }

    bool defined() const { return t_.storage.addr != 0; }
    int64_t numel() const { return t_.numel; }
    int64_t dim() const { return t_.num_dim; }
    int64_t ndimension() const { return t_.num_dim; }
    // Dimension d; negative d counts from the end. 0 out of range.
    int64_t size(int64_t d) const {
        const int64_t k = d < 0 ? d + t_.num_dim : d;
        return k >= 0 && k < t_.num_dim ? t_.sizes[k] : 0;
    }
    int64_t stride(int64_t d) const {
        const int64_t k = d < 0 ? d + t_.num_dim : d;
        return k >= 0 && k < t_.num_dim ? t_.strides[k] : 0;
    }
    c10::IntArrayRef sizes() const { return c10::IntArrayRef(t_.sizes, t_.num_dim); }
    c10::IntArrayRef strides() const { return c10::IntArrayRef(t_.strides, t_.num_dim); }
    c10::ScalarType scalar_type() const { return c10::scalar_type_of_isa(t_.dtype); }
    c10::TypeMeta dtype() const { return c10::TypeMeta(scalar_type()); }
    int64_t element_size() const { return t_.elem_size; }
    int64_t itemsize() const { return t_.elem_size; }
    int64_t nbytes() const { return t_.nbytes; }
    bool is_contiguous() const {
        int64_t expect = 1;
        for (int64_t d = t_.num_dim - 1; d >= 0; --d) {
            if (t_.sizes[d] != 1 && t_.strides[d] != expect) return false;
            expect *= t_.sizes[d];
        }
        return true;
    }
    // The storage as the kernel holds it: SoC address and the core's
    // translation context (SPEC §3).
    Q7PtrType q7_data_ptr() const { return t_.storage; }
    // The ISA dtype code and storage address (the neuron:: API).
    uint8_t isa_dtype() const { return t_.dtype; }
    uint64_t data_addr() const { return t_.storage.addr; }

    // Accessors of a temporary are refused (= delete), as in libtorch: the
    // temporary's storage may be freed before the accessor is used.
    template <class T, size_t N>
    Accessor<T, N, true> accessor() & { return Accessor<T, N, true>(t_); }
    template <class T, size_t N>
    Accessor<T, N, false> accessor() const& { return Accessor<T, N, false>(t_); }
    template <class T, size_t N>
    Accessor<T, N, true> accessor() && = delete;
    template <class T>
    TensorReadStreamAccessor<T> read_stream_accessor() const& { return TensorReadStreamAccessor<T>(t_); }
    template <class T>
    TensorReadStreamAccessor<T> read_stream_accessor() && = delete;
    template <class T>
    TensorWriteStreamAccessor<T> write_stream_accessor() const& { return TensorWriteStreamAccessor<T>(t_); }
    template <class T>
    TensorWriteStreamAccessor<T> write_stream_accessor() && = delete;
    TensorTcmAccessor<false> tcm_accessor() & { return TensorTcmAccessor<false>(t_); }
    TensorTcmAccessor<true> tcm_accessor() const& { return TensorTcmAccessor<true>(t_); }
    TensorTcmAccessor<false> tcm_accessor() && = delete;

    CoherencyEnforcer::Policy get_accessor_coherence_policy() const {
        return static_cast<CoherencyEnforcer::Policy>(neuron_get_accessor_coherence_policy(&t_));
    }
    // 0, or -1 with the error recorded (a policy outside the three).
    int set_accessor_coherence_policy(CoherencyEnforcer::Policy policy) const {
        return neuron_set_accessor_coherence_policy(&t_, static_cast<uint32_t>(policy));
    }
    int set_accessor_coherence_policy(int policy) const { return neuron_set_accessor_coherence_policy(&t_, static_cast<uint32_t>(policy)); }

    // Every element = value (converted to the dtype). A failure fails
    // the op (see ATen/Functions.h).
    const Tensor& fill_(const c10::Scalar& value) const {
        if (neuron_op_fill(&t_, value.raw()) != 0) neuron_fail_invocation();
        return *this;
    }

    // ---- what libtorch has and this library does not: compile errors ----
    template <class T = void>
    T* data_ptr() const {
        static_assert(neuron::detail::always_false<T>::value, "Tensor::data_ptr(): HBM is not directly addressable on the core; use q7_data_ptr() or an accessor");
        return nullptr;
    }
    template <class... A>
    void backward(A&&...) const {
        static_assert(neuron::detail::always_false<A...>::value, "Tensor::backward(): autograd is not available in a custom op");
    }
    template <class... A>
    Tensor grad(A&&...) const {
        static_assert(neuron::detail::always_false<A...>::value, "Tensor::grad(): autograd is not available in a custom op");
        return Tensor();
    }
    template <class... A>
    const Tensor& requires_grad_(A&&...) const {
        static_assert(neuron::detail::always_false<A...>::value, "Tensor::requires_grad_(): autograd is not available in a custom op");
        return *this;
    }
    template <class... A>
    Tensor to(A&&...) const {
        static_assert(neuron::detail::always_false<A...>::value, "Tensor::to(): there are no devices or dtype conversions in a custom op");
        return Tensor();
    }
    template <class... A>
    Tensor cuda(A&&...) const {
        static_assert(neuron::detail::always_false<A...>::value, "Tensor::cuda(): there are no devices in a custom op");
        return Tensor();
    }
    template <class... A>
    Tensor cpu(A&&...) const {
        static_assert(neuron::detail::always_false<A...>::value, "Tensor::cpu(): there are no devices in a custom op");
        return Tensor();
    }
    template <class... A>
    c10::Scalar item(A&&...) const {
        static_assert(neuron::detail::always_false<A...>::value, "Tensor::item(): read the element through an accessor");
        return c10::Scalar();
    }

private:
    // Joins o's owners (a view: nothing to join).
    void join(const Tensor& o) {
        owned_ = o.owned_;
        if (!owned_) return;
        prev_ = const_cast<Tensor*>(&o);
        next_ = o.next_;
        o.next_->prev_ = this;
        o.next_ = this;
    }
    // Takes o's place among its owners; o becomes undefined.
    void take(Tensor& o) {
        owned_ = o.owned_;
        if (owned_ && o.next_ != &o) {
            prev_ = o.prev_;
            next_ = o.next_;
            prev_->next_ = this;
            next_->prev_ = this;
        }
        o.t_ = neuron_tensor();
        o.owned_ = false;
        o.prev_ = o.next_ = &o;
    }
    // Leaves the owners; the last one frees the storage.
    void release() {
        if (owned_) {
            if (next_ == this) {
                neuron_tensor_free(&t_);
            } else {
                prev_->next_ = next_;
                next_->prev_ = prev_;
            }
        }
        owned_ = false;
        prev_ = next_ = this;
    }

    neuron_tensor t_;
    mutable Tensor* prev_;
    mutable Tensor* next_;
    bool owned_ = false;
};

}  // namespace at
