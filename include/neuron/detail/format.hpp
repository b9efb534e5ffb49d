// A freestanding printf formatter: the kernel's printf and neuron_printf
// format with it, because the device has no hosted libc (no vsnprintf).
//
// Conversions: d i u x X o c s p f F e E g G %, with flags - 0 + space #,
// width and precision (both may be *), and the length modifiers hh h l ll
// j z t L. Floating point is exact: the value's full decimal expansion is
// generated with a small big-integer (a double is m * 2^e, so its
// expansion is finite) and rounded half-to-even, as glibc does.
// Unknown conversions are copied through; %n writes nothing.
//
// Arguments come either from a va_list (neuron_printf) or from an array of
// typed Arg values (the kernel's printf template, which knows the real
// types: a size_t passed to %d is read as what it is).
#pragma once

#include <stdarg.h>
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

// Arguments from a va_list, read with the types C's printf reads.
struct VaArgs {
    va_list ap;
    int64_t sint(Len l) {
        switch (l) {
            case Len::l: return va_arg(ap, long);
            case Len::ll: return va_arg(ap, long long);
            case Len::j: return va_arg(ap, intmax_t);
            case Len::z: return static_cast<int64_t>(va_arg(ap, size_t));
            case Len::t: return va_arg(ap, ptrdiff_t);
            default: return va_arg(ap, int);
        }
    }
    uint64_t uint(Len l) {
        switch (l) {
            case Len::l: return va_arg(ap, unsigned long);
            case Len::ll: return va_arg(ap, unsigned long long);
            case Len::j: return va_arg(ap, uintmax_t);
            case Len::z: return va_arg(ap, size_t);
            case Len::t: return static_cast<uint64_t>(va_arg(ap, ptrdiff_t));
            default: return va_arg(ap, unsigned int);
        }
    }
    double dbl(Len l) { return l == Len::L ? static_cast<double>(va_arg(ap, long double)) : va_arg(ap, double); }
    const char* str() { return va_arg(ap, const char*); }
    const void* ptr() { return va_arg(ap, const void*); }
};

// Where the text goes: a buffer of `cap` bytes, always NUL-terminated
// when cap > 0; `len` counts every byte, written or not (snprintf's
// return value).
struct Sink {
    char* buf;
    size_t cap;
    size_t len = 0;
    void put(char c) {
        if (len + 1 < cap) buf[len] = c;
        ++len;
    }
    void put(const char* s, size_t n) {
        for (size_t k = 0; k < n; ++k) put(s[k]);
    }
    void pad(char c, int n) {
        for (int k = 0; k < n; ++k) put(c);
    }
    void finish() {
        if (cap) buf[len < cap ? len : cap - 1] = '\0';
    }
};

struct Spec {
    bool left = false, zero = false, plus = false, space = false, alt = false;
    int width = 0;
    int prec = -1;
    Len len = Len::None;
    char conv = 0;
};

// The integer's truncation to the width its length modifier names.
inline int64_t narrow_signed(int64_t v, Len l) {
    switch (l) {
        case Len::hh: return static_cast<signed char>(v);
        case Len::h: return static_cast<short>(v);
        case Len::None: return static_cast<int>(v);
        case Len::l: return static_cast<long>(v);
        default: return v;
    }
}
inline uint64_t narrow_unsigned(uint64_t v, Len l) {
    switch (l) {
        case Len::hh: return static_cast<unsigned char>(v);
        case Len::h: return static_cast<unsigned short>(v);
        case Len::None: return static_cast<unsigned int>(v);
        case Len::l: return static_cast<unsigned long>(v);
        case Len::z: return static_cast<size_t>(v);
        default: return v;
    }
}

// sign + prefix + zeros + digits, padded to the width.
inline void emit_padded(Sink& out, const Spec& sp, const char* sign, const char* prefix, int zeros, const char* body, int body_len, bool zero_pad_ok) {
    int sl = 0, pl = 0;
    while (sign[sl]) ++sl;
    while (prefix[pl]) ++pl;
    const int total = sl + pl + zeros + body_len;
    const int fill = sp.width > total ? sp.width - total : 0;
    if (!sp.left && !(sp.zero && zero_pad_ok)) out.pad(' ', fill);
    out.put(sign, static_cast<size_t>(sl));
    out.put(prefix, static_cast<size_t>(pl));
    if (!sp.left && sp.zero && zero_pad_ok) out.pad('0', fill);
    out.pad('0', zeros);
    out.put(body, static_cast<size_t>(body_len));
    if (sp.left) out.pad(' ', fill);
}

