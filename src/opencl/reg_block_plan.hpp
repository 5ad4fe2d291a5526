// The register-blocked rungs' shared plan (ocl.reg, ocl.reg2): 2D register blocking over At
// (Kp x Mp) and Bp (Kp x Np), packed and padded to the MWG / NWG / KWG tiles by the pre-pass
// (skipped for an operand already in that layout, and for a row-major A that ocl.reg2 reads in
// place: AROW, see prepare()). Parameters MWG NWG KWG MDIMC NDIMC VWM VWN
// SPLITK; kernel arguments M N Kp alpha beta At Mp Bp Np C ldc, then the batch strides, the
// split count, the batch and the split-K workspace (reg_block.cl, BATCH_ARGS). Batches and k
// slices go in dimension 2 of the range. The rungs differ in their kernel file, their local
// memory and ocl.reg's panel layout (PK).
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
  // True: the rung's kernel can read a row-major A in place (AROW in reg2.cl).
  virtual bool reads_a_rows() const { return false; }
  void prepare() override;
  std::vector<Event> enqueue(Operands& s) override;

 private:
  std::string rung_name_;
  int mp_ = 0, np_ = 0, kp_ = 0;
  int panel_a_ = 0, panel_b_ = 0;  // pre-pass panel widths (0: plain k-major rows)
  Buffer at_, bp_;
  bool pack_a_ = true, pack_b_ = true;
  bool a_rows_ = false;  // A read row-major in place (AROW), its row stride in the Mp argument
  NdRange range_;
  Program program_;
  Kernel kernel_;
  int splits_ = 1;
  Buffer partials_;  // split-K partial tiles (splits_ > 1)
};

// The work-group of a register-blocked configuration: NDIMC x MDIMC.
std::vector<std::size_t> reg_block_work_group(const Params& p);

// The ParamSpace constraint both rungs share beyond their own: vector widths and tiles that
// split evenly over work-items and vectors.
std::string reg_block_tiles(const Params& p);

// The k slices a configuration runs: SPLITK, at most one per KWG-deep k-tile.
int reg_block_splits(const GemmDesc& g, const Params& p);
// What both rungs' can_implement adds for batches and splits: at most 65535 matrices x slices
// (dimension 2 of the range, as NVIDIA's driver maps it to the grid).
std::string reg_block_batch(const GemmDesc& g, const Params& p);
// The SPLITK parameter both rungs share.
ParamDesc splitk_param();
// The shape-aware part of a GPU default: tiles for skinny outputs (n or m <= 64) and a k split
// when the output tiles cannot fill the compute units. `base` is the rung's default tile.
Params reg_block_shape(const Device& d, const GemmDesc& g, const Params& base);

}  // namespace kafel::ocl
