// <stdio.h> on the device: printf into the core's printf ring (the same
// formatter as on the simulator, one entry per call, up to 255 bytes),
// snprintf into a buffer, puts and putchar. There is no file. Variadic
// templates, not C `...` functions: C variadic arguments do not survive
// the device toolchain, so vprintf/vsnprintf (va_list) are not offered.
#pragma once

#include <stddef.h>

#define EOF (-1)

#include "neuron/printf.hpp"

// As C's: the length the whole text needs; at most cap - 1 bytes and the
// NUL are written.
template <class... A>
inline int snprintf(char* buf, size_t cap, const char* fmt, A... args) {
    return neuron::fmt::format_to(buf, cap, fmt, args...);
}
// A line, as C's puts (the newline added).
inline int puts(const char* s) { return printf("%s\n", s); }
inline int putchar(int c) { return printf("%c", c) < 0 ? -1 : c; }

#ifdef __cplusplus
// No files: libc++'s <cstdio> names these, and a using-declaration of a
// missing one would clash with std::remove of <algorithm>. Deleted, so a
// call is a compile error that says so.
int remove(const char* path) = delete;
int rename(const char* from, const char* to) = delete;
#endif