// `is_signed_conv`: %d/%i, the only conversions the + and space flags
// apply to.
inline void format_integer(Sink& out, const Spec& sp, uint64_t mag, bool negative, unsigned base, bool upper, bool is_signed_conv = false) {
    char digits[24];
    int n = 0;
    const char* set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    if (!(mag == 0 && sp.prec == 0)) {
        do {
            digits[n++] = set[mag % base];
            mag /= base;
        } while (mag);
    }
    char body[24];
    for (int k = 0; k < n; ++k) body[k] = digits[n - 1 - k];
    int zeros = sp.prec > n ? sp.prec - n : 0;
    const char* prefix = "";
    if (sp.alt && base == 8 && zeros == 0 && (n == 0 || body[0] != '0')) zeros = 1;
    if (sp.alt && base == 16 && n > 0 && !(n == 1 && body[0] == '0')) prefix = upper ? "0X" : "0x";
    const char* sign = negative ? "-" : !is_signed_conv ? "" : sp.plus ? "+" : sp.space ? " " : "";
    emit_padded(out, sp, sign, prefix, zeros, body, n, sp.prec < 0);
}

// ---- exact decimal expansion of a double -------------------------------------

// Little-endian 32-bit limbs; 40 limbs hold 2^1280, above 10 * 2^1074.
struct Big {
    uint32_t w[40];
    int n = 0;
    bool is_zero() const {
        for (int k = 0; k < n; ++k)
            if (w[k]) return false;
        return true;
    }
    // *this = *this * m + add; returns nothing (sized to never overflow).
    void mul_add(uint32_t m, uint32_t add) {
        uint64_t carry = add;
        for (int k = 0; k < n; ++k) {
            const uint64_t v = static_cast<uint64_t>(w[k]) * m + carry;
            w[k] = static_cast<uint32_t>(v);
            carry = v >> 32;
        }
        if (carry && n < 40) w[n++] = static_cast<uint32_t>(carry);
    }
    // *this /= d; returns the remainder.
    uint32_t div_small(uint32_t d) {
        uint64_t rem = 0;
        for (int k = n - 1; k >= 0; --k) {
            const uint64_t v = (rem << 32) | w[k];
            w[k] = static_cast<uint32_t>(v / d);
            rem = v % d;
        }
        while (n > 0 && w[n - 1] == 0) --n;
        return static_cast<uint32_t>(rem);
    }
};

