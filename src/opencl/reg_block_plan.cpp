// The register-blocked rungs' shared plan (see reg_block_plan.hpp): pre-pass packing into
// tile-padded k-major operands, then one launch of the rung's kernel.
#include "opencl/reg_block_plan.hpp"

namespace kafel::ocl {

using S = std::size_t;

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
  // No pre-pass for an operand already k-major with tile-multiple sizes (e.g. B in NN), unless
  // it has to be rearranged into panels.
  const bool pk = panels();
  pack_a_ = pk || !(mp_ == m_ && kp_ == k_ && sa_.rs == 1 && sa_.cs == m_);
  pack_b_ = pk || !(np_ == n_ && kp_ == k_ && sb_.cs == 1 && sb_.rs == n_);
  panel_a_ = pk ? int(mwg) : 0;
  panel_b_ = pk ? int(nwg) : 0;
  if (pack_a_) at_ = scratch(std::int64_t(kp_) * mp_);
  if (pack_b_) bp_ = scratch(std::int64_t(kp_) * np_);
  program_ = build({"reg_block.cl", rung_name_ + ".cl"});  // the shared macros first
  kernel_ = checked_kernel(program_, ("gemm_" + rung_name_).c_str(), local, name);
  range_ = {{S(np_ / nwg) * local[0], S(mp_ / mwg) * local[1]}, local};
}

std::vector<Event> RegBlockPlan::enqueue(Operands& s) {
  std::vector<Event> ev;
  if (pack_a_) ev.push_back(pack_a(s, at_, true, kp_, mp_, panel_a_));
  if (pack_b_) ev.push_back(pack_b(s, bp_, true, kp_, np_, panel_b_));
  kernel_.args(m_, n_, kp_);
  set_alpha_beta(kernel_, 3);
  kernel_.arg(5, pack_a_ ? at_ : s.a);
  kernel_.arg(6, mp_);
  kernel_.arg(7, pack_b_ ? bp_ : s.b);
  kernel_.arg(8, np_);
  kernel_.arg(9, s.c);
  kernel_.arg(10, ldc_);
  ev.push_back(launch(ctx_, kernel_, range_.global, range_.local));
  return ev;
}

}  // namespace kafel::ocl
