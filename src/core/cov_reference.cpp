// The covariance oracle, float64 two-pass (means, then centred products: numpy.cov's
// arithmetic) over sample ranges on the host thread pool. Owned by core: every test trusts it.
#include <algorithm>
#include <chrono>
#include <vector>

#include "core/cov_backend.hpp"
#include "core/thread_pool.hpp"
#include "kafel/error.hpp"

namespace kafel {
namespace {

constexpr std::int64_t kBlock = 512;

// Parts of the sample range (one per thread, at least 65536 samples each). The partial sums
// are merged in part order, so the result depends only on the thread count.
int part_count(std::int64_t samples) {
  return static_cast<int>(std::clamp<std::int64_t>(samples / 65536, 1, default_threads()));
}

// fn(part, tid, begin, end) for every part of [0, samples) on the thread pool.
template <class Fn>
void split(std::int64_t samples, int parts, Fn fn) {
  parallel_parts(parts, parts, [&](int part, int tid) {
    fn(part, tid, samples * part / parts, samples * (part + 1) / parts);
  });
}

// Channel sums over [b, e) in double, eight independent accumulators (the order is fixed).
void add_sums(const SamplesView& v, std::int64_t b, std::int64_t e, double* sum) {
  for (std::int64_t c = 0; c < v.channels; ++c) {
    double acc[8] = {};
    std::int64_t n = b;
    for (; n + 8 <= e; n += 8)
      for (int l = 0; l < 8; ++l) acc[l] += v.at(c, n + l);
    for (; n < e; ++n) acc[0] += v.at(c, n);
    for (int l = 0; l < 8; ++l) sum[c] += acc[l];
  }
}

// Centred products over [b, e): blocks of samples centred into double scratch d (channels x
// kBlock), then dots.
void add_products(const SamplesView& v, const double* mean, std::int64_t b, std::int64_t e,
                  double* d, double* m) {
  const std::int64_t c = v.channels;
  for (std::int64_t n0 = b; n0 < e; n0 += kBlock) {
    const std::int64_t len = std::min(kBlock, e - n0);
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t s = 0; s < len; ++s)
        d[ch * kBlock + s] = double(v.at(ch, n0 + s)) - mean[ch];
    for (std::int64_t i = 0; i < c; ++i)
      for (std::int64_t j = 0; j <= i; ++j) {
        const double* x = &d[i * kBlock];
        const double* y = &d[j * kBlock];
        double acc[8] = {};
        std::int64_t s = 0;
        for (; s + 8 <= len; s += 8)
          for (int l = 0; l < 8; ++l) acc[l] += x[s + l] * y[s + l];
        for (; s < len; ++s) acc[0] += x[s] * y[s];
        m[i * c + j] +=
            ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      }
  }
}

}  // namespace

// Pass 1 sums the channels per range; pass 2 takes centred products around the exact means,
// so the ranges' partial co-moments simply add.
void reference_moments(const CovArgs& a, CovMoments& out) {
  const SamplesView v{a.data, a.desc.channels, a.desc.samples, a.desc.layout, a.stride};
  const auto c = static_cast<std::size_t>(v.channels);
  const int t = part_count(v.samples);
  // Scratch is allocated here, per thread: pool jobs must not throw (bad_alloc included).
  std::vector<std::vector<double>> sums(t, std::vector<double>(c)),
      moms(t, std::vector<double>(c * c)), scratch(t, std::vector<double>(c * kBlock));
  split(v.samples, t,
        [&](int i, int, std::int64_t b, std::int64_t e) { add_sums(v, b, e, sums[i].data()); });
  out.mean.assign(c, 0.0);
  for (std::size_t ch = 0; ch < c; ++ch) {
    for (int i = 0; i < t; ++i) out.mean[ch] += sums[i][ch];
    out.mean[ch] /= static_cast<double>(v.samples);
  }
  split(v.samples, t, [&](int i, int tid, std::int64_t b, std::int64_t e) {
    add_products(v, out.mean.data(), b, e, scratch[tid].data(), moms[i].data());
  });
  out.comoment.assign(c * c, 0.0);
  for (std::size_t i = 0; i < c; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double s = 0;
      for (int k = 0; k < t; ++k) s += moms[k][i * c + j];
      out.comoment[i * c + j] = out.comoment[j * c + i] = s;
    }
}

CovResult reference_covariance(const SamplesView& s, std::int64_t ddof) {
  const CovDesc desc{s.channels, s.samples, s.layout, ddof};
  desc.validate();
  if (s.data == nullptr) throw InvalidArgument("reference_covariance: null sample pointer");
  CovMoments m;
  reference_moments(CovArgs{desc, s.data, s.tight_stride()}, m);
  CovResult r = finalize_cov(desc, m);
  r.kernel = "cpu.reference";
  return r;
}

}  // namespace kafel
