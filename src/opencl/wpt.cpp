// Rung ocl.wpt (kernels/wpt.cl): TS x TS local tiles with WPT outputs per work-item, so each
// value read from local memory feeds WPT multiply-adds.
#include "core/registry.hpp"
#include "opencl/strided_plan.hpp"

namespace kafel::ocl {
namespace {

ParamSpace wpt_space() {
  ParamSpace s;
  s.params = {param("TS", 32, {16, 32, 64}, 1, 1024, "tile edge"),
              param("WPT", 8, {1, 2, 4, 8, 16}, 1, 1024, "C elements per work-item (along m)")};
  s.constraint = [](const Params& p) -> std::string {
    if (p.at("TS") % p.at("WPT") != 0) return "TS must be a multiple of WPT";
    return limit_work_group(p.at("TS") * p.at("TS") / p.at("WPT"));
  };
  return s;
}

const StridedRung wpt_rung{
    .name = "wpt",
    .range =
        [](const Params& p, int m, int n) {
          const std::size_t ts = std::size_t(p.at("TS")),
                            rts = std::size_t(p.at("TS") / p.at("WPT"));
          return NdRange{{tiles(n, p.at("TS")) * ts, tiles(m, p.at("TS")) * rts}, {ts, rts}};
        },
    .local_elements = [](const Params& p) { return 2 * p.at("TS") * p.at("TS"); },
};

const Register registered{
    strided_kernel(wpt_rung, "local-memory tiles + WPT outputs per work-item", 4, wpt_space())};

}  // namespace
}  // namespace kafel::ocl
