// The GemmPlan every CUDA rung shares: device copies of A, B, C (one set per slot), the
// optional transpose pre-pass, CUDA-event timing. A rung only supplies a launcher function.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/backend.hpp"

namespace kafel::cuda {

// Device operands as a launcher sees them: row-major, with the conventions of GemmArgs.
// Device leading dimensions are padded to a multiple of 16 bytes (see padded_ld), so 16-byte
// vector accesses at 16-byte aligned columns never leave a row's allocation.
struct DeviceGemm {
  GemmDesc desc;
  const void* a = nullptr;
  std::int64_t lda = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* c = nullptr;
  std::int64_t ldc = 0;
};

// Enqueues the GEMM on `stream`; throws Unsupported for a type it was not compiled for.
using Launcher = void (*)(const DeviceGemm& g, const Params& params, cudaStream_t stream);

struct PlanTraits {
  // The launcher handles only Op::N operands: op-T operands are transposed on the device
  // into scratch buffers first, inside the timed region (the fast rungs use this).
  bool ops_n_only = false;
};

// The smallest leading dimension >= cols that is a multiple of 16 bytes of `t`.
std::int64_t padded_ld(std::int64_t cols, DType t);

std::unique_ptr<GemmPlan> make_cuda_plan(const Device& device, const GemmDesc& desc,
                                         const Params& params, Launcher launcher,
                                         PlanTraits traits = {});

// dst (cols x rows, ld ldd) = transpose of src (rows x cols, ld lds), both row-major.
void launch_transpose(DType t, const void* src, std::int64_t rows, std::int64_t cols,
                      std::int64_t lds, void* dst, std::int64_t ldd, cudaStream_t stream);

// Keeps the GPU busy for ~10 us, so a start event recorded right after it is not reached
// before the timed kernel is enqueued (the host's launch latency stays out of the timing).
void launch_spin(cudaStream_t stream);

}  // namespace kafel::cuda
