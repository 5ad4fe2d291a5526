// Launchers of the CUDA GEMM rungs, one per .cu file; registry.cpp turns each into a kernel.
// Each launcher enqueues the rung for f32, f64 or i32 on a stream (see plan.hpp).
#pragma once

#include "cuda/plan.hpp"

namespace kafel::cuda {

inline constexpr int kOneBlockMaxThreads = 1024;  // CUDA's limit of threads per block

void launch_oneblock(const DeviceGemm& g, const Params& p, cudaStream_t s);
void launch_blocks(const DeviceGemm& g, const Params& p, cudaStream_t s);
void launch_gridstride(const DeviceGemm& g, const Params& p, cudaStream_t s);
void launch_smem(const DeviceGemm& g, const Params& p, cudaStream_t s);
void launch_reg1d(const DeviceGemm& g, const Params& p, cudaStream_t s);
void launch_reg2d(const DeviceGemm& g, const Params& p, cudaStream_t s);
void launch_vec(const DeviceGemm& g, const Params& p, cudaStream_t s);
void launch_warptile(const DeviceGemm& g, const Params& p, cudaStream_t s);
void launch_pipelined(const DeviceGemm& g, const Params& p, cudaStream_t s);
void launch_fragdb(const DeviceGemm& g, const Params& p, cudaStream_t s);
void launch_cublas(const DeviceGemm& g, const Params& p, cudaStream_t s);

// Creates (once) the cuBLAS handle of a device, so no run() pays for it.
void prepare_cublas(int ordinal);

}  // namespace kafel::cuda
