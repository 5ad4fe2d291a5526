// The strided rungs' shared plan (see strided_plan.hpp): one kernel launch over the operands as
// uploaded, after the work-group and local-memory checks.
#include "opencl/strided_plan.hpp"

#include <string>

namespace kafel::ocl {
namespace {

std::uint64_t local_bytes(const StridedRung& rung, const Params& p, const GemmTypes& t) {
  const std::int64_t elements = rung.local_elements ? rung.local_elements(p) : 0;
  return std::uint64_t(elements) * acc_bytes(t);
}

}  // namespace

void StridedPlan::prepare() {
  const std::string name = std::string("ocl.") + rung_.name;
  range_ = rung_.range(params_, m_, n_);
  check_limits(range_.local, local_bytes(rung_, params_, desc_.types), name);
  program_ = build({std::string(rung_.name) + ".cl"});
  kernel_ =
      checked_kernel(program_, ("gemm_" + std::string(rung_.name)).c_str(), range_.local, name);
}

std::vector<Event> StridedPlan::enqueue(Operands& s) {
  kernel_.args(m_, n_, k_);
  set_alpha_beta(kernel_, 3);
  kernel_.arg(5, s.a);
  kernel_.arg(6, sa_.rs);
  kernel_.arg(7, sa_.cs);
  kernel_.arg(8, s.b);
  kernel_.arg(9, sb_.rs);
  kernel_.arg(10, sb_.cs);
  kernel_.arg(11, s.c);
  kernel_.arg(12, ldc_);
  std::vector<Event> ev;
  ev.push_back(launch(ctx_, kernel_, range_.global, range_.local));
  return ev;
}

GemmKernel strided_kernel(const StridedRung& rung, std::string summary, int position,
                          ParamSpace space) {
  const StridedRung* r = &rung;
  return ocl_kernel(
      rung.name, std::move(summary), position, buffer_types(), std::move(space),
      [r](const Device& d, const GemmDesc& g, const Params& p) -> std::unique_ptr<GemmPlan> {
        return std::make_unique<StridedPlan>(d, g, p, *r);
      },
      [r](const Device& d, const GemmDesc& g, const Params& p) {
        const NdRange range = r->range(p, int(g.m), int(g.n));
        return fits_device(d, range.local, local_bytes(*r, p, g.types));
      });
}

}  // namespace kafel::ocl
