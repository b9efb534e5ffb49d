// The printf formatter's arguments: the typed Arg values the printf
// templates build (they know each argument's real type), and the Arg
// array the formatter reads conversions from. No va_list source: C
// variadic arguments do not survive the device toolchain. Freestanding.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "neuron/detail/traits.hpp"

namespace neuron {
namespace fmt {

// One argument of the typed form.
struct Arg {
    enum Kind : uint8_t { Int, Uint, Double, Ptr, Str };
    Kind kind;
    union {
        int64_t i;
        uint64_t u;
        double d;
        const void* p;
        const char* s;
    };
};

inline Arg arg_int(int64_t v) { Arg a; a.kind = Arg::Int; a.i = v; return a; }
inline Arg arg_uint(uint64_t v) { Arg a; a.kind = Arg::Uint; a.u = v; return a; }
inline Arg arg_double(double v) { Arg a; a.kind = Arg::Double; a.d = v; return a; }

template <class T>
inline detail::enable_if_t<detail::is_integral<T>::value || detail::is_enum<T>::value, Arg> make_arg(T v) {
    if (T(-1) < T(0)) return arg_int(static_cast<int64_t>(v));
    return arg_uint(static_cast<uint64_t>(v));
}
inline Arg make_arg(bool v) { return arg_int(v ? 1 : 0); }
inline Arg make_arg(float v) { return arg_double(static_cast<double>(v)); }
inline Arg make_arg(double v) { return arg_double(v); }
inline Arg make_arg(long double v) { return arg_double(static_cast<double>(v)); }
inline Arg make_arg(const char* v) { Arg a; a.kind = Arg::Str; a.s = v; return a; }
inline Arg make_arg(char* v) { return make_arg(static_cast<const char*>(v)); }
inline Arg make_arg(decltype(nullptr)) { Arg a; a.kind = Arg::Ptr; a.p = nullptr; return a; }
template <class T>
inline Arg make_arg(T* v) { Arg a; a.kind = Arg::Ptr; a.p = static_cast<const void*>(v); return a; }
// Class types that convert to float (c10::Half, c10::BFloat16, an
// accessor's element): printed as their value.
template <class T, class = decltype(static_cast<float>(detail::declval<const T&>()))>
inline detail::enable_if_t<!detail::is_integral<T>::value && !detail::is_floating_point<T>::value && !detail::is_enum<T>::value, Arg>
make_arg(const T& v) {
    return arg_double(static_cast<double>(static_cast<float>(v)));
}

// Length modifiers.
enum class Len : uint8_t { None, hh, h, l, ll, j, z, t, L };

// Arguments from an Arg array; a missing argument reads as 0.
struct ArgArray {
    const Arg* a;
    size_t n;
    size_t i = 0;
    const Arg* next() { return i < n ? &a[i++] : nullptr; }
    int64_t sint(Len) {
        const Arg* x = next();
        if (!x) return 0;
        switch (x->kind) {
            case Arg::Int: return x->i;
            case Arg::Uint: return static_cast<int64_t>(x->u);
            case Arg::Double: return static_cast<int64_t>(x->d);
            default: return static_cast<int64_t>(reinterpret_cast<uintptr_t>(x->p));
        }
    }
    uint64_t uint(Len l) { return static_cast<uint64_t>(sint(l)); }
    double dbl(Len) {
        const Arg* x = next();
        if (!x) return 0;
        switch (x->kind) {
            case Arg::Double: return x->d;
            case Arg::Int: return static_cast<double>(x->i);
            case Arg::Uint: return static_cast<double>(x->u);
            default: return 0;
        }
    }
    const char* str() {
        const Arg* x = next();
        return x && (x->kind == Arg::Str || x->kind == Arg::Ptr) ? x->s : nullptr;
    }
    const void* ptr() {
        const Arg* x = next();
        if (!x) return nullptr;
        if (x->kind == Arg::Int || x->kind == Arg::Uint) return reinterpret_cast<const void*>(static_cast<uintptr_t>(x->u));
        return x->kind == Arg::Double ? nullptr : x->p;
    }
};

}  // namespace fmt
}  // namespace neuron
