// The header a vendor kernel includes: the whole tensor library surface
// (namespaces torch, at, c10, torch::neuron), see ATen/ATen.h.
#pragma once

// libtorch's torch.h brings assert() in (through <cassert>); kernels use
// it without an include of their own. On the device it is
// include/device-libc's (the abort report), on the host the system's.
#include <assert.h>

#include "ATen/ATen.h"
