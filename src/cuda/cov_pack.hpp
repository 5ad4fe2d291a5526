// Host-side packing of covariance samples for the CUDA kernels: tight blocks (cuda.herk,
// cuda.herk_i8) and padded planar rows for those that copy whole chunks of every channel row with
// 16-byte cp.async (cuda.herk_tc, cuda.onepass32).
#pragma once

#include <cstdint>
#include <vector>

#include "core/cov_backend.hpp"
#include "cuda/runtime.hpp"

namespace kafel::cuda {

// Every batch's channel rows of float samples (f32 or cf32), planar, each padded with zeros to
// `pitch` floats: channel c of batch b starts at float (b * channels + c) * pitch. `pitch` must
// hold a row (samples * comps floats). Sample-major input is transposed on the way.
void pack_padded_planar(const CovArgs& a, std::int64_t pitch, std::vector<char>& packed);

// The samples of every batch as one tight array (desc.min_bytes(), layout kept): the caller's
// memory when its strides are already tight, else a copy in `packed`.
const void* tight_samples(const CovArgs& a, std::vector<char>& packed);

// `slots` device copies (at least one) of `bytes` bytes at `src`: what a plan's load() keeps.
std::vector<DeviceBuffer> upload_slots(const void* src, std::size_t bytes, int slots);

}  // namespace kafel::cuda
