// Covariance rung ocl.herk (kernels/cov_herk.cl): the tiled SYRK/HERK kernel for any channel
// count, sample type (f32, cf32, ci8, ci16) and batch. Device buffers hold every batch; the
// host merges the work-groups' float64 (int64) tile partials in a fixed order.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/registry.hpp"
#include "opencl/runtime.hpp"

namespace kafel {

namespace {

constexpr std::int64_t kTile = 64, kGroup = 256, kMinRange = 1024;

int mode_of(DType t) {
  switch (t) {
    case DType::c64:
      return 1;
    case DType::ci8:
      return 2;
    case DType::ci16:
      return 3;
    default:
      return 0;
  }
}

// Bytes of local memory the kernel needs: two chunk panels plus the lane-sum reduction.
std::uint64_t local_bytes(std::int64_t kc) {
  const std::uint64_t panel = std::uint64_t(kc) * (kTile + 4) * 4;
  const std::uint64_t loads = std::uint64_t(kTile * kc / kGroup);
  return 2 * panel + kGroup * loads * 8;
}

// The samples of every batch as one tight array (copied only when the caller's strides differ).
const void* tight_block(const CovArgs& a, std::vector<char>& packed) {
  const SamplesView v = a.view();
  const bool planar = a.desc.layout == SampleLayout::Planar;
  const std::int64_t lines = planar ? a.desc.channels : a.desc.samples;
  const std::int64_t len = planar ? a.desc.samples : a.desc.channels;
  const auto es = static_cast<std::int64_t>(dtype_size(a.desc.type));
  if (v.tight_stride() == len && (a.desc.batch == 1 || v.tight_batch_stride() == lines * len))
    return a.data;
  packed.resize(static_cast<std::size_t>(a.desc.min_bytes()));
  const auto* in = static_cast<const char*>(a.data);
  for (std::int64_t b = 0; b < a.desc.batch; ++b)
    for (std::int64_t l = 0; l < lines; ++l)
      std::memcpy(&packed[std::size_t(((b * lines + l) * len) * es)],
                  in + (b * v.tight_batch_stride() + l * v.tight_stride()) * es,
                  std::size_t(len * es));
  return packed.data();
}

class OclTiledPlan : public CovPlan {
 public:
  OclTiledPlan(const Device& dev, const CovDesc& d, const Params& p)
      : ctx_(ocl::Context::get(dev)), desc_(d) {
    const std::int64_t kc = p.at("KC");
    const std::int64_t k = d.lanes();
    rows_ = (k + kTile - 1) / kTile;
    tiles_ = rows_ * (rows_ + 1) / 2;
    cl_uint cu = 1;
    ocl::check(
        clGetDeviceInfo(ctx_.device(), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cu), &cu, nullptr),
        "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)");
    // Enough work-groups to fill the device, no sample range shorter than kMinRange.
    const std::int64_t target = std::int64_t(cu) * p.at("GPC");
    const std::int64_t by_device = (target + tiles_ * d.batch - 1) / (tiles_ * d.batch);
    splits_ =
        std::clamp<std::int64_t>(by_device, 1, std::max<std::int64_t>(1, d.samples / kMinRange));
    range_ = ocl::round_up((d.samples + splits_ - 1) / splits_, kc);
    splits_ = (d.samples + range_ - 1) / range_;
    const bool planar = d.layout == SampleLayout::Planar;
    prog_ = ocl::build(
        ctx_, {"cov_herk.cl"},
        {{"MODE", mode_of(d.type)}, {"MAP", planar ? 1 : 0}, {"KC", kc}, {"FLUSH", p.at("FLUSH")}});
    pilot_kernel_ = prog_.kernel("cov_pilot");
    kernel_ = prog_.kernel("cov_herk");
    read_kernel_ = prog_.kernel("cov_readpass");
    const std::size_t w = std::size_t(kTile * kTile + kTile);
    partial_ = ocl::Buffer(ctx_, std::size_t(d.batch * tiles_ * splits_) * w * 8);
    pilot_ = ocl::Buffer(ctx_, std::size_t(d.batch * k) * 4);
    scratch_ = ocl::Buffer(ctx_, 4096 * 4);
  }

