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

#include "ATen/core/CoherencyEnforcer.h"
#include "ATen/core/TensorAccessor.h"
#include "c10/core/Scalar.h"
#include "c10/core/ScalarType.h"
#include "c10/util/ArrayRef.h"
#include "neuron/detail/traits.hpp"
#include "neuroncustomop.h"

static_assert(sizeof(neuron_tensor) == 168, "neuron_tensor is 168 bytes");
static_assert(sizeof(NeuronStream) == 48, "NeuronStream is 48 bytes");
static_assert(sizeof(NeuronScalar) == 24, "NeuronScalar is 24 bytes");

namespace at {

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
    // Dimension d; negative d counts from the end. Out of range (where
    // libtorch throws): error 96 recorded, 0.
    int64_t size(int64_t d) const {
        const int64_t k = d < 0 ? d + t_.num_dim : d;
        return k >= 0 && k < t_.num_dim ? t_.sizes[k] : neuron_dim_out_of_range();
    }
    int64_t stride(int64_t d) const {
        const int64_t k = d < 0 ? d + t_.num_dim : d;
        return k >= 0 && k < t_.num_dim ? t_.strides[k] : neuron_dim_out_of_range();
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
    // temporary's storage may be freed before the accessor is used. The
    // accessor's third parameter is the vendor's `read_only`: a const
    // tensor's is `TensorAccessor<T, N, true>`.
    template <class T, size_t N>
    Accessor<T, N, false> accessor(NEURON_CALLER_PARAMS) & { return Accessor<T, N, false>(t_ NEURON_CALLER_ARGS_TAIL); }
    template <class T, size_t N>
    Accessor<T, N, true> accessor(NEURON_CALLER_PARAMS) const& { return Accessor<T, N, true>(t_ NEURON_CALLER_ARGS_TAIL); }
    template <class T, size_t N>
    Accessor<T, N, false> accessor(NEURON_CALLER_PARAMS) && = delete;
    template <class T>
    TensorReadStreamAccessor<T> read_stream_accessor() const& { return TensorReadStreamAccessor<T>(t_); }
    template <class T>
    TensorReadStreamAccessor<T> read_stream_accessor() && = delete;
    template <class T>
    TensorWriteStreamAccessor<T> write_stream_accessor() & { return TensorWriteStreamAccessor<T>(t_); }
    // A const tensor is read-only, as in the vendor's library (which has
    // only the `&` overload).
    template <class T>
    TensorWriteStreamAccessor<T> write_stream_accessor() const& = delete;
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
    // `Tensor& fill_(...) const`, as in the vendor's library and libtorch:
    // the handle is const, the data it names is written.
    Tensor& fill_(const c10::Scalar& value) const {
        if (neuron_op_fill(&t_, value.raw()) != 0) neuron_fail_invocation();
        return const_cast<Tensor&>(*this);
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
