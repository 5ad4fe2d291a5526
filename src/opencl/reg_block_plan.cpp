// The register-blocked rungs' shared plan (see reg_block_plan.hpp): pre-pass packing into
// tile-padded k-major operands, one launch of the rung's kernel for the whole batch and every
// k slice, then the split-K reduction when k is split.
#include "opencl/reg_block_plan.hpp"

#include <algorithm>
#include <limits>

namespace kafel::ocl {

using S = std::size_t;

int reg_block_splits(const GemmDesc& g, const Params& p) {
  const auto it = p.find("SPLITK");
  const std::int64_t want = it == p.end() ? 1 : it->second;
  const std::int64_t tiles = (g.k + p.at("KWG") - 1) / p.at("KWG");
  return int(std::max<std::int64_t>(1, std::min(want, tiles)));
}

std::string reg_block_batch(const GemmDesc& g, const Params& p) {
  const std::int64_t z = std::max<std::int64_t>(1, g.batch) * reg_block_splits(g, p);
  if (z <= 65535) return "";
  return "a batch of " + std::to_string(g.batch) + " matrices x " +
         std::to_string(reg_block_splits(g, p)) +
         " k slices exceeds 65535 work-groups in dimension 2";
}

ParamDesc splitk_param() {
  return param("SPLITK", 1, {1, 2, 4, 8, 16}, 1, 256,
               "k slices per C tile (split-K): partial tiles summed in order by a second kernel");
}

Params reg_block_shape(const Device& d, const GemmDesc& g, const Params& base) {
  Params out;
  std::int64_t mwg = base.at("MWG"), nwg = base.at("NWG");
  // Skinny outputs: the long side gets the 256-wide tile, the short one 64.
  if (g.n <= 64 && g.m >= 4 * g.n) {
    mwg = 256;
    nwg = 64;
  } else if (g.m <= 64 && g.n >= 4 * g.m) {
    mwg = 64;
    nwg = 256;
  }
  if (mwg != base.at("MWG") || nwg != base.at("NWG")) {
    out["MWG"] = mwg;
    out["NWG"] = nwg;
  }
  // Matrices of at most 64 x 64 (batches of small products): one 64 x 64 tile each, 128 items
  // of 4 x 8 outputs, 32-deep k-tiles. The 128 x 128 default padded each to four times its work:
  // 4096 x 64^3 on the H100 over NVIDIA OpenCL took 0.520 ms, 0.168 ms with this tile (CLBlast
  // 0.188; 2026-11-24).
  if (g.m <= 64 && g.n <= 64) {
    mwg = nwg = 64;
    out["MWG"] = out["NWG"] = 64;
    out["MDIMC"] = 16;
    out["NDIMC"] = 8;
    out["KWG"] = 32;
  }
  // Fewer tiles than compute units: split k into the most slices that still run as one wave of
  // two work-groups per unit, every slice at least four k-tiles deep. (Rounding the count up
  // started a second, mostly empty wave: 16384x64x16384 ran 5 slices of its 64 tiles at
  // 24.0 TFLOP/s, 2 at 28.7, on the H100 over NVIDIA OpenCL.)
  const std::int64_t tiles =
      ((g.m + mwg - 1) / mwg) * ((g.n + nwg - 1) / nwg) * std::max<std::int64_t>(1, g.batch);
  const std::int64_t units = std::max(1, d.compute_units);
  const std::int64_t kwg = out.count("KWG") ? out.at("KWG") : base.at("KWG");
  const std::int64_t ktiles = (g.k + kwg - 1) / kwg;
  if (tiles < units) {
    const std::int64_t s = std::min({2 * units / tiles, ktiles / 4, std::int64_t(64)});
    if (s > 1) out["SPLITK"] = s;
  }
  return out;
}

std::vector<std::size_t> reg_block_work_group(const Params& p) {
  return {S(p.at("NDIMC")), S(p.at("MDIMC"))};
}

std::string reg_block_tiles(const Params& p) {
  if (std::string why = vector_width("VWM", p.at("VWM")); !why.empty()) return why;
  if (std::string why = vector_width("VWN", p.at("VWN")); !why.empty()) return why;
  if (p.at("MWG") % (p.at("MDIMC") * p.at("VWM")) != 0)
    return "MWG must be a multiple of MDIMC*VWM";
  if (p.at("NWG") % (p.at("NDIMC") * p.at("VWN")) != 0)
    return "NWG must be a multiple of NDIMC*VWN";
  return "";
}

void RegBlockPlan::prepare() {
  const auto& q = params_;
  const std::int64_t mwg = q.at("MWG"), nwg = q.at("NWG"), kwg = q.at("KWG");
  const std::vector<S> local = reg_block_work_group(q);
  const std::string name = "ocl." + rung_name_;
  check_limits(local, local_bytes(), name);
  mp_ = int(round_up(m_, mwg));
  np_ = int(round_up(n_, nwg));
  kp_ = int(round_up(k_, kwg));
  splits_ = reg_block_splits(desc_, q);
  // No pre-pass for an operand already k-major with tile-multiple sizes (e.g. B in NN), unless
  // it has to be rearranged into panels.
  const bool pk = panels();
  // A row-major with tile-multiple m and k, and n at most 256: read in place rather than
  // transposed by the pre-pass (when its vectors along k are aligned and its offsets fit an
  // int). The pre-pass moves A twice, which costs most when n is small; the in-place read is
  // slower per k-tile (short row segments, scalar local stores). H100, NVIDIA OpenCL
  // (2026-11-24): 16384x64x16384 13.0 -> 24.0 TFLOP/s, 65536x256x256 29.1 -> 39.5,
  // 8192x8192x1024 unchanged, 1024x1024x16384 32.9 -> 29.4 (hence the bound on n).
  constexpr int kInPlaceMaxN = 256;
  const std::int64_t vwm = q.at("VWM");
  a_rows_ = reads_a_rows() && !pk && n_ <= kInPlaceMaxN && sa_.cs == 1 && mp_ == m_ && kp_ == k_ &&
            kwg % vwm == 0 && sa_.rs % vwm == 0 && stride_a_ % vwm == 0 &&
            std::int64_t(m_) * sa_.rs / vwm < std::numeric_limits<int>::max();
  pack_a_ = pk || (!a_rows_ && !(mp_ == m_ && kp_ == k_ && sa_.rs == 1 && sa_.cs == m_));
  pack_b_ = pk || !(np_ == n_ && kp_ == k_ && sb_.cs == 1 && sb_.rs == n_);
  panel_a_ = pk ? int(mwg) : 0;
  panel_b_ = pk ? int(nwg) : 0;
  if (pack_a_) at_ = scratch(std::int64_t(kp_) * mp_, batch_);
  if (pack_b_) bp_ = scratch(std::int64_t(kp_) * np_, batch_);
  if (splits_ > 1)
    partials_ = Buffer(ctx_, S(splits_) * S(batch_) * S(m_) * S(n_) * acc_bytes(desc_.types));
  Defines extra;
  if (a_rows_) extra.emplace_back("AROW", 1);
  program_ = build({"reg_block.cl", rung_name_ + ".cl"}, extra);  // the shared macros first
  kernel_ = checked_kernel(program_, ("gemm_" + rung_name_).c_str(), local, name);
  range_ = {{S(np_ / nwg) * local[0], S(mp_ / mwg) * local[1], S(batch_) * S(splits_)},
            {local[0], local[1], 1}};
}

std::vector<Event> RegBlockPlan::enqueue(Operands& s) {
  std::vector<Event> ev;
  if (pack_a_) ev.push_back(pack_a(s, at_, true, kp_, mp_, panel_a_));
  if (pack_b_) ev.push_back(pack_b(s, bp_, true, kp_, np_, panel_b_));
  kernel_.args(m_, n_, kp_);
  set_alpha_beta(kernel_, 3);
  kernel_.arg(5, pack_a_ ? at_ : s.a);
  kernel_.arg(6, a_rows_ ? sa_.rs : mp_);
  kernel_.arg(7, pack_b_ ? bp_ : s.b);
  kernel_.arg(8, np_);
  kernel_.arg(9, s.c);
  kernel_.arg(10, ldc_);
  kernel_.arg(11, cl_long(pack_a_ ? std::int64_t(kp_) * mp_ : stride_a_));
  kernel_.arg(12, cl_long(pack_b_ ? std::int64_t(kp_) * np_ : stride_b_));
  kernel_.arg(13, cl_long(stride_c_));
  kernel_.arg(14, splits_);
  kernel_.arg(15, batch_);
  kernel_.arg(16, partials_);  // a null buffer when k is not split (never written then)
  ev.push_back(launch(ctx_, kernel_, range_.global, range_.local));
  if (splits_ > 1) ev.push_back(reduce_splits(s, partials_, splits_));
  return ev;
}

}  // namespace kafel::ocl
