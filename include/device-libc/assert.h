// assert(e): on failure the library's abort report (error 98, the
// expression, file and line), which stops the core; nothing under NDEBUG.
#pragma once

#include "neuroncustomop.h"

#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : neuron_assert_fail(#e, __FILE__, __LINE__))
#endif
