// The vendor's neuron/neuron-utils.hpp: get_dst_tensor(), get_cpu_id(),
// get_cpu_count(), callable unqualified as the vendor's samples do.
//
// get_cpu_id() and get_cpu_count() are the C exports themselves.
// get_dst_tensor() must return a torch::Tensor, but the C export of that
// name returns the raw neuron_tensor, and C++ cannot overload on the
// return type alone; so after this header the name get_dst_tensor means
// get_dst_tensor_torch (a macro): unqualified, ::, and neuron:: calls all
// get the Tensor. (The C function stays reachable as
// neuron_get_dst_tensor_raw().)
#pragma once

#include "ATen/ATen.h"
#include "neuroncustomop.h"

// The raw destination descriptor (the C export).
inline neuron_tensor neuron_get_dst_tensor_raw() { return get_dst_tensor(); }

// The output tensor, to write in place: a view (never freed by the
// kernel); the tensor the kernel returns is then ignored.
inline torch::Tensor get_dst_tensor_torch() { return torch::Tensor(neuron_get_dst_tensor_raw()); }
namespace neuron {
inline Tensor get_dst_tensor_torch() { return ::get_dst_tensor_torch(); }
}  // namespace neuron

#define get_dst_tensor get_dst_tensor_torch
