// The OpenCL GEMM ladder: the plan and the parameter space of every rung. The registry
// (registry.cpp) turns each into one GemmKernel line; kernels live in kernels/NN_<rung>.cl.
#pragma once

#include "opencl/gemm_plan.hpp"

namespace kafel::ocl {

// The ND-range of a launch: global size (rounded up to local by launch()) and work-group size.
struct NdRange {
  std::vector<std::size_t> global, local;
};

// What tells one strided rung from another: its kernel, its ND-range (x runs along n) and the
// local memory it declares. Strided rungs read the normalised operands directly through
// strides and guard every access (no pre-pass): naive, row, tiled, wpt, direct.
struct StridedRung {
  const char* name;  // registry name, for messages ("ocl.tiled")
  const char* file;  // kernels/<file>
  // The __kernel function; arguments M N K alpha beta A ars acs B brs bcs C ldc.
  const char* kernel;
  NdRange (*range)(const Params& p, int m, int n) = nullptr;
  // Elements of acc the kernel declares in local memory, checked before the build (none: null).
  std::int64_t (*local_elements)(const Params& p) = nullptr;
};

extern const StridedRung naive_rung, row_rung, tiled_rung, wpt_rung, direct_rung;

class StridedPlan : public OclPlan {
 public:
  StridedPlan(const Device& d, const GemmDesc& g, const Params& p, const StridedRung& rung)
      : OclPlan(d, g, p), rung_(rung) {}

 protected:
  void prepare() override;
  std::vector<Event> enqueue(Operands& s) override;

 private:
  const StridedRung& rung_;
  NdRange range_;
  Program program_;
  Kernel kernel_;
};

// Builds a plan of the strided rung R for the registry.
template <const StridedRung& R>
std::unique_ptr<GemmPlan> make_strided(const Device& d, const GemmDesc& g, const Params& p) {
  return std::make_unique<StridedPlan>(d, g, p, R);
}

// Rung 5: 4x4 per work-item, vload4, packed At (K x Mp) and Bp (K x Np).
class Vec4Plan : public OclPlan {
 public:
  using OclPlan::OclPlan;

 protected:
  void prepare() override;
  std::vector<Event> enqueue(Operands& s) override;

 private:
  int mp_ = 0, np_ = 0;
  Buffer at_, bp_;
  Program program_;
  Kernel kernel_;
};

// Rungs 6 and 9: 2D register blocking over At (Kp x Mp) and Bp (Kp x Np), packed and padded
// to the MWG / NWG / KWG tiles by the pre-pass (skipped for an operand already in that layout).
// Parameters MWG NWG KWG MDIMC NDIMC; kernel arguments M N Kp alpha beta At Mp Bp Np C ldc.
// The rungs differ in their kernel file, their local memory and rung 6's panel layout (PK).
class RegBlockPlan : public OclPlan {
 protected:
  RegBlockPlan(const Device& d, const GemmDesc& g, const Params& p, const char* name,
               const char* file, const char* kernel)
      : OclPlan(d, g, p), name_(name), file_(file), kernel_name_(kernel) {}
  // Local memory of this configuration in bytes (checked before the build).
  virtual std::uint64_t local_bytes() const = 0;
  // True: pack operands as per-tile panels (prepass.cl), always through the pre-pass.
  virtual bool panels() const { return false; }
  void prepare() override;
  std::vector<Event> enqueue(Operands& s) override;

 private:
  const char *name_, *file_, *kernel_name_;
  int mp_ = 0, np_ = 0, kp_ = 0;
  int panel_a_ = 0, panel_b_ = 0;  // pre-pass panel widths (0: plain k-major rows)
  Buffer at_, bp_;
  bool pack_a_ = true, pack_b_ = true;
  NdRange range_;
  Program program_;
  Kernel kernel_;
};

// Rung 6: local-memory staging of A and / or B per KWG slice (SA, SB), optional panels (PK).
class RegPlan final : public RegBlockPlan {
 public:
  RegPlan(const Device& d, const GemmDesc& g, const Params& p)
      : RegBlockPlan(d, g, p, "ocl.reg", "06_reg.cl", "gemm_reg") {}

 protected:
  std::uint64_t local_bytes() const override;
  bool panels() const override { return params_.at("PK") != 0; }
};

// Rung 9: double-buffered local memory with a register prefetch of the next k-tile and one
// barrier per tile (NVIDIA-class GPUs).
class RegDbPlan final : public RegBlockPlan {
 public:
  RegDbPlan(const Device& d, const GemmDesc& g, const Params& p)
      : RegBlockPlan(d, g, p, "ocl.reg2", "09_reg_db.cl", "gemm_reg_db") {}

 protected:
  std::uint64_t local_bytes() const override;
};

// Rung 7: image2d operands. Variant::both (A and B images), a_only (B buffer), fma (k x2).
class ImagePlan : public OclPlan {
 public:
  enum class Variant { both, a_only, fma };
  ImagePlan(const Device& d, const GemmDesc& g, const Params& p, Variant v);

 protected:
  void prepare() override;
  std::vector<Event> enqueue(Operands& s) override;

 private:
  Event to_image(Buffer& src, Buffer& image, std::size_t width, std::size_t height);
  Variant variant_;
  int mp_ = 0, np_ = 0, kp_ = 0;
  Buffer apad_, bpad_, aimg_, bimg_;
  Program program_;
  Kernel kernel_;
};

template <ImagePlan::Variant V>
std::unique_ptr<GemmPlan> make_image(const Device& d, const GemmDesc& g, const Params& p) {
  return std::make_unique<ImagePlan>(d, g, p, V);
}

// Parameter spaces (defaults, tuner candidates, constraints) of the rungs.
ParamSpace naive_space();
ParamSpace row_space();
ParamSpace tiled_space();
ParamSpace wpt_space();
ParamSpace vec4_space();
ParamSpace reg_space();
ParamSpace image_space();
ParamSpace direct_space();
ParamSpace reg_db_space();

}  // namespace kafel::ocl
