// The CUDA covariance kernels' memory floor (cov_onepass.cu): one plain read of the samples by
// a sum kernel, what `kafel cov --bench` sets each kernel's time against.
#pragma once

#include <cuda_runtime.h>

namespace kafel::cuda {

// Reads `count` floats at x (16-byte aligned; count a multiple of 4) with `blocks` blocks of
// 256 threads; `sink` (blocks floats) is practically never written.
void launch_cov_readpass(const float* x, long long count, float* sink, int blocks,
                         cudaStream_t stream);

}  // namespace kafel::cuda
