// The shared part of every OpenCL GEMM rung: the element roles the kernels implement and their
// -D defines, the checks a rung's can_implement makes before anything is built, and OclPlan
// (operand upload per slot, the k == 0 and empty cases, the packing pre-pass, event timing).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/backend.hpp"
#include "opencl/runtime.hpp"

namespace kafel::ocl {

// The operands of one slot as uploaded: exactly the host's normalised row-major storage, a
// batch matrix after matrix (OclPlan::stride_a_ ... elements apart).
struct Operands {
  Buffer a, b, c;
};

// Strides of op(X): element (r, c) of op(X) is at r*rs + c*cs.
struct Strides {
  int rs = 0, cs = 0;
};

// The ND-range of a launch: global size (rounded up to local by launch()) and work-group size.
struct NdRange {
  std::vector<std::size_t> global, local;
};

// ---- element roles --------------------------------------------------------------------------

// What the buffer rungs implement: f32, i32, f16 and bf16 storage with f32 compute, f64 (needs
// cl_khr_fp64) and native half arithmetic (f16 storage and compute, needs cl_khr_fp16).
std::vector<TypeSupport> buffer_types();
// What the image rungs implement (every one needs image support): f32, i32, f16 storage with
// f32 compute and native half. OpenCL has no 64-bit image channel type and no bf16 one.
std::vector<TypeSupport> image_types();

// -DKAFEL_STORE_<storage> -DKAFEL_COMPUTE_<compute> for common.cl; throws Unsupported for roles
// the kernels do not implement or this device cannot run (f64 without cl_khr_fp64 ...).
std::string type_options(const Context& ctx, const GemmTypes& t);
// Bytes of one accumulator element (what the kernels' local-memory tiles hold).
std::size_t acc_bytes(const GemmTypes& t);

// Params as -D defines; SPLITK, a kernel argument, is left out (one program for every split).
Defines defines_of(const Params& p);

// ---- checks before a plan (can_implement) ---------------------------------------------------

// "" when a work-group of `local` fits the limits, else why not (names the limit).
std::string fits_limits(const std::vector<std::size_t>& local, std::size_t max_work_group,
                        std::uint64_t local_bytes, std::uint64_t local_memory);
// fits_limits for `device`: its CL_DEVICE_MAX_WORK_GROUP_SIZE and Device::local_memory (so a
// caller may describe a device with less local memory than the hardware has).
std::string fits_device(const Device& device, const std::vector<std::size_t>& local,
                        std::uint64_t local_bytes);
// "" when m, n and k fit the kernels' 32-bit index arithmetic, else why not.
std::string fits_index(const GemmDesc& desc);
// The ParamSpace bound every rung shares: work-groups of at most 1024 work-items.
std::string limit_work_group(std::int64_t threads);
// "" when v is 1, 2, 4, 8 or 16 (an OpenCL vector width), else why not.
std::string vector_width(const char* name, std::int64_t v);

// A GemmKernel with the backend's common parts filled in: name "ocl.<rung_name>" and a
// can_implement that checks the 32-bit index range, then the rung's own `limits` (work-group
// and local memory for the roles, image sizes ...).
using Limits = std::function<std::string(const Device&, const GemmDesc&, const Params&)>;
GemmKernel ocl_kernel(const std::string& rung_name, std::string summary, int rung,
                      std::vector<TypeSupport> types, ParamSpace params, PlanFactory make_plan,
                      Limits limits);

// ---- the plan every rung builds on ------------------------------------------------------------

class OclPlan : public GemmPlan {
 public:
  OclPlan(const Device& device, const GemmDesc& desc, const Params& params);
  void load(const GemmArgs& args, int slots) override;
  double run(int slot) override;
  void fetch() override;
  std::string timer() const override { return "opencl-events"; }

