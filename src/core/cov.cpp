// The covariance framework: descriptor checks, kernel lookup, the public covariance() call and
// the conversions every kernel shares (shifted sums -> moments -> the C x C result).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <type_traits>

#include "core/cov_backend.hpp"
#include "core/registry.hpp"
#include "kafel/error.hpp"

namespace kafel {

bool is_cov_sample_type(DType t) {
  return t == DType::f32 || t == DType::c64 || t == DType::ci8 || t == DType::ci16;
}

std::string cov_sample_types_text() {
  return "f32, cf32, ci8, ci16";
}

namespace {

// Component i (floats, int8 or int16 by the sample type) of the data, widened to double.
double component(const void* data, DType type, std::int64_t i) {
  switch (type) {
    case DType::ci8:
      return static_cast<const std::int8_t*>(data)[i];
    case DType::ci16:
      return static_cast<const std::int16_t*>(data)[i];
    default:
      return static_cast<const float*>(data)[i];
  }
}

}  // namespace

double SamplesView::re(std::int64_t c, std::int64_t n, std::int64_t b) const {
  const std::int64_t e = offset(c, n, b);
  return component(data, type, is_complex(type) ? 2 * e : e);
}

double SamplesView::im(std::int64_t c, std::int64_t n, std::int64_t b) const {
  return is_complex(type) ? component(data, type, 2 * offset(c, n, b) + 1) : 0.0;
}

std::string CovDesc::shape() const {
  std::string s = batch > 1 ? std::to_string(batch) + " x " : "";
  s += std::to_string(channels) + "x" + std::to_string(samples) + " " +
       std::string(to_string(layout));
  if (type != DType::f32) s += " " + std::string(to_string(type));
  return s;
}

void CovDesc::validate() const {
  if (!is_cov_sample_type(type))
    throw InvalidArgument("covariance takes " + cov_sample_types_text() + " samples (got " +
                          std::string(to_string(type)) + ")");
  if (channels < 1)
    throw InvalidArgument("covariance needs at least one channel (got " + std::to_string(channels) +
                          ")");
  if (batch < 1)
    throw InvalidArgument("covariance batch must be >= 1 (got " + std::to_string(batch) + ")");
  if (ddof < 0) throw InvalidArgument("ddof must be >= 0 (got " + std::to_string(ddof) + ")");
  if (samples <= ddof)
    throw InvalidArgument("covariance needs more samples than ddof: N = " +
                          std::to_string(samples) + ", ddof = " + std::to_string(ddof));
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max() / 16;
  if (channels > (std::int64_t(1) << 20) || samples > kMax / channels ||
      batch > kMax / (channels * samples) || batch * channels * channels > (std::int64_t(1) << 40))
    throw InvalidArgument("covariance shape " + shape() + " is too large");
}

void CovMoments::reset(const CovDesc& desc) {
  const auto c = static_cast<std::size_t>(desc.channels), b = static_cast<std::size_t>(desc.batch);
  mean.assign(b * c, 0.0);
  comoment.assign(b * c * c, 0.0);
  mean_im.assign(desc.complex() ? b * c : 0, 0.0);
  comoment_im.assign(desc.complex() ? b * c * c : 0, 0.0);
}

LaneAddressing lane_addressing(const CovArgs& a) {
  const SamplesView v = a.view();
  const int comps = a.desc.complex() ? 2 : 1;
  const std::int64_t s = v.tight_stride();
  LaneAddressing l;
  l.comps = comps;
  l.channel_step = comps * (a.desc.layout == SampleLayout::Planar ? s : 1);
  l.sample_step = comps * (a.desc.layout == SampleLayout::Planar ? 1 : s);
  l.batch_step = comps * v.tight_batch_stride();
  return l;
}

void moments_from_shifted(std::int64_t channels, std::int64_t samples, const double* pilot,
                          const double* sum, const double* q_packed, CovMoments& out) {
  const CovDesc d{channels, samples, SampleLayout::Planar, 0};
  out.reset(d);
  moments_from_lanes(d, 0, pilot, sum, q_packed, out);
}

void moments_from_lanes(const CovDesc& desc, std::int64_t b, const double* pilot, const double* sum,
                        const double* q_packed, CovMoments& out) {
  const std::int64_t c = desc.channels, k = desc.lanes();
  const double n = static_cast<double>(desc.samples);
  // Centred lane co-moment M(x, y), any order of x and y.
  auto m = [&](std::int64_t x, std::int64_t y) {
    const std::int64_t hi = std::max(x, y), lo = std::min(x, y);
    return q_packed[hi * (hi + 1) / 2 + lo] - sum[hi] * sum[lo] / n;
  };
  double* mean = &out.mean[b * c];
  double* com = &out.comoment[b * c * c];
  if (!desc.complex()) {
    for (std::int64_t i = 0; i < k; ++i) mean[i] = pilot[i] + sum[i] / n;
    for (std::int64_t i = 0; i < c; ++i)
      for (std::int64_t j = 0; j <= i; ++j) com[i * c + j] = com[j * c + i] = m(i, j);
    return;
  }
  double* mean_im = &out.mean_im[b * c];
  double* com_im = &out.comoment_im[b * c * c];
  for (std::int64_t i = 0; i < c; ++i) {
    mean[i] = pilot[2 * i] + sum[2 * i] / n;
    mean_im[i] = pilot[2 * i + 1] + sum[2 * i + 1] / n;
  }
  for (std::int64_t i = 0; i < c; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      const double re = m(2 * i, 2 * j) + m(2 * i + 1, 2 * j + 1);
      const double im = i == j ? 0.0 : m(2 * i + 1, 2 * j) - m(2 * i, 2 * j + 1);
      com[i * c + j] = com[j * c + i] = re;
      com_im[i * c + j] = im;
      com_im[j * c + i] = -im;
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

float lane_pilot(const CovArgs& a, std::int64_t k, std::int64_t b) {
  if (a.desc.integer()) return 0.0f;
  const LaneAddressing l = lane_addressing(a);
  const float* x = a.f32();
  const std::int64_t count = std::min(a.desc.samples, kPilotSamples);
  float s = 0.0f;
  for (std::int64_t n = 0; n < count; ++n) s += x[l.offset(k, n, b)];
  return s / static_cast<float>(count);
}

CovResult finalize_cov(const CovDesc& desc, const CovMoments& m) {
  const auto c = static_cast<std::size_t>(desc.channels);
  const auto nb = static_cast<std::size_t>(desc.batch);
  const bool cx = desc.complex();
  if (m.mean.size() != nb * c || m.comoment.size() != nb * c * c ||
      (cx && (m.comoment_im.size() != nb * c * c || m.mean_im.size() != nb * c)))
    throw DeviceError("covariance kernel returned " + std::to_string(m.comoment.size()) +
                      " co-moments for " + std::to_string(nb) + " x " + std::to_string(c) +
                      " channels");
  CovResult r;
  r.channels = desc.channels;
  r.samples = desc.samples;
  r.ddof = desc.ddof;
  r.batch = desc.batch;
  r.type = desc.type;
  r.mean = m.mean;
  if (cx) r.mean_im = m.mean_im;
  r.cov.resize(nb * c * c);
  if (cx) r.cov_im.resize(nb * c * c);
  if (!cx) r.cov_f32.resize(nb * c * c);
  const double div = static_cast<double>(desc.samples - desc.ddof);
  for (std::size_t b = 0; b < nb; ++b)
    for (std::size_t i = 0; i < c; ++i)
      for (std::size_t j = 0; j < c; ++j) {
        // Mirror the lower triangle so the result is exactly (Hermitian) symmetric whatever the
        // kernel did: the upper entry is the conjugate of the lower one, the diagonal is real.
        const std::size_t lo = b * c * c + std::max(i, j) * c + std::min(i, j);
        const std::size_t at = b * c * c + i * c + j;
        const double v = m.comoment[lo] / div;
        r.cov[at] = v;
        if (cx) {
          const double w = i == j ? 0.0 : m.comoment_im[lo] / div;
          r.cov_im[at] = i >= j ? w : -w;
          if (std::isnan(w) && !std::isnan(v)) ++r.nan_entries;
        } else {
          r.cov_f32[at] = static_cast<float>(v);
        }
        if (std::isnan(v)) ++r.nan_entries;
      }
  return r;
}

CovResult CovResult::batch_result(std::int64_t b) const {
  if (b < 0 || b >= batch)
    throw InvalidArgument("batch " + std::to_string(b) + " out of range 0.." +
                          std::to_string(batch - 1));
  CovResult r = *this;
  r.batch = 1;
  const auto c = static_cast<std::size_t>(channels), cc = c * c;
  auto slice = [&](const auto& v, std::size_t n) {
    using V = std::decay_t<decltype(v)>;
    return v.empty() ? V{} : V(v.begin() + b * n, v.begin() + (b + 1) * n);
  };
  r.cov = slice(cov, cc);
  r.cov_im = slice(cov_im, cc);
  r.cov_f32 = slice(cov_f32, cc);
  r.mean = slice(mean, c);
  r.mean_im = slice(mean_im, c);
  r.nan_entries = 0;
  for (double v : r.cov) r.nan_entries += std::isnan(v);
  return r;
}

std::vector<double> lower_packed(const CovResult& r, std::int64_t b, std::vector<double>* im) {
  const std::int64_t c = r.channels;
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(c * (c + 1) / 2));
  if (im) im->clear();
  for (std::int64_t i = 0; i < c; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      out.push_back(r.at(i, j, b));
      if (im) im->push_back(r.imag_at(i, j, b));
    }
  return out;
}

double cov_rel_err(const CovResult& cov, const CovResult& ref) {
  if (cov.cov.size() != ref.cov.size() || cov.cov_im.size() != ref.cov_im.size())
    throw InvalidArgument("cov_rel_err: matrices of different sizes or kinds");
  double num = 0, den = 0;
  auto add = [&](const std::vector<double>& x, const std::vector<double>& y) {
    for (std::size_t i = 0; i < y.size(); ++i) {
      const bool na = std::isnan(x[i]), nb = std::isnan(y[i]);
      if (na && nb) continue;
      if (na != nb) return false;
      const double d = x[i] - y[i];
      num += d * d;
      den += y[i] * y[i];
    }
    return true;
  };
  if (!add(cov.cov, ref.cov) || !add(cov.cov_im, ref.cov_im))
    return std::numeric_limits<double>::infinity();
  if (den == 0) return num == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(num / den);
}

std::string CovChoice::config() const {
  return params.empty() ? "(" + source + ")" : format_params(params) + " (" + source + ")";
}

std::string cov_kernel_limits(const CovKernel& k, const Device& device, const CovDesc& desc,
                              const Params& params) {
  if (std::find(k.sample_types.begin(), k.sample_types.end(), desc.type) == k.sample_types.end())
    return k.name + " does not take " + std::string(to_string(desc.type)) + " samples";
  if (k.max_channels && desc.channels > k.max_channels)
    return k.name + " handles at most " + std::to_string(k.max_channels) + " channels (got " +
           std::to_string(desc.channels) + ")";
  if (k.can_implement) return k.can_implement(device, desc, params);
  return "";
}

namespace {

const CovKernel* preferred_cov_kernel(const Device& device, const CovDesc& desc) {
  const CovKernel* best = nullptr;
  for (const auto& k : cov_kernels_for(device)) {
    if (k.preference <= 0 || k.baseline || desc.lanes() < k.min_default_lanes) continue;
    if (k.max_default_lanes && desc.lanes() > k.max_default_lanes) continue;
    if (desc.batch > 1 && desc.samples < k.min_default_batch_samples) continue;
    if (k.max_default_samples && desc.batch * desc.samples > k.max_default_samples) continue;
    if (!cov_kernel_limits(k, device, desc, k.params.defaults()).empty()) continue;
    if (!best || k.preference > best->preference) best = &k;
  }
  return best;
}

const CovKernel& default_kernel_for(const Device& device, const CovDesc& desc) {
  const CovKernel* best = preferred_cov_kernel(device, desc);
  if (!best)
    throw Unsupported("no covariance kernel for " + desc.shape() + " samples on " + device.id);
  return *best;
}

}  // namespace

std::string default_cov_kernel(const Device& device, std::int64_t channels, DType sample_type) {
  CovDesc d{channels, 2, SampleLayout::Planar, 1, sample_type};
  return default_kernel_for(device, d).name;
}

CovChoice choose_cov(const Device& device, const CovDesc& desc, const std::string& kernel,
                     const Params& overrides) {
  desc.validate();
  const CovKernel& k =
      kernel.empty() ? default_kernel_for(device, desc) : find_cov_kernel(device, kernel);
  // Unknown names, values outside their range and the constraint all throw here, before any
  // plan is made.
  Params params = k.params.defaults();
  for (const auto& [name, v] : overrides) params[k.params.get(name).name] = v;
  if (const std::string why = k.params.check(params); !why.empty())
    throw InvalidArgument("invalid kernel parameters " + k.params.format(params) + " for " +
                          k.name + ": " + why);
  if (const std::string why = cov_kernel_limits(k, device, desc, params); !why.empty())
    throw Unsupported(why + " (" + desc.shape() + " on " + device.id + ")");
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
  if (s.batch_stride < 0)
    throw InvalidArgument("covariance: negative batch stride " + std::to_string(s.batch_stride));
}

}  // namespace

CovDesc desc_of(const SamplesView& s, std::int64_t ddof) {
  return CovDesc{s.channels, s.samples, s.layout, ddof, s.type, s.batch};
}

CovResult covariance(const Device& device, const SamplesView& s, const CovOptions& opt) {
  const CovDesc desc = desc_of(s, opt.ddof);
  desc.validate();
  check_view(s);
  const CovChoice choice = choose_cov(device, desc, opt.kernel, opt.params);
  const CovKernel& k = find_cov_kernel(device, choice.kernel);
  auto t0 = std::chrono::steady_clock::now();
  auto plan = k.make_plan(device, desc, choice.params);
  plan->load(CovArgs{desc, s.data, s.tight_stride(), s.tight_batch_stride()}, 1);
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
    const auto n = (static_cast<std::size_t>(desc.min_bytes()) + 3) / 4;
    for (int i = 0; i < depth; ++i) bufs_.emplace_back(n);
    results_.resize(depth);
  }
  int depth() const override { return static_cast<int>(bufs_.size()); }
  float* buffer(int i) override { return bufs_.at(i).data(); }
  void submit(int i) override {
    const std::int64_t stride =
        desc_.layout == SampleLayout::Planar ? desc_.samples : desc_.channels;
    plan_.load(CovArgs{desc_, bufs_.at(i).data(), stride, 0}, 1);
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
