// c10::BFloat16: the top half of an f32, stored as its bits, converting to
// and from float (round to nearest even; NaN stays NaN).
#pragma once

#include <stdint.h>

namespace c10 {

struct BFloat16 {
    uint16_t x = 0;
    BFloat16() = default;
    BFloat16(float f) : x(from_float(f)) {}
    operator float() const { return __builtin_bit_cast(float, static_cast<uint32_t>(x) << 16); }

    static uint16_t from_float(float f) {
        const uint32_t v = __builtin_bit_cast(uint32_t, f);
        if ((v & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((v >> 16) | 0x40);
        return static_cast<uint16_t>((v + 0x7fff + ((v >> 16) & 1)) >> 16);
    }
};

static_assert(sizeof(BFloat16) == 2, "c10::BFloat16 is 16 bits");

}  // namespace c10