  void load(const CovArgs& a, int slots) override {
    const std::size_t bytes = std::size_t(desc_.min_bytes());
    std::vector<char> packed;
    const void* src = tight_block(a, packed);
    if (slots_.size() != std::size_t(std::max(1, slots))) {
      slots_.clear();
      for (int s = 0; s < std::max(1, slots); ++s)
        slots_.emplace_back(ctx_, bytes, CL_MEM_READ_ONLY);
    }
    for (auto& b : slots_) b.write(ctx_, src, bytes);
    tight_ = CovArgs{desc_, nullptr, 0, 0};
  }

  double run(int slot) override {
    const ocl::Buffer& x = slots_.at(slot);
    const LaneAddressing at = lane_addressing(tight_);
    const cl_long cs = at.channel_step, ss = at.sample_step, bs = at.batch_step;
    const cl_int lanes = cl_int(desc_.lanes());
    const cl_long n = desc_.samples;
    pilot_kernel_.args(x, cs, ss, bs, lanes, n, cl_int(desc_.batch), pilot_);
    std::vector<ocl::Event> ev;
    ev.push_back(ocl::launch(ctx_, pilot_kernel_, {std::size_t(lanes * desc_.batch)}, {}));
    kernel_.args(x, cs, ss, bs, lanes, n, cl_long(range_), cl_int(tiles_), cl_int(splits_), pilot_,
                 partial_);
    ev.push_back(ocl::launch(ctx_, kernel_,
                             {std::size_t(tiles_ * splits_ * kGroup), std::size_t(desc_.batch)},
                             {std::size_t(kGroup), 1}));
    return ocl::span_ms(ev);
  }

  void fetch(CovMoments& out) override {
    const std::int64_t k = desc_.lanes(), nb = desc_.batch, w = kTile * kTile + kTile;
    std::vector<float> pilot(std::size_t(nb * k));
    pilot_.read(ctx_, pilot.data(), pilot.size() * 4);
    std::vector<char> raw(std::size_t(nb * tiles_ * splits_ * w) * 8);
    partial_.read(ctx_, raw.data(), raw.size());
    out.reset(desc_);
    if (desc_.integer())
      merge(reinterpret_cast<const std::int64_t*>(raw.data()), pilot, out);
    else
      merge(reinterpret_cast<const double*>(raw.data()), pilot, out);
  }

  std::string timer() const override { return "opencl-events"; }

  double read_floor_ms(int slot) override {
    const cl_long words = cl_long(desc_.min_bytes() / 4);
    read_kernel_.args(slots_.at(slot), words, scratch_);
    return ocl::launch(ctx_, read_kernel_, {std::size_t(kGroup * 64)}, {std::size_t(kGroup)})
        .wait_ms();
  }

 private:
  // Sums the splits of every tile in order (float64 or exact int64), then lanes -> moments.
  template <class Wide>
  void merge(const Wide* part, const std::vector<float>& pilot, CovMoments& out) const {
    const std::int64_t k = desc_.lanes(), w = kTile * kTile + kTile;
    std::vector<double> p(k), sum(k), packed(std::size_t(k * (k + 1) / 2));
    for (std::int64_t b = 0; b < desc_.batch; ++b) {
      auto tile_sum = [&](std::int64_t t, std::int64_t at) {
        Wide s = 0;
        for (std::int64_t sp = 0; sp < splits_; ++sp)
          s += part[((b * tiles_ + t) * splits_ + sp) * w + at];
        return static_cast<double>(s);
      };
      for (std::int64_t i = 0; i < k; ++i) {
        const std::int64_t ti = i / kTile;
        p[i] = pilot[b * k + i];
        sum[i] = tile_sum(ti * (ti + 1) / 2 + ti, kTile * kTile + i % kTile);
        for (std::int64_t j = 0; j <= i; ++j) {
          const std::int64_t tj = j / kTile;
          packed[i * (i + 1) / 2 + j] =
              tile_sum(ti * (ti + 1) / 2 + tj, (i % kTile) * kTile + j % kTile);
        }
      }
      moments_from_lanes(desc_, b, p.data(), sum.data(), packed.data(), out);
    }
  }

