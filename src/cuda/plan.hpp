// The GemmPlan every CUDA rung shares (device copies of A, B, C per slot, the operand forms a
// launcher asks for, CUDA-event timing) and what each rung's registration has in common.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/backend.hpp"

namespace kafel::cuda {

// Device operands as a launcher sees them: row-major, with the conventions of GemmArgs.
// Device leading dimensions are padded to a multiple of 16 bytes (see padded_ld), so 16-byte
// vector accesses at 16-byte aligned columns never leave a row's allocation. A batch
// (desc.batch > 1, only for kernels that declare `batches`) lies matrix after matrix: matrix i
// of A at a + i * stride_a elements (likewise B, C); each stride keeps 16-byte alignment.
struct DeviceGemm {
  GemmDesc desc;
  const void* a = nullptr;
  std::int64_t lda = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* c = nullptr;
  std::int64_t ldc = 0;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  // Scratch of PlanTraits::workspace bytes (split-K partial tiles), null when none was asked for.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

// Enqueues the GEMM on `stream`. A std::function, so a launcher may carry state prepared once
// per plan (the cuBLASLt descriptors and algorithm).
using Launcher = std::function<void(const DeviceGemm& g, const Params& params, cudaStream_t)>;

// How the shared plan hands the operands to a launcher.
enum class OperandForm {
  as_given,  // op N or T, as the framework normalised them
  // Op-T operands are transposed on the device into scratch buffers first, inside the timed
  // region, so the launcher sees op N only (the fast SIMT rungs).
  ops_n,
  // A as m x k (op N) and B as n x k (op T): both k-contiguous, cuBLASLt's "TN" form that its
  // fp8 and int8 kernels require. Relaid out once in load(), outside the timed region, with m
  // and k padded by zeros to multiples of 16 and n to C's padded leading dimension (16 bytes):
  // the launcher sees those padded sizes; the extra rows and columns of C are computed from
  // zeros and never fetched. 1-byte inputs (cuBLASLt, wgmma) and 4-byte ones (wgmma tf32).
  k_major,
};

struct PlanTraits {
  OperandForm form = OperandForm::as_given;
  // Called at the end of load() with slot 0's operands as the launcher will see them (ops_n:
  // before the transpose pre-pass), outside the timed region: where a launcher with state
  // prepares. Not called when m or n is 0.
  std::function<void(const DeviceGemm&)> prepare;
  // Device scratch the launcher needs for a problem and its parameters (split-K partial
  // tiles), allocated once in load() and shared by the slots; null or 0: none.
  std::function<std::size_t(const GemmDesc&, const Params&)> workspace;
};

// The smallest leading dimension >= cols that is a multiple of 16 bytes of `t`.
std::int64_t padded_ld(std::int64_t cols, DType t);

std::unique_ptr<GemmPlan> make_cuda_plan(const Device& device, const GemmDesc& desc,
                                         const Params& params, Launcher launcher,
                                         PlanTraits traits = {});

// dst (cols x rows, ld ldd) = transpose of src (rows x cols, ld lds), both row-major; elements
// of `t`'s size (1, 2, 4 or 8 bytes). For `count` matrices, matrix i at src + i * src_stride and
// dst + i * dst_stride elements.
void launch_transpose(DType t, const void* src, std::int64_t rows, std::int64_t cols,
                      std::int64_t lds, void* dst, std::int64_t ldd, cudaStream_t stream,
                      std::int64_t count = 1, std::int64_t src_stride = 0,
                      std::int64_t dst_stride = 0);

// Elements of `t` (1 or 4 bytes): dst (dst_rows x dst_cols, ld ldd) = op(src) where it exists,
// 0 elsewhere. op(src) is src (rows x cols, ld lds) or, with `transposed`, the transpose of src
// (cols x rows, ld lds). Used for OperandForm::k_major.
void launch_relayout(DType t, const void* src, std::int64_t rows, std::int64_t cols,
                     std::int64_t lds, bool transposed, void* dst, std::int64_t dst_rows,
                     std::int64_t dst_cols, std::int64_t ldd, cudaStream_t stream);

// As launch_relayout for f32, each element written as its 3xtf32 parts: big = tf32(x) at
// dst (dst_rows x dst_cols, ld ldd) and small = tf32(x - big) `small_rows` rows below, both
// rounded to nearest; the padding of both parts is 0.
void launch_split_tf32(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t lds,
                       bool transposed, float* dst, std::int64_t dst_rows, std::int64_t dst_cols,
                       std::int64_t ldd, std::int64_t small_rows, cudaStream_t stream);

// Keeps the GPU busy for ~10 us, so a start event recorded right after it is not reached
// before the timed kernel is enqueued (the host's launch latency stays out of the timing).
void launch_spin(cudaStream_t stream);

// ---- registration helpers (what every rung's own file uses) ---------------------------------

// gridDim.y (and .z) limit: rungs put block rows of C there (and batches, k slices in z).
inline constexpr std::int64_t kMaxGridY = 65535;

// A rung of the SIMT ladder: the natural f32, f64 and i32 roles, the shared plan with `traits`,
// `can_implement` checking the dimension limit of every CUDA kernel and then `limits`.
using Limits = std::function<std::string(const Device&, const GemmDesc&, const Params&)>;
GemmKernel cuda_rung(std::string name, std::string summary, int rung, ParamSpace params,
                     Launcher launcher, Limits limits = {}, PlanTraits traits = {});

// "" when every dimension is at most 2^30 (kernels index with int and add tile sizes and grid
// strides; cuBLAS takes int sizes and padded leading dimensions), else the reason.
std::string dims_fit(const GemmDesc& d);
// "" when ceil(m / rows_per_block) block rows fit in gridDim.y, else the reason.
std::string grid_rows_fit(const GemmDesc& d, std::int64_t rows_per_block);

}  // namespace kafel::cuda
