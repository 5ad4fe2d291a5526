// Pieces every CUDA covariance plan shares (defined in cov_onepass.cu): the floors `kafel cov
// --bench` sets kernel and end-to-end times against (one plain read of the samples by a sum
// kernel, one bare host->device copy of a block), and the float64 merge of block partials.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "cuda/runtime.hpp"

namespace kafel::cuda {

// Reads `count` floats at x (16-byte aligned; count a multiple of 4) with `blocks` blocks of
// 256 threads; `sink` (blocks floats) is practically never written.
void launch_cov_readpass(const float* x, long long count, float* sink, int blocks,
                         cudaStream_t stream);

// The read floor every CUDA covariance plan reports (`kafel cov --bench`): one plain read of
// `bytes` at x (16-byte aligned; the last partial 16 bytes skipped) by 16 blocks per SM, so the
// floor moves with neither the kernel nor its parameters, timed with events on `stream`.
// `sink` is made (a float per block) where it is smaller.
double time_cov_readpass(int ordinal, const void* x, std::size_t bytes, DeviceBuffer& sink,
                         cudaStream_t stream);

// merged[b * w + v] = the sum over g of partial[(b * groups + g) * w + v], for batches b, in a
// fixed order (the same bits every run): one thread per value when there are few partials, one
// warp per value (lanes over the partials, then a shuffle tree) when there are many.
void launch_cov_merge(const double* partial, int groups, int w, long long batches, double* merged,
                      cudaStream_t stream);

// The median of five plain copies of `bytes` from pinned memory into `dst` (after a warm-up).
double pinned_copy_floor_ms(DeviceBuffer& dst, std::size_t bytes, cudaStream_t stream);

}  // namespace kafel::cuda
