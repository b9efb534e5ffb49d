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
// Arguments come from an array of typed Arg values (`format_to`, under the
// kernel's printf, neuron_printf and the device's snprintf, which know
// the real types: each value is read as what it is, never reinterpreted,
// then converted as its conversion says; a size_t given to %d prints as
// int).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "neuron/detail/decimal.hpp"
#include "neuron/detail/format_args.hpp"
#include "neuron/detail/traits.hpp"

namespace neuron {
namespace fmt {

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

// snprintf's contract: at most cap - 1 bytes and a NUL; returns the full
// length.
inline int format_args(char* buf, size_t cap, const char* f, const Arg* args, size_t n) {
    Sink out{buf, cap};
    ArgArray src{args, n};
    format(out, f, src);
    out.finish();
    return static_cast<int>(out.len);
}

// format_args over C++ arguments: a variadic template, not a C `...`
// function, whose arguments the device toolchain cannot pass.
template <class... A>
inline int format_to(char* buf, size_t cap, const char* f, A... args) {
    const Arg values[] = {make_arg(args)..., arg_int(0)};
    return format_args(buf, cap, f, values, sizeof...(A));
}

}  // namespace fmt
}  // namespace neuron
