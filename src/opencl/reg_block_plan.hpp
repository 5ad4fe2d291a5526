// The register-blocked rungs' shared plan (ocl.reg, ocl.reg2): 2D register blocking over At
// (Kp x Mp) and Bp (Kp x Np), packed and padded to the MWG / NWG / KWG tiles by the pre-pass
// (skipped for an operand already in that layout). Parameters MWG NWG KWG MDIMC NDIMC VWM VWN;
// kernel arguments M N Kp alpha beta At Mp Bp Np C ldc. The rungs differ in their kernel file,
// their local memory and ocl.reg's panel layout (PK).
#pragma once

#include "opencl/gemm_plan.hpp"

namespace kafel::ocl {

class RegBlockPlan : public OclPlan {
 protected:
  // `rung_name` names the rest: kernels/<rung_name>.cl, __kernel gemm_<rung_name>, "ocl.<name>".
  RegBlockPlan(const Device& d, const GemmDesc& g, const Params& p, std::string rung_name)
      : OclPlan(d, g, p), rung_name_(std::move(rung_name)) {}
  // Local memory of this configuration in bytes (checked before the build).
  virtual std::uint64_t local_bytes() const = 0;
  // True: pack operands as per-tile panels (prepass.cl), always through the pre-pass.
  virtual bool panels() const { return false; }
  void prepare() override;
  std::vector<Event> enqueue(Operands& s) override;

 private:
  std::string rung_name_;
  int mp_ = 0, np_ = 0, kp_ = 0;
  int panel_a_ = 0, panel_b_ = 0;  // pre-pass panel widths (0: plain k-major rows)
  Buffer at_, bp_;
  bool pack_a_ = true, pack_b_ = true;
  NdRange range_;
  Program program_;
  Kernel kernel_;
};

// The work-group of a register-blocked configuration: NDIMC x MDIMC.
std::vector<std::size_t> reg_block_work_group(const Params& p);

// The ParamSpace constraint both rungs share beyond their own: vector widths and tiles that
// split evenly over work-items and vectors.
std::string reg_block_tiles(const Params& p);

}  // namespace kafel::ocl