// The digits of |v| (finite, non-zero) from the most significant one,
// with exp10 the decimal exponent of the first.
class Expansion {
public:
    explicit Expansion(double v) {
        const uint64_t bits = __builtin_bit_cast(uint64_t, v);
        const int ef = static_cast<int>((bits >> 52) & 0x7ff);
        uint64_t m = bits & ((uint64_t(1) << 52) - 1);
        int e;
        if (ef == 0) {
            e = -1074;
        } else {
            m |= uint64_t(1) << 52;
            e = ef - 1075;
        }
        if (e >= 0) {
            // Integer: m << e, printed by repeated division by 10^9.
            Big b;
            b.w[0] = static_cast<uint32_t>(m);
            b.w[1] = static_cast<uint32_t>(m >> 32);
            b.n = 2;
            for (int k = 0; k < e; k += 16) b.mul_add(1u << (e - k < 16 ? e - k : 16), 0);
            while (b.n > 0 && b.w[b.n - 1] == 0) --b.n;
            int nd = 0;
            char rev[320];
            while (!b.is_zero()) {
                uint32_t chunk = b.div_small(1000000000u);
                for (int k = 0; k < 9; ++k) {
                    rev[nd++] = static_cast<char>('0' + chunk % 10);
                    chunk /= 10;
                }
            }
            while (nd > 1 && rev[nd - 1] == '0') --nd;
            for (int k = 0; k < nd; ++k) int_digits_[k] = rev[nd - 1 - k];
            n_int_ = nd;
            frac_shift_ = 0;
        } else {
            const int s = -e;
            const uint64_t ip = s >= 64 ? 0 : (m >> s);
            const uint64_t fp = s >= 64 ? m : (m & ((uint64_t(1) << s) - 1));
            int nd = 0;
            char rev[24];
            for (uint64_t x = ip; x; x /= 10) rev[nd++] = static_cast<char>('0' + x % 10);
            for (int k = 0; k < nd; ++k) int_digits_[k] = rev[nd - 1 - k];
            n_int_ = nd;
            frac_.w[0] = static_cast<uint32_t>(fp);
            frac_.w[1] = static_cast<uint32_t>(fp >> 32);
            frac_.n = 2;
            frac_shift_ = s;
        }
        if (n_int_ > 0) {
            exp10_ = n_int_ - 1;
        } else {
            // Skip the leading zeros of the fraction (v != 0, so a
            // non-zero digit comes).
            int z = 0;
            while ((pending_ = next_frac()) == 0) ++z;
            exp10_ = -(z + 1);
        }
    }
    int exp10() const { return exp10_; }
    // The next digit (0 past the end of the expansion).
    int next() {
        if (pos_ < n_int_) return int_digits_[pos_++] - '0';
        if (pending_ >= 0) {
            const int p = pending_;
            pending_ = -1;
            return p;
        }
        return frac_shift_ ? next_frac() : 0;
    }
    // Whether any digit after the ones taken is non-zero.
    bool rest_nonzero() const {
        if (pending_ > 0) return true;
        for (int k = pos_; k < n_int_; ++k)
            if (int_digits_[k] != '0') return true;
        return frac_shift_ && !frac_.is_zero();
    }

private:
    // frac_ holds the fraction's numerator over 2^frac_shift_.
    int next_frac() {
        frac_.mul_add(10, 0);
        const int limb = frac_shift_ / 32, bit = frac_shift_ % 32;
        uint32_t d = 0;
        if (limb < frac_.n) d = frac_.w[limb] >> bit;
        if (bit && limb + 1 < frac_.n) d |= frac_.w[limb + 1] << (32 - bit);
        // Clear the integer part (the digit) from the numerator.
        for (int k = limb; k < frac_.n; ++k) frac_.w[k] = k == limb ? (frac_.w[k] & ((1u << bit) - 1u)) : 0;
        if (bit == 0 && limb < frac_.n) frac_.w[limb] = 0;
        while (frac_.n > 0 && frac_.w[frac_.n - 1] == 0) --frac_.n;
        return static_cast<int>(d & 0xf);
    }
    char int_digits_[320];
    int n_int_ = 0;
    int pos_ = 0;
    Big frac_;
    int frac_shift_ = 0;
    int exp10_ = 0;
    int pending_ = -1;  // the first fraction digit, found by the constructor
};

// `count` digits of the expansion rounded half-to-even into d[]; returns
// true if rounding carried out of the first digit (d then reads 10...0,
// stored as "1" followed by zeros with one digit more than asked).
inline bool take_rounded(Expansion& x, char* d, int count) {
    for (int k = 0; k < count; ++k) d[k] = static_cast<char>('0' + x.next());
    const int nxt = x.next();
    const bool sticky = x.rest_nonzero();
    const int last = count > 0 ? d[count - 1] - '0' : 0;
    const bool up = nxt > 5 || (nxt == 5 && (sticky || (last & 1)));
    if (!up) return false;
    for (int k = count - 1; k >= 0; --k) {
        if (d[k] == '9') {
            d[k] = '0';
        } else {
            ++d[k];
            return false;
        }
    }
    // All nines (or no digits): the value is now 10^(first position + 1).
    for (int k = count; k > 0; --k) d[k] = d[k - 1];
    d[0] = '1';
    return true;
}

// The largest precision honoured for floating point (a larger one is
// taken as this): it bounds the digit buffers, which live on the
// kernel's small stack.
constexpr int kMaxFloatDigits = 40;

