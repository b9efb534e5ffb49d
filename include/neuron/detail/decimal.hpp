// The exact decimal expansion of a double, for the printf formatter's
// %f %e %g: a double is m * 2^e, so its expansion is finite; a small
// big-integer generates its digits one by one, and take_rounded rounds
// them half-to-even as glibc does. Freestanding.
#pragma once

#include <stdint.h>

namespace neuron {
namespace fmt {


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

}  // namespace fmt
}  // namespace neuron
