// Rung ocl.row (kernels/row.cl): one C row per work-item, a KCH-long chunk of the A row held in
// private memory (the Chinese case study's kernel, for any k).
#include "core/registry.hpp"
#include "opencl/strided_plan.hpp"

namespace kafel::ocl {
namespace {

ParamSpace row_space() {
  ParamSpace s;
  s.params = {
      param("KCH", 256, {64, 128, 256, 512, 1024}, 1, 4096, "A-row chunk held in private memory"),
      param("WG", 64, {16, 32, 64, 128, 256}, 1, 1024, "work-group size (rows)")};
  s.constraint = [](const Params& p) { return limit_work_group(p.at("WG")); };
  return s;
}

const StridedRung row_rung{
    .name = "row",
    .range =
        [](const Params& p, int m, int) {
          return NdRange{{std::size_t(m)}, {std::size_t(p.at("WG"))}};
        },
};

const Register registered{strided_kernel(
    row_rung, "one C row per work-item, A row chunk in private memory", 2, row_space())};

}  // namespace
}  // namespace kafel::ocl
