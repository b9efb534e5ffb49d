// The vendor's tensor library, namespaces at and torch (the
// same names; torch::Tensor is at::Tensor) and c10, plus torch::neuron's
// TCM allocator and a kernel's printf. <torch/torch.h> is this header.
//
// Kernel-side and freestanding: it includes only stddef.h, stdint.h and
// the project's headers.
#pragma once

#include "ATen/Functions.h"
#include "ATen/core/Tensor.h"
#include "c10/core/Scalar.h"
#include "c10/core/ScalarType.h"
#include "c10/core/TensorOptions.h"
#include "c10/util/ArrayRef.h"
#include "c10/util/BFloat16.h"
#include "c10/util/Half.h"
#include "neuron/printf.hpp"
#include "neuroncustomop.hpp"

namespace at {
using c10::ArrayRef;
using c10::BFloat16;
using c10::dtype;
using c10::Half;
using c10::kBFloat16;
using c10::kByte;
using c10::kChar;
using c10::kFloat;
using c10::kHalf;
using c10::kInt;
using c10::kLong;
using c10::kShort;
using c10::ScalarType;
using c10::TypeMeta;
}  // namespace at

namespace torch {
// libtorch's way: every at:: name is a torch:: name.
using namespace at;

// torch's dtype aliases.
constexpr c10::ScalarType kUInt8 = c10::kByte;
constexpr c10::ScalarType kInt8 = c10::kChar;
constexpr c10::ScalarType kInt16 = c10::kShort;
constexpr c10::ScalarType kInt32 = c10::kInt;
constexpr c10::ScalarType kInt64 = c10::kLong;
constexpr c10::ScalarType kFloat16 = c10::kHalf;
constexpr c10::ScalarType kFloat32 = c10::kFloat;

namespace neuron {
// `nbytes` of TCM from the kernel's 16 KiB pool (stream accessors take
// theirs from it too); null on failure.
inline void* tcm_malloc(size_t nbytes) { return ::tcm_malloc(nbytes); }
// Frees a tcm_malloc block; null is harmless, a foreign pointer is
// refused with the error recorded.
inline void tcm_free(void* ptr) { ::tcm_free(ptr); }
}  // namespace neuron
}  // namespace torch
