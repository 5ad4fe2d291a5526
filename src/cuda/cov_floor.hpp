// The CUDA covariance kernels' floors (cov_onepass.cu): one plain read of the samples by a sum
// kernel, and one bare host->device copy of a block, what `kafel cov --bench` sets kernel and
// end-to-end times against.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "cuda/runtime.hpp"

namespace kafel::cuda {

// Reads `count` floats at x (16-byte aligned; count a multiple of 4) with `blocks` blocks of
// 256 threads; `sink` (blocks floats) is practically never written.
void launch_cov_readpass(const float* x, long long count, float* sink, int blocks,
                         cudaStream_t stream);

// The median of five plain copies of `bytes` from pinned memory into `dst` (after a warm-up).
double pinned_copy_floor_ms(DeviceBuffer& dst, std::size_t bytes, cudaStream_t stream);

}  // namespace kafel::cuda
