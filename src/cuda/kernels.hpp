// Launchers of the CUDA GEMM rungs, one per .cu file; registry.cpp turns each into a kernel.
// Each launcher enqueues the rung for f32, f64 or i32 on a stream (see plan.hpp).
#pragma once

#include <vector>

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

// A compiled tile shape of the pipelined rungs: block tile BM x BN, k step BK, warp tile
// WM x WN, AROW (how lanes fetch A, see pipelined.cu), UNROLL k steps per loop iteration (0:
// the whole k-tile unrolled). all_types: compiled for f32, f64 and i32; otherwise f32 only.
// The registry makes one kernel line per shape from this list.
struct TileShape {
  int bm, bn, bk, wm, wn, arow, unroll;
  bool all_types;
};
const std::vector<TileShape>& pipelined_shapes();
void launch_cublas(const DeviceGemm& g, const Params& p, cudaStream_t s);

// Creates (once) the cuBLAS handle of a device, so no run() pays for it.
void prepare_cublas(int ordinal);

}  // namespace kafel::cuda
