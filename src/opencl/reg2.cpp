// Rung ocl.reg2 (kernels/reg2.cl): register blocking with double-buffered local memory and a
// register prefetch of the next k-tile, one barrier per tile; batches and split-K in dimension 2.
// The default on GPUs, with a tile and split chosen by the shape.
#include "core/registry.hpp"
#include "opencl/reg_block_plan.hpp"

namespace kafel::ocl {
namespace {

// Defaults for a Hopper GPU: 128 x 128 tiles, 256 work-items with 8 x 8 outputs each (two
// float4 fragments of A and of B per k step), KWG = 16 -> 32 KiB of local memory for the two
// buffers, about 128 registers per work-item so two work-groups share an SM.
ParamSpace reg2_space() {
  ParamSpace s;
  s.params = {param("MWG", 128, {32, 64, 128, 256}, 1, 1024, "C tile rows per work-group"),
              param("NWG", 128, {32, 64, 128, 256}, 1, 1024, "C tile columns per work-group"),
              param("KWG", 16, {8, 16, 32}, 1, 1024, "k depth of one local-memory buffer"),
              param("MDIMC", 16, {4, 8, 16, 32}, 1, 1024, "work-items along m"),
              param("NDIMC", 16, {4, 8, 16, 32}, 1, 1024, "work-items along n"),
              param("VWM", 4, {1, 2, 4, 8}, 1, 16, "vector width of A loads (global and local)"),
              param("VWN", 4, {1, 2, 4, 8}, 1, 16, "vector width of B loads and C accumulators"),
              splitk_param()};
  s.constraint = [](const Params& p) -> std::string {
    if (std::string why = reg_block_tiles(p); !why.empty()) return why;
    const auto mwg = p.at("MWG"), nwg = p.at("NWG"), kwg = p.at("KWG");
    const auto mdimc = p.at("MDIMC"), ndimc = p.at("NDIMC"), nt = mdimc * ndimc;
    if ((kwg * mwg / p.at("VWM")) % nt != 0) return "A tile vectors must split evenly over items";
    if ((kwg * nwg / p.at("VWN")) % nt != 0) return "B tile vectors must split evenly over items";
    if ((mwg / mdimc) * (nwg / ndimc) > 128) return "more than 128 accumulators per work-item";
    if (2 * (mwg + nwg) * kwg * 4 > 48 * 1024) return "two local buffers above 48 KiB";
    return limit_work_group(nt);
  };
  return s;
}

// Two buffers of each operand's KWG slice.
std::uint64_t reg2_local_bytes(const Params& q, const GemmTypes& t) {
  return std::uint64_t(2 * (q.at("MWG") + q.at("NWG")) * q.at("KWG")) * acc_bytes(t);
}

// The shape (reg_block_shape: 256x64 tiles for skinny outputs, a k split when the tiles cannot
// fill the compute units) over the defaults. Their buffers double for f64 (64 KiB for 128x128),
// more than many GPUs have (NVIDIA: 48 KiB per work-group): then a half-depth k-tile, which keeps
// the tile shape and halves the buffers.
Params reg2_heuristic(const Device& d, const GemmDesc& g) {
  static const ParamSpace space = reg2_space();
  Params p = space.defaults();
  Params out = reg_block_shape(d, g, p);
  for (const auto& [name, v] : out) p[name] = v;
  if (space.check(p).empty() && reg2_local_bytes(p, g.types) <= d.local_memory) return out;
  p["KWG"] = 8;
  out["KWG"] = 8;
  if (space.check(p).empty() && reg2_local_bytes(p, g.types) <= d.local_memory) return out;
  return {};  // nothing of this shape fits: the default choice moves on to another rung
}

class Reg2Plan final : public RegBlockPlan {
 public:
  Reg2Plan(const Device& d, const GemmDesc& g, const Params& p) : RegBlockPlan(d, g, p, "reg2") {}

 protected:
  std::uint64_t local_bytes() const override { return reg2_local_bytes(params_, desc_.types); }
  bool reads_a_rows() const override { return true; }
};

std::string reg2_limits(const Device& d, const GemmDesc& g, const Params& p) {
  if (std::string why = reg_block_batch(g, p); !why.empty()) return why;
  return fits_device(d, reg_block_work_group(p), reg2_local_bytes(p, g.types));
}

GemmKernel reg2_kernel() {
  GemmKernel k =
      ocl_kernel("reg2", "register blocking, double-buffered local memory, register prefetch", 9,
                 buffer_types(), reg2_space(), make<Reg2Plan>, reg2_limits);
  k.heuristic = reg2_heuristic;
  k.batches = true;
  // GPUs only: on CPU devices (PoCL) every barrier spills the live private values.
  k.preference = [](const Device& d, const GemmDesc&) { return d.is_gpu ? 30 : 0; };
  return k;
}

const Register registered{reg2_kernel()};

}  // namespace
}  // namespace kafel::ocl