inline void format_float(Sink& out, const Spec& sp_in, double v) {
    Spec sp = sp_in;
    const bool upper = sp.conv == 'F' || sp.conv == 'E' || sp.conv == 'G';
    const char lc = static_cast<char>(sp.conv | 0x20);
    const uint64_t bits = __builtin_bit_cast(uint64_t, v);
    const bool neg = bits >> 63;
    const char* sign = neg ? "-" : sp.plus ? "+" : sp.space ? " " : "";
    if (((bits >> 52) & 0x7ff) == 0x7ff) {
        const bool nan = (bits & ((uint64_t(1) << 52) - 1)) != 0;
        const char* word = nan ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
        emit_padded(out, sp, sign, "", 0, word, 3, false);
        return;
    }
    int prec = sp.prec < 0 ? 6 : sp.prec;
    if (prec > kMaxFloatDigits) prec = kMaxFloatDigits;
    // Digits: up to 310 integer digits plus the precision, plus a carry.
    char d[kMaxFloatDigits + 320];
    int nd = 0;       // digits in d
    int exp10 = 0;    // decimal exponent of d[0]
    const bool is_zero = (bits << 1) == 0;
    char style = lc;  // 'f' or 'e' after %g picks
    int frac_digits = prec;
    bool strip = false;
    if (lc == 'g') {
        const int P = prec == 0 ? 1 : prec;
        if (is_zero) {
            exp10 = 0;
        } else {
            Expansion x(v);
            exp10 = x.exp10();
            if (take_rounded(x, d, P)) ++exp10;
        }
        if (exp10 < -4 || exp10 >= P) {
            style = 'e';
            frac_digits = P - 1;
        } else {
            style = 'f';
            frac_digits = P - 1 - exp10;
        }
        strip = !sp.alt;
        if (is_zero) {
            for (int k = 0; k < P; ++k) d[k] = '0';
        }
        nd = P;
    } else if (lc == 'e') {
        if (is_zero) {
            for (int k = 0; k <= prec; ++k) d[k] = '0';
        } else {
            Expansion x(v);
            exp10 = x.exp10();
            if (take_rounded(x, d, prec + 1)) ++exp10;
        }
        nd = prec + 1;
    } else {
        // %f: digits from 10^exp10 down to 10^-prec.
        if (is_zero) {
            exp10 = 0;
            nd = 1 + prec;
            for (int k = 0; k < nd; ++k) d[k] = '0';
        } else {
            Expansion x(v);
            exp10 = x.exp10();
            nd = exp10 + 1 + prec;
            if (nd > 0) {
                if (take_rounded(x, d, nd)) ++exp10;
                nd = exp10 + 1 + prec;
            } else {
                // Every kept digit is 0; the first expansion digit sits
                // at 10^exp10 <= 10^-(prec+1).
                bool up = false;
                if (nd == 0) {
                    const int first = x.next();
                    up = first > 5 || (first == 5 && x.rest_nonzero());
                }
                if (up) {
                    exp10 = -prec;
                    nd = 1;
                    d[0] = '1';
                } else {
                    exp10 = 0;
                    nd = 1 + prec;
                    for (int k = 0; k < nd; ++k) d[k] = '0';
                }
            }
        }
    }
    // Lay out the body.
    char body[kMaxFloatDigits + 340];
    int bl = 0;
    if (style == 'e') {
        body[bl++] = d[0];
        int fd = frac_digits;
        if (strip)
            while (fd > 0 && d[fd] == '0') --fd;
        if (fd > 0 || sp.alt) body[bl++] = '.';
        for (int k = 1; k <= fd; ++k) body[bl++] = d[k];
        body[bl++] = upper ? 'E' : 'e';
        int ex = exp10;
        body[bl++] = ex < 0 ? '-' : '+';
        if (ex < 0) ex = -ex;
        char ed[8];
        int en = 0;
        do {
            ed[en++] = static_cast<char>('0' + ex % 10);
            ex /= 10;
        } while (ex);
        if (en < 2) ed[en++] = '0';
        while (en) body[bl++] = ed[--en];
    } else {
        // d[0] is the digit at 10^exp10; positions below 10^-frac_digits
        // are not in d.
        auto digit_at = [&](int p10) -> char {
            const int idx = exp10 - p10;
            return idx >= 0 && idx < nd ? d[idx] : '0';
        };
        if (exp10 < 0) {
            body[bl++] = '0';
        } else {
            for (int p = exp10; p >= 0; --p) body[bl++] = digit_at(p);
        }
        int fd = frac_digits;
        if (strip)
            while (fd > 0 && digit_at(-fd) == '0') --fd;
        if (fd > 0 || sp.alt) body[bl++] = '.';
        for (int p = 1; p <= fd; ++p) body[bl++] = digit_at(-p);
    }
    emit_padded(out, sp, sign, "", 0, body, bl, true);
}

inline void format_string(Sink& out, const Spec& sp, const char* s) {
    if (!s) s = (sp.prec < 0 || sp.prec >= 6) ? "(null)" : "";
    int n = 0;
    while (s[n] && (sp.prec < 0 || n < sp.prec)) ++n;
    const int fill = sp.width > n ? sp.width - n : 0;
    if (!sp.left) out.pad(' ', fill);
    out.put(s, static_cast<size_t>(n));
    if (sp.left) out.pad(' ', fill);
}