  ocl::Context& ctx_;
  CovDesc desc_;
  CovArgs tight_;
  std::int64_t rows_ = 1, tiles_ = 1, splits_ = 1, range_ = 0;
  ocl::Program prog_;
  ocl::Kernel pilot_kernel_, kernel_, read_kernel_;
  ocl::Buffer partial_, pilot_, scratch_;
  std::vector<ocl::Buffer> slots_;
};

ParamSpace herk_space() {
  ParamSpace s;
  s.params = {
      param("KC", 16, {8, 16, 32}, 4, 64, "samples per local-memory chunk (a multiple of 4)"),
      param("FLUSH", 16, {8, 16, 32}, 1, 64,
            "chunks per float sum before it is added in float64 (KC*FLUSH <= 512)"),
      param("GPC", 4, {2, 4, 8}, 1, 1024, "work-groups per compute unit (at least)")};
  s.constraint = [](const Params& p) -> std::string {
    if (p.at("KC") % 4) return "KC must be a multiple of 4";
    if (p.at("KC") * p.at("FLUSH") > 512)
      return "KC*FLUSH must be <= 512 (float sums of at most 512 products)";
    return "";
  };
  return s;
}

// "" when the device can run the kernel for `d`, else why not.
std::string herk_can_implement(const Device& dev, const CovDesc& d, const Params& p) {
  if (!d.integer() && !dev.caps.has(Cap::fp64))
    return "ocl.herk adds float sums in double: " + dev.id + " lacks cl_khr_fp64";
  auto& ctx = ocl::Context::get(dev);
  if (ctx.max_work_group_size() < std::size_t(kGroup))
    return "ocl.herk needs work-groups of " + std::to_string(kGroup) + " (" + dev.id + " allows " +
           std::to_string(ctx.max_work_group_size()) + ")";
  const std::uint64_t need = local_bytes(p.at("KC"));
  if (need > ctx.local_memory())
    return "ocl.herk KC=" + std::to_string(p.at("KC")) + " needs " + std::to_string(need) +
           " bytes of local memory (" + dev.id + " has " + std::to_string(ctx.local_memory()) + ")";
  const std::int64_t rows = (d.lanes() + kTile - 1) / kTile;
  const double partial =
      double(d.batch) * double(rows * (rows + 1) / 2) * double(kTile * kTile + kTile) * 8.0;
  if (d.min_bytes() > double(ctx.max_alloc()) || partial > double(ctx.max_alloc()))
    return "ocl.herk: " + d.shape() + " exceeds the device's largest buffer (" +
           std::to_string(ctx.max_alloc()) + " bytes)";
  return "";
}

CovKernel herk_kernel() {
  CovKernel k;
  k.name = "ocl.herk";
  k.summary =
      "tiled SYRK/HERK: lower 64x64 lane tiles, chunks of samples read once into local memory, "
      "4x4 micro-tiles in float (int), float64 (int64) merge; any channels, complex, batches";
  k.rung = 2;
  k.sample_types = {DType::f32, DType::c64, DType::ci8, DType::ci16};
  k.params = herk_space();
  k.preference = 5;  // below ocl.onepass, which wins where it can (f32, <= 16 channels, 1 block)
  k.can_implement = herk_can_implement;
  k.make_plan = [](const Device& dev, const CovDesc& d,
                   const Params& p) -> std::unique_ptr<CovPlan> {
    if (const std::string why = herk_can_implement(dev, d, p); !why.empty()) throw Unsupported(why);
    return std::make_unique<OclTiledPlan>(dev, d, p);
  };
  return k;
}

const Register registered{herk_kernel()};

}  // namespace
}  // namespace kafel