 protected:
  // Queues the GEMM (m, n, k > 0) on slot `s`; returns every event it queued, in order.
  virtual std::vector<Event> enqueue(Operands& s) = 0;
  // Called once after upload: build programs, allocate scratch buffers.
  virtual void prepare() {}

  // Builds the embedded `files` (common.cl first) with the plan's params and element roles.
  Program build(const std::vector<std::string>& files, Defines extra = {}) const;
  // Before a build: throws Unsupported when a work-group of `local` exceeds the device's limit
  // or `local_bytes` of local memory exceed the device's (the rungs' can_implement checks the
  // same first; this guards plans made directly).
  void check_limits(const std::vector<std::size_t>& local, std::uint64_t local_bytes,
                    const std::string& rung) const;
  // After a build: kernel `name` of `program`, checked against what the compiler reports for
  // it. CL_KERNEL_WORK_GROUP_SIZE can be below the device's limit (it counts the registers the
  // kernel needs), and CL_KERNEL_LOCAL_MEM_SIZE is the local memory really used; a launch past
  // either would fail with a DeviceError, so it becomes Unsupported here instead.
  Kernel checked_kernel(const Program& program, const char* name,
                        const std::vector<std::size_t>& local, const std::string& rung) const;
  // Queues a pack of op(A) (transpose = false: M x K as rows x cols; true: K x M) into `dst`
  // (rows_p x cols_p, zero padded). Same for op(B) (false: N x K; true: K x N).
  // panel > 0: column panels of that width stored one after another (see prepass.cl).
  // A batch is packed by the same launch, matrix z at dst + z * rows_p * cols_p.
  Event pack_a(Operands& s, Buffer& dst, bool kmajor, int rows_p, int cols_p, int panel = 0);
  Event pack_b(Operands& s, Buffer& dst, bool kmajor, int rows_p, int cols_p, int panel = 0);
  // Split-K: C = alpha * (the `splits` partial tiles in `partials`, summed in order) + beta * C
  // for every matrix of the batch (layout: prepass.cl, splitk_reduce).
  Event reduce_splits(Operands& s, Buffer& partials, int splits);
  // A device buffer of `count` blocks of `elements` of the storage type (each block within the
  // kernels' 32-bit indices).
  Buffer scratch(std::int64_t elements, int count = 1) const;
  // Alpha and beta as the kernels' `scal` argument type.
  void set_alpha_beta(Kernel& k, cl_uint first_index) const;
  // One value as the kernels' `scal` type: double (f64), int (i32: the validated integer value),
  // else float.
  void set_scalar(Kernel& k, cl_uint index, double v) const;

  const Context& ctx_;
  GemmDesc desc_;
  Params params_;
  int m_ = 0, n_ = 0, k_ = 0;
  int batch_ = 1;  // matrices (desc.batch; > 1 only for rungs that declare batches)
  Strides sa_, sb_;
  int ldc_ = 0;
  std::int64_t stride_a_ = 0, stride_b_ = 0, stride_c_ = 0;  // elements between matrices
  std::vector<Operands> slots_;

 private:
  Event pack(Buffer& src, Strides st, int rows, int cols, std::int64_t src_stride, Buffer& dst,
             int rows_p, int cols_p, int panel);
  // "<rung> <params> (<roles>) on <device>: <what>" as an Unsupported.
  [[noreturn]] void unsupported(const std::string& rung, const std::string& what) const;
  GemmArgs args_;
  Program prepass_;
  Kernel pack_k_, pack_blocks_k_, scale_k_, reduce_k_;
  bool cpu_device_ = false;  // packs with pack_blocks (no local memory, no barrier)
  bool prepared_ = false;
  std::tuple<int, int, int, int, std::int64_t, std::int64_t> prepared_layout_;  // sa_ sb_ strides
};

// A plan factory for rung plan P.
template <class P>
std::unique_ptr<GemmPlan> make(const Device& d, const GemmDesc& g, const Params& p) {
  return std::make_unique<P>(d, g, p);
}

}  // namespace kafel::ocl