// Formats `f` with the arguments of `src` into `out`.
template <class Src>
inline void format(Sink& out, const char* f, Src& src) {
    if (!f) f = "(null)";
    while (*f) {
        if (*f != '%') {
            out.put(*f++);
            continue;
        }
        const char* start = f++;
        Spec sp;
        for (;; ++f) {
            if (*f == '-') sp.left = true;
            else if (*f == '0') sp.zero = true;
            else if (*f == '+') sp.plus = true;
            else if (*f == ' ') sp.space = true;
            else if (*f == '#') sp.alt = true;
            else break;
        }
        if (*f == '*') {
            const int w = static_cast<int>(src.sint(Len::None));
            if (w < 0) {
                sp.left = true;
                sp.width = w == -2147483647 - 1 ? 2147483647 : -w;
            } else {
                sp.width = w;
            }
            ++f;
        } else {
            while (*f >= '0' && *f <= '9') sp.width = sp.width * 10 + (*f++ - '0');
        }
        if (*f == '.') {
            ++f;
            if (*f == '*') {
                const int p = static_cast<int>(src.sint(Len::None));
                sp.prec = p < 0 ? -1 : p;
                ++f;
            } else {
                sp.prec = 0;
                while (*f >= '0' && *f <= '9') sp.prec = sp.prec * 10 + (*f++ - '0');
            }
        }
        switch (*f) {
            case 'h': sp.len = f[1] == 'h' ? (++f, Len::hh) : Len::h; ++f; break;
            case 'l': sp.len = f[1] == 'l' ? (++f, Len::ll) : Len::l; ++f; break;
            case 'j': sp.len = Len::j; ++f; break;
            case 'z': sp.len = Len::z; ++f; break;
            case 't': sp.len = Len::t; ++f; break;
            case 'L': sp.len = Len::L; ++f; break;
            default: break;
        }
        sp.conv = *f;
        if (!*f) {
            out.put(start, static_cast<size_t>(f - start));
            break;
        }
        ++f;
        switch (sp.conv) {
            case 'd':
            case 'i': {
                const int64_t v = narrow_signed(src.sint(sp.len), sp.len);
                const uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
                format_integer(out, sp, mag, v < 0, 10, false, true);
                break;
            }
            case 'u': format_integer(out, sp, narrow_unsigned(src.uint(sp.len), sp.len), false, 10, false); break;
            case 'o': format_integer(out, sp, narrow_unsigned(src.uint(sp.len), sp.len), false, 8, false); break;
            case 'x': format_integer(out, sp, narrow_unsigned(src.uint(sp.len), sp.len), false, 16, false); break;
            case 'X': format_integer(out, sp, narrow_unsigned(src.uint(sp.len), sp.len), false, 16, true); break;
            case 'c': {
                const char c = static_cast<char>(src.sint(Len::None));
                const int fill = sp.width > 1 ? sp.width - 1 : 0;
                if (!sp.left) out.pad(' ', fill);
                out.put(c);
                if (sp.left) out.pad(' ', fill);
                break;
            }
            case 's': format_string(out, sp, src.str()); break;
            case 'p': {
                const void* p = src.ptr();
                if (!p) {
                    Spec s2 = sp;
                    s2.prec = -1;
                    format_string(out, s2, "(nil)");
                } else {
                    Spec s2 = sp;
                    s2.alt = true;
                    format_integer(out, s2, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)), false, 16, false);
                }
                break;
            }
            case 'f':
            case 'F':
            case 'e':
            case 'E':
            case 'g':
            case 'G': format_float(out, sp, src.dbl(sp.len)); break;
            case '%': out.put('%'); break;
            case 'n': (void)src.ptr(); break;
            default: out.put(start, static_cast<size_t>(f - start)); break;
        }
    }
}

// vsnprintf's contract: at most cap - 1 bytes and a NUL; returns the full
// length.
inline int vformat(char* buf, size_t cap, const char* f, va_list ap) {
    Sink out{buf, cap};
    VaArgs src;
    va_copy(src.ap, ap);
    format(out, f, src);
    va_end(src.ap);
    out.finish();
    return static_cast<int>(out.len);
}

inline int format_args(char* buf, size_t cap, const char* f, const Arg* args, size_t n) {
    Sink out{buf, cap};
    ArgArray src{args, n};
    format(out, f, src);
    out.finish();
    return static_cast<int>(out.len);
}

}  // namespace fmt
}  // namespace neuron
