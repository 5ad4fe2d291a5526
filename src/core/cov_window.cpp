// Estimates over streams of samples: sliding windows assembled from segment moments by the
// float64 Chan merge, exponential forgetting over the estimates, and forward-backward averaging.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/cov_backend.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"

namespace kafel {

namespace {

// Below this many samples per segment the windows are computed directly (a batch with
// batch_stride = hop): merging many tiny segments would cost more than reading them again.
constexpr std::int64_t kMinSegment = 64;

std::size_t idx(std::int64_t c, std::int64_t i, std::int64_t j) {
  return static_cast<std::size_t>(i * c + j);
}

// Moments of a run of samples of one batch: count, complex mean, co-moment M (C x C).
struct Run {
  std::int64_t n = 0;
  std::vector<double> mean, mean_im, m, m_im;
};

// Batch b of a ddof-0 segment result as a run (M = cov * n).
Run run_of(const CovResult& r, std::int64_t b) {
  const std::int64_t c = r.channels;
  Run x;
  x.n = r.samples;
  const double n = static_cast<double>(r.samples - r.ddof);
  x.mean.assign(r.mean.begin() + b * c, r.mean.begin() + (b + 1) * c);
  if (r.complex()) x.mean_im.assign(r.mean_im.begin() + b * c, r.mean_im.begin() + (b + 1) * c);
  x.m.resize(static_cast<std::size_t>(c * c));
  for (std::size_t k = 0; k < x.m.size(); ++k) x.m[k] = r.cov[b * c * c + k] * n;
  if (r.complex()) {
    x.m_im.resize(x.m.size());
    for (std::size_t k = 0; k < x.m.size(); ++k) x.m_im[k] = r.cov_im[b * c * c + k] * n;
  }
  return x;
}

// Chan et al.: a += b, with delta = mean_b - mean_a, M += M_b + delta delta^H n_a n_b / n.
void merge(Run& a, const Run& b, std::int64_t c) {
  const double na = static_cast<double>(a.n), nb = static_cast<double>(b.n), n = na + nb;
  const double w = na * nb / n;
  const bool cx = !a.m_im.empty();
  std::vector<double> dr(c), di(c, 0.0);
  for (std::int64_t i = 0; i < c; ++i) {
    dr[i] = b.mean[i] - a.mean[i];
    if (cx) di[i] = b.mean_im[i] - a.mean_im[i];
  }
  for (std::int64_t i = 0; i < c; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      // delta_i conj(delta_j)
      a.m[idx(c, i, j)] += b.m[idx(c, i, j)] + (dr[i] * dr[j] + di[i] * di[j]) * w;
      if (cx) a.m_im[idx(c, i, j)] += b.m_im[idx(c, i, j)] + (di[i] * dr[j] - dr[i] * di[j]) * w;
    }
  for (std::int64_t i = 0; i < c; ++i) {
    a.mean[i] += dr[i] * nb / n;
    if (cx) a.mean_im[i] += di[i] * nb / n;
  }
  a.n += b.n;
}

// A batch-1 result from a run (lower triangle mirrored, conjugated; ddof applied).
CovResult result_of(const Run& x, const CovDesc& d) {
  const std::int64_t c = d.channels;
  CovMoments m;
  CovDesc one = d;
  one.samples = x.n;
  one.batch = 1;
  m.mean = x.mean;
  m.mean_im = x.mean_im;
  m.comoment = x.m;
  m.comoment_im = x.m_im;
  if (d.complex() && m.mean_im.empty()) m.mean_im.assign(c, 0.0);
  if (d.complex() && m.comoment_im.empty()) m.comoment_im.assign(c * c, 0.0);
  return finalize_cov(one, m);
}

}  // namespace

CovResult forward_backward(const CovResult& r) {
  CovResult out = r;
  const std::int64_t c = r.channels;
  for (std::int64_t b = 0; b < r.batch; ++b) {
    const std::size_t base = static_cast<std::size_t>(b * c * c);
    for (std::int64_t i = 0; i < c; ++i)
      for (std::int64_t j = 0; j < c; ++j) {
        const std::size_t at = base + idx(c, i, j), mirrored = base + idx(c, c - 1 - i, c - 1 - j);
        out.cov[at] = (r.cov[at] + r.cov[mirrored]) / 2;
        if (r.complex()) out.cov_im[at] = (r.cov_im[at] - r.cov_im[mirrored]) / 2;
        if (!out.cov_f32.empty()) out.cov_f32[at] = static_cast<float>(out.cov[at]);
      }
    for (std::int64_t i = 0; i < c; ++i) {
      const std::size_t at = static_cast<std::size_t>(b * c + i);
      const std::size_t mirrored = static_cast<std::size_t>(b * c + c - 1 - i);
      out.mean[at] = (r.mean[at] + r.mean[mirrored]) / 2;
      if (r.complex()) out.mean_im[at] = (r.mean_im[at] - r.mean_im[mirrored]) / 2;
    }
  }
  out.nan_entries = 0;
  for (double v : out.cov) out.nan_entries += std::isnan(v);
  return out;
}

void CovWindowOptions::validate() const {
  if (window < 0)
    throw InvalidArgument("--window must be >= 0 (got " + std::to_string(window) + ")");
  if (hop < 0) throw InvalidArgument("--hop must be >= 0 (got " + std::to_string(hop) + ")");
  if (hop > 0 && window == 0) throw InvalidArgument("--hop needs --window");
  if (hop > window)
    throw InvalidArgument("--hop " + std::to_string(hop) + " exceeds the window of " +
                          std::to_string(window) + " samples (samples would be skipped)");
  if (!(forget >= 0 && forget < 1))
    throw InvalidArgument("--forget lambda must be in [0, 1) (got " + format_num("%g", forget) +
                          ")");
}

CovEstimator::CovEstimator(const CovDesc& desc, const CovWindowOptions& opt)
    : desc_(desc), opt_(opt) {
  opt_.validate();
  if (opt_.window > 0) {
    const std::int64_t hop = opt_.hop ? opt_.hop : opt_.window;
    opt_.hop = hop;
    segment_ = std::gcd(opt_.window, hop);
    per_window_ = opt_.window / segment_;
    per_hop_ = hop / segment_;
  }
}

CovResult CovEstimator::finish(CovResult r) {
  ++estimates_;
  if (opt_.forget > 0) {
    if (estimates_ == 1) {
      state_ = r;
    } else {
      const double l = opt_.forget;
      auto blend = [l](std::vector<double>& s, const std::vector<double>& x) {
        for (std::size_t k = 0; k < s.size(); ++k) s[k] = l * s[k] + (1 - l) * x[k];
      };
      blend(state_.cov, r.cov);
      blend(state_.cov_im, r.cov_im);
      blend(state_.mean, r.mean);
      blend(state_.mean_im, r.mean_im);
      for (std::size_t k = 0; k < state_.cov_f32.size(); ++k)
        state_.cov_f32[k] = static_cast<float>(state_.cov[k]);
      state_.samples = r.samples;
    }
    r = state_;
    r.nan_entries = 0;
    for (double v : r.cov) r.nan_entries += std::isnan(v);
  }
  return opt_.forward_backward ? forward_backward(r) : r;
}

CovResult CovEstimator::push_block(const CovResult& block) {
  if (block.batch != 1)
    throw InvalidArgument("CovEstimator: push one block at a time (got a batch of " +
                          std::to_string(block.batch) + ")");
  return finish(block);
}

std::vector<CovResult> CovEstimator::push_segments(const CovResult& segments) {
  if (segment_ == 0) throw InvalidArgument("CovEstimator: segments pushed without a window");
  if (segments.samples != segment_ || segments.ddof != 0 || segments.channels != desc_.channels)
    throw InvalidArgument("CovEstimator: segments must hold " + std::to_string(segment_) +
                          " samples of " + std::to_string(desc_.channels) +
                          " channels with ddof 0 (got " + std::to_string(segments.samples) +
                          " samples, " + std::to_string(segments.channels) + " channels, ddof " +
                          std::to_string(segments.ddof) + ")");
  std::vector<CovResult> out;
  for (std::int64_t b = 0; b < segments.batch; ++b) {
    ring_.push_back(segments.batch_result(b));
    if (static_cast<std::int64_t>(ring_.size()) > per_window_) ring_.erase(ring_.begin());
    ++seen_;
    const std::int64_t since = seen_ - per_window_;
    if (since < 0 || since % per_hop_ != 0) continue;
    Run w = run_of(ring_.front(), 0);
    for (std::size_t k = 1; k < ring_.size(); ++k) merge(w, run_of(ring_[k], 0), desc_.channels);
    out.push_back(finish(result_of(w, desc_)));
  }
  return out;
}

std::vector<CovResult> covariance_windows(const Device& device, const SamplesView& s,
                                          const CovWindowOptions& windows, const CovOptions& opt) {
  windows.validate();
  if (windows.window <= 0) throw InvalidArgument("covariance_windows needs a window > 0");
  if (s.batch != 1) throw InvalidArgument("covariance_windows takes one run of samples (batch 1)");
  if (windows.window > s.samples)
    throw InvalidArgument("window of " + std::to_string(windows.window) + " samples exceeds the " +
                          std::to_string(s.samples) + " samples given");
  CovDesc d = desc_of(s, opt.ddof);
  d.samples = windows.window;
  d.validate();
  CovEstimator est(d, windows);
  const std::int64_t hop = windows.hop ? windows.hop : windows.window;
  const std::int64_t count = (s.samples - windows.window) / hop + 1;
  const std::int64_t step = s.layout == SampleLayout::Planar ? 1 : s.tight_stride();
  SamplesView v = s;
  v.stride = s.tight_stride();
  std::vector<CovResult> out;
  if (est.segment() < kMinSegment) {  // each window directly: one batch, batch_stride = hop
    v.samples = windows.window;
    v.batch = count;
    v.batch_stride = hop * step;
    const CovResult all = covariance(device, v, opt);
    for (std::int64_t w = 0; w < count; ++w) out.push_back(est.push_block(all.batch_result(w)));
    return out;
  }
  // Segments of g samples up to the end of the last window, in one batched launch.
  const std::int64_t g = est.segment();
  v.samples = g;
  v.batch = ((count - 1) * hop + windows.window) / g;
  v.batch_stride = g * step;
  CovOptions seg = opt;
  seg.ddof = 0;
  return est.push_segments(covariance(device, v, seg));
}

}  // namespace kafel
