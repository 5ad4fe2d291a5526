// The covariance framework: descriptor checks, kernel lookup, the public covariance() call and
// the conversions every kernel shares (shifted sums -> moments -> the C x C result).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "core/cov_backend.hpp"
#include "core/registry.hpp"
#include "kafel/error.hpp"

namespace kafel {

std::string CovDesc::shape() const {
  return std::to_string(channels) + "x" + std::to_string(samples) + " " +
         std::string(to_string(layout));
}

void CovDesc::validate() const {
  if (channels < 1)
    throw InvalidArgument("covariance needs at least one channel (got " + std::to_string(channels) +
                          ")");
  if (ddof < 0) throw InvalidArgument("ddof must be >= 0 (got " + std::to_string(ddof) + ")");
  if (samples <= ddof)
    throw InvalidArgument("covariance needs more samples than ddof: N = " +
                          std::to_string(samples) + ", ddof = " + std::to_string(ddof));
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max() / 8;
  if (samples > kMax / channels || channels > (std::int64_t(1) << 20))
    throw InvalidArgument("covariance shape " + shape() + " is too large");
}

void moments_from_shifted(std::int64_t channels, std::int64_t samples, const double* pilot,
                          const double* sum, const double* q_packed, CovMoments& out) {
  const auto c = static_cast<std::size_t>(channels);
  const double n = static_cast<double>(samples);
  out.mean.assign(c, 0.0);
  out.comoment.assign(c * c, 0.0);
  for (std::size_t i = 0; i < c; ++i) out.mean[i] = pilot[i] + sum[i] / n;
  for (std::size_t i = 0; i < c; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      const double m = q_packed[i * (i + 1) / 2 + j] - sum[i] * sum[j] / n;
      out.comoment[i * c + j] = m;
      out.comoment[j * c + i] = m;
    }
}

float pilot_value(const float* data, std::int64_t stride, SampleLayout layout, std::int64_t c,
                  std::int64_t samples) {
  const std::int64_t k = samples < kPilotSamples ? samples : kPilotSamples;
  float s = 0.0f;
  for (std::int64_t n = 0; n < k; ++n)
    s += layout == SampleLayout::Planar ? data[c * stride + n] : data[n * stride + c];
  return s / static_cast<float>(k);
}

CovResult finalize_cov(const CovDesc& desc, const CovMoments& m) {
  const auto c = static_cast<std::size_t>(desc.channels);
  if (m.mean.size() != c || m.comoment.size() != c * c)
    throw DeviceError("covariance kernel returned " + std::to_string(m.comoment.size()) +
                      " co-moments for " + std::to_string(c) + " channels");
  CovResult r;
  r.channels = desc.channels;
  r.samples = desc.samples;
  r.ddof = desc.ddof;
  r.mean = m.mean;
  r.cov.resize(c * c);
  r.cov_f32.resize(c * c);
  const double div = static_cast<double>(desc.samples - desc.ddof);
  for (std::size_t i = 0; i < c; ++i)
    for (std::size_t j = 0; j < c; ++j) {
      // Mirror the lower triangle so the result is exactly symmetric whatever the kernel did.
      const double v = m.comoment[std::max(i, j) * c + std::min(i, j)] / div;
      r.cov[i * c + j] = v;
      r.cov_f32[i * c + j] = static_cast<float>(v);
      if (std::isnan(v)) ++r.nan_entries;
    }
  return r;
}

double cov_rel_err(const CovResult& cov, const CovResult& ref) {
  if (cov.cov.size() != ref.cov.size())
    throw InvalidArgument("cov_rel_err: matrices of different sizes");
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.cov.size(); ++i) {
    const bool na = std::isnan(cov.cov[i]), nb = std::isnan(ref.cov[i]);
    if (na && nb) continue;
    if (na != nb) return std::numeric_limits<double>::infinity();
    const double d = cov.cov[i] - ref.cov[i];
    num += d * d;
    den += ref.cov[i] * ref.cov[i];
  }
  if (den == 0) return num == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(num / den);
}

std::string CovChoice::config() const {
  return params.empty() ? "(" + source + ")" : format_params(params) + " (" + source + ")";
}

