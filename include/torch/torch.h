// The header a vendor kernel includes: the whole tensor library surface
// (namespaces torch, at, c10, torch::neuron), see ATen/ATen.h.
#pragma once

#include "ATen/ATen.h"
