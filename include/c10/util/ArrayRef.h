// c10::ArrayRef<T> / IntArrayRef: a read-only list of values, as a view
// (of a tensor's sizes, a C array, any container with data() and size())
// or, for a braced list such as `{2, 3}`, holding up to 8 integers itself
// (a tensor has at most 8 dimensions). Holding them means a braced list
// needs no std::initializer_list (not available freestanding) and an
// `IntArrayRef s = {2, 3};` does not dangle.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "neuron/detail/traits.hpp"

namespace c10 {

template <class T>
class ArrayRef {
public:
    static constexpr size_t kInline = 8;

    constexpr ArrayRef() : data_(nullptr), size_(0) {}
    constexpr ArrayRef(const T* data, size_t n) : data_(data), size_(n) {}
    constexpr ArrayRef(const T* begin, const T* end) : data_(begin), size_(static_cast<size_t>(end - begin)) {}
    template <size_t N>
    constexpr ArrayRef(const T (&a)[N]) : data_(a), size_(N) {}
    // std::vector, std::array, ...: anything with data() and size().
    template <class C, class = decltype(static_cast<const T*>(neuron::detail::declval<const C&>().data())),
              class = decltype(static_cast<size_t>(neuron::detail::declval<const C&>().size())),
              class = neuron::detail::enable_if_t<!neuron::detail::is_same<neuron::detail::decay_t<C>, ArrayRef>::value>>
    ArrayRef(const C& c) : data_(c.data()), size_(static_cast<size_t>(c.size())) {}
    // A braced list of 1 to 8 integers: `{2, 3}`, `{n}` (any integer types).
    template <class... I, class = neuron::detail::enable_if_t<neuron::detail::is_integral<T>::value && (sizeof...(I) >= 1) &&
                                                              (sizeof...(I) <= kInline) && neuron::detail::all_integral<I...>::value>>
    ArrayRef(I... v) : own_{static_cast<T>(v)...}, data_(own_), size_(sizeof...(I)) {}

    ArrayRef(const ArrayRef& o) { copy_from(o); }
    ArrayRef& operator=(const ArrayRef& o) {
        if (this != &o) copy_from(o);
        return *this;
    }

    constexpr const T* data() const { return data_; }
    constexpr size_t size() const { return size_; }
    constexpr bool empty() const { return size_ == 0; }
    constexpr const T* begin() const { return data_; }
    constexpr const T* end() const { return data_ + size_; }
    constexpr const T& operator[](size_t i) const { return data_[i]; }
    constexpr const T& front() const { return data_[0]; }
    constexpr const T& back() const { return data_[size_ - 1]; }
    bool equals(const ArrayRef& o) const {
        if (size_ != o.size_) return false;
        for (size_t i = 0; i < size_; ++i)
            if (!(data_[i] == o.data_[i])) return false;
        return true;
    }
    friend bool operator==(const ArrayRef& a, const ArrayRef& b) { return a.equals(b); }
    friend bool operator!=(const ArrayRef& a, const ArrayRef& b) { return !a.equals(b); }

private:
    void copy_from(const ArrayRef& o) {
        size_ = o.size_;
        if (o.data_ == o.own_) {
            for (size_t i = 0; i < o.size_; ++i) own_[i] = o.own_[i];
            data_ = own_;
        } else {
            data_ = o.data_;
        }
    }
    T own_[kInline] = {};
    const T* data_;
    size_t size_;
};

using IntArrayRef = ArrayRef<int64_t>;

}  // namespace c10
