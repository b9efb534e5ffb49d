// `printf` in a kernel: formatted by the header's freestanding formatter
// into one entry of the core's printf ring (neuron_print), on the host
// simulator as on the device.
//
// How the unqualified name maps: this is a function template overloading
// ::printf, not a macro. Without <stdio.h> it is the only printf. With
// <stdio.h>/<cstdio> included before or after, a call with arguments
// still picks it (an exact match beats the C declaration's `...`), and no
// header can #undef it. One limit: a call with no argument after the
// format, with the C printf also declared, is the C function (overload
// resolution prefers a non-template on a tie): that text goes to the host
// process's stdout on the simulator. neuron_printf has no such limit.
#pragma once

#include <stddef.h>

#include "neuron/detail/format.hpp"
#include "neuroncustomop.hpp"

template <class... A>
inline int printf(const char* format, A... args) {
    return neuron_printf(format, args...);
}