namespace {

bool takes_f32(const CovKernel& k) {
  return std::find(k.sample_types.begin(), k.sample_types.end(), DType::f32) !=
         k.sample_types.end();
}

// "" when `k` can do the shape, else why not.
std::string cov_limits(const CovKernel& k, const CovDesc& desc) {
  if (!takes_f32(k)) return k.name + " does not take float32 samples";
  if (k.max_channels && desc.channels > k.max_channels)
    return k.name + " handles at most " + std::to_string(k.max_channels) + " channels (got " +
           std::to_string(desc.channels) + ")";
  return "";
}

const CovKernel* preferred_cov_kernel(const Device& device, std::int64_t channels,
                                      DType sample_type) {
  const CovKernel* best = nullptr;
  for (const auto& k : cov_kernels_for(device)) {
    if (k.preference <= 0 || k.baseline) continue;
    if (k.max_channels && channels > k.max_channels) continue;
    if (std::find(k.sample_types.begin(), k.sample_types.end(), sample_type) ==
        k.sample_types.end())
      continue;
    if (!best || k.preference > best->preference) best = &k;
  }
  return best;
}

}  // namespace

std::string default_cov_kernel(const Device& device, std::int64_t channels, DType sample_type) {
  const CovKernel* best = preferred_cov_kernel(device, channels, sample_type);
  if (!best)
    throw Unsupported("no covariance kernel for " + std::to_string(channels) + " channels of " +
                      std::string(to_string(sample_type)) + " samples on " + device.id);
  return best->name;
}

CovChoice choose_cov(const Device& device, const CovDesc& desc, const std::string& kernel,
                     const Params& overrides) {
  desc.validate();
  const CovKernel& k = kernel.empty()
                           ? find_cov_kernel(device, default_cov_kernel(device, desc.channels))
                           : find_cov_kernel(device, kernel);
  if (const std::string why = cov_limits(k, desc); !why.empty())
    throw Unsupported(why + " (" + desc.shape() + " on " + device.id + ")");
  // Unknown names, values outside their range and the constraint all throw here, before any
  // plan is made.
  Params params = k.params.defaults();
  for (const auto& [name, v] : overrides) params[k.params.get(name).name] = v;
  if (const std::string why = k.params.check(params); !why.empty())
    throw InvalidArgument("invalid kernel parameters " + k.params.format(params) + " for " +
                          k.name + ": " + why);
  return {k.name, params, overrides.empty() ? "default" : "user"};
}

namespace {

void check_view(const SamplesView& s) {
  if (s.channels >= 1 && s.samples >= 1 && s.data == nullptr)
    throw InvalidArgument("covariance: null sample pointer");
  const std::int64_t need = s.layout == SampleLayout::Planar ? s.samples : s.channels;
  if (s.stride != 0 && s.stride < need)
    throw InvalidArgument("covariance: stride " + std::to_string(s.stride) + " < " +
                          std::to_string(need));
}

}  // namespace

CovResult covariance(const Device& device, const SamplesView& s, const CovOptions& opt) {
  const CovDesc desc{s.channels, s.samples, s.layout, opt.ddof};
  desc.validate();
  check_view(s);
  const CovChoice choice = choose_cov(device, desc, opt.kernel, opt.params);
  const CovKernel& k = find_cov_kernel(device, choice.kernel);
  auto t0 = std::chrono::steady_clock::now();
  auto plan = k.make_plan(device, desc, choice.params);
  plan->load(CovArgs{desc, s.data, s.tight_stride()}, 1);
  const double kernel_ms = plan->run(0);
  CovMoments m;
  plan->fetch(m);
  auto t1 = std::chrono::steady_clock::now();
  CovResult r = finalize_cov(desc, m);
  r.kernel = k.name;
  r.kernel_ms = kernel_ms;
  r.total_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  return r;
}

namespace {

// Host buffers; each submit runs load + run + fetch before returning.
class SyncStream : public CovStream {
 public:
  SyncStream(CovPlan& plan, const CovDesc& desc, int depth) : plan_(plan), desc_(desc) {
    const auto n = static_cast<std::size_t>(desc.channels * desc.samples);
    for (int i = 0; i < depth; ++i) bufs_.emplace_back(n);
    results_.resize(depth);
  }
  int depth() const override { return static_cast<int>(bufs_.size()); }
  float* buffer(int i) override { return bufs_.at(i).data(); }
  void submit(int i) override {
    const std::int64_t stride =
        desc_.layout == SampleLayout::Planar ? desc_.samples : desc_.channels;
    plan_.load(CovArgs{desc_, bufs_.at(i).data(), stride}, 1);
    plan_.run(0);
    plan_.fetch(results_.at(i));
  }
  void wait(int i, CovMoments& out) override { out = results_.at(i); }

 private:
  CovPlan& plan_;
  CovDesc desc_;
  std::vector<std::vector<float>> bufs_;
  std::vector<CovMoments> results_;
};

}  // namespace

std::unique_ptr<CovStream> make_sync_stream(CovPlan& plan, const CovDesc& desc, int depth) {
  return std::make_unique<SyncStream>(plan, desc, depth);
}

}  // namespace kafel
