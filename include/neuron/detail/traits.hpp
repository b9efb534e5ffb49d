// The few type traits the kernel-side headers need, written here because
// the device build has no C++ standard library (<type_traits>, <utility>
// are not available freestanding with -nostdinc++).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace neuron {
namespace detail {

template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { using type = T; };
template <bool B, class T = void> using enable_if_t = typename enable_if<B, T>::type;

template <class A, class B> struct is_same { static constexpr bool value = false; };
template <class A> struct is_same<A, A> { static constexpr bool value = true; };

template <class T> struct remove_reference { using type = T; };
template <class T> struct remove_reference<T&> { using type = T; };
template <class T> struct remove_reference<T&&> { using type = T; };
template <class T> struct remove_cv { using type = T; };
template <class T> struct remove_cv<const T> { using type = T; };
template <class T> struct remove_cv<volatile T> { using type = T; };
template <class T> struct remove_cv<const volatile T> { using type = T; };
// What a by-value parameter of a `const T&` argument is (std::decay
// without the array/function cases, which kernel arguments never are).
template <class T> using decay_t = typename remove_cv<typename remove_reference<T>::type>::type;

template <class T> struct is_integral_ { static constexpr bool value = false; };
#define NEURON_INTEGRAL_(T) \
    template <> struct is_integral_<T> { static constexpr bool value = true; };
NEURON_INTEGRAL_(bool)
NEURON_INTEGRAL_(char)
NEURON_INTEGRAL_(signed char)
NEURON_INTEGRAL_(unsigned char)
NEURON_INTEGRAL_(short)
NEURON_INTEGRAL_(unsigned short)
NEURON_INTEGRAL_(int)
NEURON_INTEGRAL_(unsigned int)
NEURON_INTEGRAL_(long)
NEURON_INTEGRAL_(unsigned long)
NEURON_INTEGRAL_(long long)
NEURON_INTEGRAL_(unsigned long long)
NEURON_INTEGRAL_(char16_t)
NEURON_INTEGRAL_(char32_t)
NEURON_INTEGRAL_(wchar_t)
#undef NEURON_INTEGRAL_
template <class T> struct is_integral { static constexpr bool value = is_integral_<decay_t<T>>::value; };

template <class T> struct is_floating_point { static constexpr bool value = false; };
template <> struct is_floating_point<float> { static constexpr bool value = true; };
template <> struct is_floating_point<double> { static constexpr bool value = true; };
template <> struct is_floating_point<long double> { static constexpr bool value = true; };

template <class T> struct is_signed { static constexpr bool value = T(-1) < T(0); };

template <class T> struct is_pointer { static constexpr bool value = false; };
template <class T> struct is_pointer<T*> { static constexpr bool value = true; };
template <class T> struct is_pointer<T* const> { static constexpr bool value = true; };

template <class T> struct is_enum { static constexpr bool value = __is_enum(T); };

template <class... T> struct all_integral { static constexpr bool value = true; };
template <class H, class... T> struct all_integral<H, T...> {
    static constexpr bool value = is_integral<H>::value && all_integral<T...>::value;
};

// A false that depends on template parameters: `static_assert` on it fires
// only when the template is used (how the absent libtorch methods refuse).
template <class... T> struct always_false { static constexpr bool value = false; };

template <class T> T&& declval() noexcept;

template <class T> constexpr T&& forward(typename remove_reference<T>::type& t) noexcept { return static_cast<T&&>(t); }
template <class T> constexpr typename remove_reference<T>::type&& move(T&& t) noexcept {
    return static_cast<typename remove_reference<T>::type&&>(t);
}

// Index sequences, for calling an op with the arguments read into a Tuple.
template <size_t... I> struct index_sequence {};
template <size_t N, size_t... I> struct make_index_ : make_index_<N - 1, N - 1, I...> {};
template <size_t... I> struct make_index_<0, I...> { using type = index_sequence<I...>; };
template <size_t N> using make_index_sequence = typename make_index_<N>::type;

// A minimal tuple: list-initialisation of its constructor evaluates the
// elements left to right, which is what reads kernel arguments in order.
template <size_t I, class T> struct TupleLeaf { T value; };
template <class S, class... T> struct TupleImpl;
template <size_t... I, class... T>
struct TupleImpl<index_sequence<I...>, T...> : TupleLeaf<I, T>... {
    explicit TupleImpl(T... v) : TupleLeaf<I, T>{static_cast<T&&>(v)}... {}
};
template <class... T> struct Tuple : TupleImpl<make_index_sequence<sizeof...(T)>, T...> {
    using TupleImpl<make_index_sequence<sizeof...(T)>, T...>::TupleImpl;
};
template <size_t I, class T> T& get(TupleLeaf<I, T>& leaf) { return leaf.value; }

template <class R, class... A, class... T, size_t... I>
R apply_(R (*f)(A...), Tuple<T...>& t, index_sequence<I...>) {
    return f(get<I>(t)...);
}
template <class R, class... A, class... T>
R apply(R (*f)(A...), Tuple<T...>& t) {
    return apply_(f, t, make_index_sequence<sizeof...(T)>{});
}

}  // namespace detail
}  // namespace neuron
