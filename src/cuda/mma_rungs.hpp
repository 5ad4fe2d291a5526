// Host side of the tensor-core (mma.sync) rungs: compute modes, the problem a compiled kernel
// takes, the table entries each rung file compiles, and the registration helpers they share.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.hpp"

namespace kafel::cuda {
struct DeviceGemm;
}

namespace kafel::cuda::tc {

// What the tensor cores multiply: f16/bf16 -> f32, fp32 as tf32 or 3xtf32, i8 -> i32, f64.
enum class Mode : std::uint8_t { f16, bf16, tf32, tf32x3, i8, f64 };
// Storage of C: the accumulator's type (f32, i32, f64), or 16-bit (the f32 result rounded once).
enum class Out : std::uint8_t { acc, f16, bf16 };

const char* mode_name(Mode m);

// Row-major A (m x k), B (k x n), C (m x n) on the device, rows 16-byte aligned.
struct Problem {
  Mode mode;
  Out out;
  const void* a;
  long long lda;
  const void* b;
  long long ldb;
  void* c;
  long long ldc;
  int m, n, k;
  double alpha, beta;  // i8: truncated to integers, arithmetic modulo 2^32
};

// A block tile BM x BN x BK (elements), warp tile WM x WN, STAGES shared-memory stages, and
// whether fragments are prefetched across the k-tile barrier (XFRAG, see mma_kernel.cuh).
struct Shape {
  int bm, bn, bk, wm, wn, stages;
  bool xfrag = false;
  std::string name() const;  // "m128n256k32w64x64s4" (+ "x" with XFRAG)
  bool operator==(const Shape& o) const {
    return bm == o.bm && bn == o.bn && bk == o.bk && wm == o.wm && wn == o.wn &&
           stages == o.stages && xfrag == o.xfrag;
  }
};

using LaunchFn = void (*)(const Problem&, cudaStream_t);

// One compiled kernel: its mode, tile, shared memory per block, launcher.
struct Compiled {
  Mode mode;
  Shape shape;
  std::size_t smem;
  LaunchFn launch;
};

// The compiled tables of the three rungs (one file each).
const std::vector<Compiled>& mma_table();        // rung 10, cuda.mma
const std::vector<Compiled>& mma_pipe_table();   // rung 11, cuda.mma_pipe
const std::vector<Compiled>& mma_tiles_table();  // rung 12, cuda.mma_tiles

// ---- shared by the registrations (mma_common.cpp) -------------------------------------------

// The element roles every tensor-core rung implements (each needing Cap::mma_sm80): f16, bf16
// (C in the input type or f32), f32/tf32, f32/3xtf32, i8 (C i32), f64.
std::vector<TypeSupport> tensor_types();
// The mode and C storage of an element-role combination; throws Unsupported for others.
Mode mode_of(const GemmTypes& t);
Problem problem_of(const DeviceGemm& g);
// The entry of `table` for the mode of `t` (and `shape` unless null); null when none.
const Compiled* find(const std::vector<Compiled>& table, const GemmTypes& t,
                     const Shape* shape = nullptr);
// "" when `c` can run `d` on `dev` (dimensions, grid, shared memory, DMMA shape), else why not.
std::string limits(const Compiled& c, const Device& dev, const GemmDesc& d);
// A rung with one fixed entry per mode.
GemmKernel fixed_rung(std::string name, std::string summary, int rung,
                      const std::vector<Compiled>& (*table)());

}  // namespace kafel::cuda::tc
