// The shared part of every OpenCL GEMM plan: operand upload per slot, the k == 0 and empty
// cases, the type defines, the packing pre-pass, device-limit checks and event timing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "opencl/runtime.hpp"

namespace kafel::ocl {

// The operands of one slot as uploaded: exactly the host's normalised row-major storage.
struct Operands {
  Buffer a, b, c;
};

// Strides of op(X): element (r, c) of op(X) is at r*rs + c*cs.
struct Strides {
  int rs = 0, cs = 0;
};

// -DKAFEL_F32 / F64 / I32 / F16 (+ KAFEL_NATIVE_HALF); throws Unsupported for f64 without
// cl_khr_fp64.
std::string type_options(const Context& ctx, DType t);

// Params as -D defines.
Defines defines_of(const Params& p);

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

  // Builds the embedded `files` (common.cl first) with the plan's params and type.
  Program build(const std::vector<std::string>& files, Defines extra = {}) const;
  // Before a build: throws Unsupported when a work-group of `local` exceeds the device's limit
  // or `local_bytes` of local memory exceed the device's, so nothing is compiled that cannot
  // run (some drivers reject such a kernel at build time, which would be a BuildError).
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
  Event pack_a(Operands& s, Buffer& dst, bool kmajor, int rows_p, int cols_p, int panel = 0);
  Event pack_b(Operands& s, Buffer& dst, bool kmajor, int rows_p, int cols_p, int panel = 0);
  Buffer scratch(std::int64_t elements) const;
  // Alpha and beta as the kernels' `scal` argument type.
  void set_alpha_beta(Kernel& k, cl_uint first_index) const;
  // One value as the kernels' `scal` type (float, double or int).
  void set_scalar(Kernel& k, cl_uint index, double v) const;

  const Context& ctx_;
  GemmDesc desc_;
  Params params_;
  int m_ = 0, n_ = 0, k_ = 0;
  Strides sa_, sb_;
  int ldc_ = 0;
  std::vector<Operands> slots_;

 private:
  Event pack(Buffer& src, Strides st, int rows, int cols, Buffer& dst, int rows_p, int cols_p,
             int panel);
  // "<rung> <params> (<type>) on <device>: <what>" as an Unsupported.
  [[noreturn]] void unsupported(const std::string& rung, const std::string& what) const;
  GemmArgs args_;
  Program prepass_;
  Kernel pack_k_, scale_k_;
  bool prepared_ = false;
};

// Builds a plan of type P (a rung) for the registry.
template <class P>
std::unique_ptr<GemmPlan> make(const Device& d, const GemmDesc& g, const Params& p) {
  return std::make_unique<P>(d, g, p);
}

}  // namespace kafel::ocl
