// Covariance rung ocl.onepass (kernels/onepass.cl): samples resident in device buffers, all
// pairs in private floats per work-item, per-work-group partials merged on the host in float64.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/registry.hpp"
#include "opencl/runtime.hpp"

namespace kafel {

namespace {

constexpr std::int64_t kMaxChannels = 16;

class OclCovPlan : public CovPlan {
 public:
  OclCovPlan(const Device& dev, const CovDesc& d, const Params& p)
      : ctx_(ocl::Context::get(dev)), desc_(d), wg_(p.at("WG")), groups_per_cu_(p.at("GPC")) {
    if (std::size_t(wg_) > ctx_.max_work_group_size())
      throw Unsupported("ocl.onepass WG=" + std::to_string(wg_) + " on " + ctx_.name() +
                        ": exceeds the device's work-group limit of " +
                        std::to_string(ctx_.max_work_group_size()) +
                        " (CL_DEVICE_MAX_WORK_GROUP_SIZE)");
    prog_ = ocl::build(ctx_, {"onepass.cl"},
                       {{"CH", d.channels},
                        {"WG", wg_},
                        {"PLANAR", d.layout == SampleLayout::Planar ? 1 : 0},
                        {"PILOT_SAMPLES", kPilotSamples}});
    kernel_ = prog_.kernel("cov_onepass");
    read_kernel_ = prog_.kernel("cov_readpass");
    // Enough groups to fill the device, and no work-item summing more than ~256 samples.
    cl_uint cu = 1;
    ocl::check(
        clGetDeviceInfo(ctx_.device(), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cu), &cu, nullptr),
        "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)");
    const std::int64_t by_n = (d.samples + wg_ * 256 - 1) / (wg_ * 256);
    groups_ = std::max<std::int64_t>({1, std::int64_t(cu) * groups_per_cu_, by_n});
    stride_ = (d.channels + d.pairs());
    partial_ = ocl::Buffer(ctx_, std::size_t(groups_ * stride_ + d.channels) * 4);
  }

  void load(const CovArgs& a, int slots) override {
    const std::size_t bytes = std::size_t(desc_.min_bytes());
    std::vector<float> packed;
    const float* src = tight(a, packed);
    // Streams call load for every block: keep the buffers when the slot count is unchanged.
    if (slots_.size() != std::size_t(std::max(1, slots))) {
      slots_.clear();
      for (int s = 0; s < std::max(1, slots); ++s)
        slots_.emplace_back(ctx_, bytes, CL_MEM_READ_ONLY);
    }
    for (auto& b : slots_) b.write(ctx_, src, bytes);
  }

  double run(int slot) override {
    const ocl::Buffer& x = slots_.at(slot);
    const cl_long ld = desc_.layout == SampleLayout::Planar ? desc_.samples : desc_.channels;
    kernel_.args(x, ld, cl_long(desc_.samples), partial_);
    ocl::Event e = ocl::launch(ctx_, kernel_, {std::size_t(groups_ * wg_)}, {std::size_t(wg_)});
    return e.wait_ms();
  }

  void fetch(CovMoments& out) override {
    const std::int64_t C = desc_.channels;
    std::vector<float> h(std::size_t(groups_ * stride_ + C));
    partial_.read(ctx_, h.data(), h.size() * 4);
    std::vector<double> sum(C, 0.0), q(desc_.pairs(), 0.0), pilot(C);
    for (std::int64_t g = 0; g < groups_; ++g) {
      const float* p = &h[g * stride_];
      for (std::int64_t c = 0; c < C; ++c) sum[c] += p[c];
      for (std::int64_t t = 0; t < desc_.pairs(); ++t) q[t] += p[C + t];
    }
    for (std::int64_t c = 0; c < C; ++c) pilot[c] = h[groups_ * stride_ + c];
    moments_from_shifted(C, desc_.samples, pilot.data(), sum.data(), q.data(), out);
  }

  std::string timer() const override { return "opencl-events"; }

  double read_floor_ms(int slot) override {
    const cl_long count = cl_long(desc_.channels * desc_.samples);
    read_kernel_.args(slots_.at(slot), count, partial_);
    return ocl::launch(ctx_, read_kernel_, {std::size_t(groups_ * wg_)}, {std::size_t(wg_)})
        .wait_ms();
  }

 private:
  // The block as a tight array (copied only when the caller's stride has padding).
  const float* tight(const CovArgs& a, std::vector<float>& packed) const {
    const bool planar = desc_.layout == SampleLayout::Planar;
    const std::int64_t rows = planar ? desc_.channels : desc_.samples;
    const std::int64_t cols = planar ? desc_.samples : desc_.channels;
    if (a.stride == cols) return a.f32();
    packed.resize(std::size_t(rows * cols));
    for (std::int64_t r = 0; r < rows; ++r)
      std::memcpy(&packed[r * cols], a.f32() + r * a.stride, std::size_t(cols) * 4);
    return packed.data();
  }

  ocl::Context& ctx_;
  CovDesc desc_;
  std::int64_t wg_, groups_per_cu_, groups_ = 1, stride_ = 0;
  ocl::Program prog_;
  ocl::Kernel kernel_, read_kernel_;
  ocl::Buffer partial_;
  std::vector<ocl::Buffer> slots_;
};

ParamSpace onepass_space() {
  ParamSpace s;
  s.params = {param("WG", 256, {64, 128, 256}, 1, 1024, "work-group size (power of two)"),
              param("GPC", 8, {2, 4, 8, 16}, 1, 1024, "work-groups per compute unit (at least)")};
  s.constraint = [](const Params& p) -> std::string {
    const auto wg = p.at("WG");
    return (wg & (wg - 1)) == 0 ? "" : "WG must be a power of two";
  };
  return s;
}

CovKernel onepass_kernel() {
  CovKernel k;
  k.name = "ocl.onepass";
  k.summary =
      "one pass: pilot shift, all pairs in private floats per work-item, group partials merged in "
      "float64";
  k.rung = 1;
  k.sample_types = {DType::f32};
  k.params = onepass_space();
  k.max_channels = kMaxChannels;
  k.preference = 10;  // up to its channel limit; ocl.herk beyond and for other types/batches
  k.can_implement = [](const Device&, const CovDesc& d, const Params&) -> std::string {
    return d.batch == 1 ? ""
                        : "ocl.onepass takes one block (batch " + std::to_string(d.batch) + ")";
  };
  k.make_plan = [](const Device& dev, const CovDesc& d,
                   const Params& p) -> std::unique_ptr<CovPlan> {
    if (d.channels > kMaxChannels)
      throw Unsupported("ocl.onepass keeps all pairs in registers: at most " +
                        std::to_string(kMaxChannels) + " channels (got " +
                        std::to_string(d.channels) + "); use ocl.herk");
    return std::make_unique<OclCovPlan>(dev, d, p);
  };
  return k;
}

const Register registered{onepass_kernel()};

}  // namespace
}  // namespace kafel
