// Rung ocl.tiled (kernels/tiled.cl): TS x TS tiles of A and B staged in local memory, one C
// element per work-item, guarded (zero-filled) tile loads.
#include "core/registry.hpp"
#include "opencl/strided_plan.hpp"

namespace kafel::ocl {
namespace {

ParamSpace tiled_space() {
  ParamSpace s;
  s.params = {param("TS", 16, {8, 16, 32}, 1, 32, "tile edge (work-group TS x TS)")};
  s.constraint = [](const Params& p) { return limit_work_group(p.at("TS") * p.at("TS")); };
  return s;
}

const StridedRung tiled_rung{
    .name = "tiled",
    .range =
        [](const Params& p, int m, int n) {
          const std::size_t ts = std::size_t(p.at("TS"));
          return NdRange{{std::size_t(n), std::size_t(m)}, {ts, ts}};
        },
    .local_elements = [](const Params& p) { return 2 * p.at("TS") * p.at("TS"); },
};

const Register registered{
    strided_kernel(tiled_rung, "TS x TS local-memory tiles", 3, tiled_space())};

}  // namespace
}  // namespace kafel::ocl
