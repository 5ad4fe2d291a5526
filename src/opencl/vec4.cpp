// Rung ocl.vec4 (kernels/vec4.cl): a 4x4 block of C per work-item with vload4 (the mobile-GPU
// article), over At (K x Mp) and Bp (K x Np) packed and zero-padded by the pre-pass.
#include "core/registry.hpp"
#include "opencl/gemm_plan.hpp"

namespace kafel::ocl {
namespace {

using S = std::size_t;

ParamSpace vec4_space() {
  ParamSpace s;
  s.params = {param("WGX", 8, {4, 8, 16, 32}, 1, 1024, "work-group size along n (4 columns each)"),
              param("WGY", 8, {1, 2, 4, 8, 16}, 1, 1024, "work-group size along m (4 rows each)")};
  s.constraint = [](const Params& p) { return limit_work_group(p.at("WGX") * p.at("WGY")); };
  return s;
}

std::vector<S> vec4_work_group(const Params& p) {
  return {S(p.at("WGX")), S(p.at("WGY"))};
}

class Vec4Plan final : public OclPlan {
 public:
  using OclPlan::OclPlan;

 protected:
  void prepare() override {
    const std::vector<S> local = vec4_work_group(params_);
    check_limits(local, 0, "ocl.vec4");
    mp_ = int(round_up(m_, 4 * std::int64_t(local[1])));
    np_ = int(round_up(n_, 4 * std::int64_t(local[0])));
    at_ = scratch(std::int64_t(k_) * mp_);
    bp_ = scratch(std::int64_t(k_) * np_);
    program_ = build({"vec4.cl"});
    kernel_ = checked_kernel(program_, "gemm_vec4", local, "ocl.vec4");
  }

  std::vector<Event> enqueue(Operands& s) override {
    std::vector<Event> ev;
    ev.push_back(pack_a(s, at_, true, k_, mp_));
    ev.push_back(pack_b(s, bp_, true, k_, np_));
    kernel_.args(m_, n_, k_);
    set_alpha_beta(kernel_, 3);
    kernel_.arg(5, at_);
    kernel_.arg(6, mp_);
    kernel_.arg(7, bp_);
    kernel_.arg(8, np_);
    kernel_.arg(9, s.c);
    kernel_.arg(10, ldc_);
    ev.push_back(launch(ctx_, kernel_, {S(np_ / 4), S(mp_ / 4)}, vec4_work_group(params_)));
    return ev;
  }

 private:
  int mp_ = 0, np_ = 0;
  Buffer at_, bp_;
  Program program_;
  Kernel kernel_;
};

std::string vec4_limits(const Device& d, const GemmDesc&, const Params& p) {
  return fits_device(d, vec4_work_group(p), 0);
}

const Register registered{ocl_kernel("vec4", "4x4 outputs per work-item, vload4, transposed A", 5,
                                     buffer_types(), vec4_space(), make<Vec4Plan>, vec4_limits)};

}  // namespace
}  // namespace kafel::ocl
