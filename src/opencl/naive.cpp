// Rung ocl.naive (kernels/naive.cl): a 2D ND-range with one C element per work-item, operands
// read through strides. The slowest rung, and the default choice's last resort.
#include "core/registry.hpp"
#include "opencl/strided_plan.hpp"

namespace kafel::ocl {
namespace {

ParamSpace naive_space() {
  ParamSpace s;
  s.params = {param("WGX", 16, {8, 16, 32, 64}, 1, 1024, "work-group size along n"),
              param("WGY", 8, {1, 2, 4, 8, 16}, 1, 1024, "work-group size along m")};
  s.constraint = [](const Params& p) { return limit_work_group(p.at("WGX") * p.at("WGY")); };
  return s;
}

const StridedRung naive_rung{
    .name = "naive",
    .range =
        [](const Params& p, int m, int n) {
          return NdRange{{std::size_t(n), std::size_t(m)},
                         {std::size_t(p.at("WGX")), std::size_t(p.at("WGY"))}};
        },
};

GemmKernel naive_kernel() {
  GemmKernel k =
      strided_kernel(naive_rung, "naive 2D NDRange, one C element per work-item", 1, naive_space());
  k.preference = always(1);  // runs wherever OpenCL does: what the default falls back to last
  return k;
}

const Register registered{naive_kernel()};

}  // namespace
}  // namespace kafel::ocl
