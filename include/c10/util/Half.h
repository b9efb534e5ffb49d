// c10::Half: IEEE binary16, stored as its bits, converting to and from
// float (round to nearest even).
#pragma once

#include <stdint.h>

namespace c10 {

struct Half {
    uint16_t x = 0;
    Half() = default;
    Half(float f) : x(from_float(f)) {}
    operator float() const { return to_float(x); }

    static float to_float(uint16_t h) {
        const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
        const uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
        if (exp == 0) {
            const float v = static_cast<float>(man) * (1.0f / 16777216.0f);
            return sign ? -v : v;
        }
        const uint32_t bits = exp == 31 ? (sign | 0x7f800000u | (man << 13)) : (sign | ((exp + 112) << 23) | (man << 13));
        return __builtin_bit_cast(float, bits);
    }
    static uint16_t from_float(float f) {
        const uint32_t x = __builtin_bit_cast(uint32_t, f);
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
            return static_cast<uint16_t>(sign | r);
        }
        uint32_t r = (ax - 0x38000000u) >> 13;
        const uint32_t rem = ax & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) ++r;
        return static_cast<uint16_t>(sign | r);
    }
};

static_assert(sizeof(Half) == 2, "c10::Half is 16 bits");

}  // namespace c10
