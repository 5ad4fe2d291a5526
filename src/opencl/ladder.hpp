// The OpenCL GEMM ladder: one plan class and one parameter space per rung. The registry
// (registry.cpp) turns each into one GemmKernel line; kernels live in kernels/NN_<rung>.cl.
#pragma once

#include "opencl/gemm_plan.hpp"

namespace kafel::ocl {

// Rungs that read the normalised operands directly through strides and guard every access
// (no pre-pass): naive, row, tiled, wpt, direct. Arguments: M N K alpha beta A ars acs
// B brs bcs C ldc.
class StridedPlan : public OclPlan {
 public:
  StridedPlan(const Device& d, const GemmDesc& g, const Params& p, std::string file,
              std::string kernel);

 protected:
  // Global and local ND-range (x runs along n).
  virtual std::vector<std::size_t> local() const = 0;
  virtual std::vector<std::size_t> global() const = 0;
  void prepare() override;
  std::vector<Event> enqueue(Operands& s) override;

  std::int64_t p(const char* name) const { return params_.at(name); }

 private:
  std::string file_, kernel_name_;
  Program program_;
  Kernel kernel_;
};

class NaivePlan : public StridedPlan {
 public:
  NaivePlan(const Device& d, const GemmDesc& g, const Params& p)
      : StridedPlan(d, g, p, "01_naive.cl", "gemm_naive") {}
  std::vector<std::size_t> local() const override;
  std::vector<std::size_t> global() const override;
};

class RowPlan : public StridedPlan {
 public:
  RowPlan(const Device& d, const GemmDesc& g, const Params& p)
      : StridedPlan(d, g, p, "02_row.cl", "gemm_row") {}
  std::vector<std::size_t> local() const override;
  std::vector<std::size_t> global() const override;
};

class TiledPlan : public StridedPlan {
 public:
  TiledPlan(const Device& d, const GemmDesc& g, const Params& p)
      : StridedPlan(d, g, p, "03_tiled.cl", "gemm_tiled") {}
  std::vector<std::size_t> local() const override;
  std::vector<std::size_t> global() const override;
};

class WptPlan : public StridedPlan {
 public:
  WptPlan(const Device& d, const GemmDesc& g, const Params& p)
      : StridedPlan(d, g, p, "04_wpt.cl", "gemm_wpt") {}
  std::vector<std::size_t> local() const override;
  std::vector<std::size_t> global() const override;
};

class DirectPlan : public StridedPlan {
 public:
  DirectPlan(const Device& d, const GemmDesc& g, const Params& p)
      : StridedPlan(d, g, p, "08_direct.cl", "gemm_direct") {}
  std::vector<std::size_t> local() const override;
  std::vector<std::size_t> global() const override;
};

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

// Rung 6: 2D register blocking, packed At (Kp x Mp) and Bp (Kp x Np).
class RegPlan : public OclPlan {
 public:
  using OclPlan::OclPlan;

 protected:
  void prepare() override;
  std::vector<Event> enqueue(Operands& s) override;

 private:
  int mp_ = 0, np_ = 0, kp_ = 0;
  Buffer at_, bp_;
  bool pack_a_ = true, pack_b_ = true;
  Program program_;
  Kernel kernel_;
};

// Rung 9: like rung 6 (At / Bp packed, padded) but double-buffered local memory with a
// register prefetch of the next k-tile and one barrier per tile (NVIDIA-class GPUs).
class RegDbPlan : public OclPlan {
 public:
  using OclPlan::OclPlan;

 protected:
  void prepare() override;
  std::vector<Event> enqueue(Operands& s) override;

 private:
  int mp_ = 0, np_ = 0, kp_ = 0;
  Buffer at_, bp_;
  bool pack_a_ = true, pack_b_ = true;
  Program program_;
  Kernel kernel_;
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
