// Rung ocl.direct (kernels/direct.cl): small and odd sizes without pre-pass or padded copies:
// guarded TS x TS tiles, WPT x WPT outputs per work-item, TK-deep local slices read along the
// contiguous direction.
#include "core/registry.hpp"
#include "opencl/strided_plan.hpp"

namespace kafel::ocl {
namespace {

ParamSpace direct_space() {
  ParamSpace s;
  s.params = {param("TS", 32, {16, 32, 64}, 1, 1024, "C tile edge per work-group"),
              param("TK", 8, {4, 8, 16, 32}, 1, 1024, "k depth of one local-memory slice"),
              param("WPT", 2, {1, 2, 4, 8}, 1, 1024, "C block edge per work-item (WPT x WPT)")};
  s.constraint = [](const Params& p) -> std::string {
    if (p.at("TS") % p.at("WPT") != 0) return "TS must be a multiple of WPT";
    const auto rt = p.at("TS") / p.at("WPT");
    if (rt < 2) return "fewer than 4 work-items per work-group";
    return limit_work_group(rt * rt);
  };
  return s;
}

const StridedRung direct_rung{
    .name = "direct",
    .range =
        [](const Params& p, int m, int n) {
          const std::size_t rt = std::size_t(p.at("TS") / p.at("WPT"));
          return NdRange{{tiles(n, p.at("TS")) * rt, tiles(m, p.at("TS")) * rt}, {rt, rt}};
        },
    .local_elements = [](const Params& p) { return 2 * p.at("TK") * (p.at("TS") + 1); },
};

GemmKernel direct_kernel() {
  GemmKernel k = strided_kernel(direct_rung, "small/odd sizes: guarded tiles, no padding or copies",
                                8, direct_space());
  k.preference = always(10);  // the default's fallback when the register-blocked rungs cannot run
  return k;
}

const Register registered{direct_kernel()};

}  // namespace
}  // namespace kafel::ocl
