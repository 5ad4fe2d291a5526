// The covariance oracle, float64 two-pass (means, then centred products: numpy.cov's
// arithmetic) over sample ranges on the host thread pool, any sample type and batch. Owned by
// core: every test trusts it.
#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>
#include <vector>

#include "core/cov_backend.hpp"
#include "core/thread_pool.hpp"
#include "kafel/error.hpp"

namespace kafel {
namespace {

constexpr std::int64_t kBlock = 512;

// Parts of the sample range (one per thread, at least 4096 samples each: many channels make
// even short blocks long work). The partial sums are merged in part order, so the result
// depends only on the thread count.
int part_count(std::int64_t samples) {
  return static_cast<int>(std::clamp<std::int64_t>(samples / 4096, 1, default_threads()));
}

// Lane k, sample n of one batch as double (lane addressing: re and im are lanes of their own).
struct Lanes {
  const void* data;
  DType type;
  LaneAddressing at;
  std::int64_t b;
  double operator()(std::int64_t k, std::int64_t n) const {
    const std::int64_t i = at.offset(k, n, b);
    switch (type) {
      case DType::ci8:
        return static_cast<const std::int8_t*>(data)[i];
      case DType::ci16:
        return static_cast<const std::int16_t*>(data)[i];
      default:
        return static_cast<const float*>(data)[i];
    }
  }
};

// Lane sums over [b, e) in double, eight independent accumulators (the order is fixed).
void add_sums(const Lanes& x, std::int64_t lanes, std::int64_t b, std::int64_t e, double* sum) {
  for (std::int64_t k = 0; k < lanes; ++k) {
    double acc[8] = {};
    std::int64_t n = b;
    for (; n + 8 <= e; n += 8)
      for (int l = 0; l < 8; ++l) acc[l] += x(k, n + l);
    for (; n < e; ++n) acc[0] += x(k, n);
    for (int l = 0; l < 8; ++l) sum[k] += acc[l];
  }
}

// Centred lane products over [b, e): blocks of samples centred into double scratch d
// (lanes x kBlock), then dots; m is the lanes x lanes lower triangle (row-major).
void add_products(const Lanes& x, std::int64_t lanes, const double* mean, std::int64_t b,
                  std::int64_t e, double* d, double* m) {
  for (std::int64_t n0 = b; n0 < e; n0 += kBlock) {
    const std::int64_t len = std::min(kBlock, e - n0);
    for (std::int64_t k = 0; k < lanes; ++k)
      for (std::int64_t s = 0; s < len; ++s) d[k * kBlock + s] = x(k, n0 + s) - mean[k];
    for (std::int64_t i = 0; i < lanes; ++i)
      for (std::int64_t j = 0; j <= i; ++j) {
        const double* u = &d[i * kBlock];
        const double* v = &d[j * kBlock];
        double acc[8] = {};
        std::int64_t s = 0;
        for (; s + 8 <= len; s += 8)
          for (int l = 0; l < 8; ++l) acc[l] += u[s + l] * v[s + l];
        for (; s < len; ++s) acc[0] += u[s] * v[s];
        m[i * lanes + j] +=
            ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      }
  }
}

// One batch: pass 1 sums the lanes per range; pass 2 takes centred products around the exact
// means, so the ranges' partial co-moments simply add. `t` ranges on the pool, or with t == 1
// on the calling thread (the batch-parallel path).
void batch_moments(const CovArgs& a, std::int64_t batch, int t, CovMoments& out) {
  const Lanes x{a.data, a.desc.type, lane_addressing(a), batch};
  const std::int64_t lanes = a.desc.lanes(), n = a.desc.samples;
  const auto k = static_cast<std::size_t>(lanes);
  // The t ranges on the pool; one range on the calling thread (a batch of the batch-parallel
  // path already runs on the pool, which is not re-entered).
  const auto run_ranges = [t](const auto& fn) {
    if (t == 1) {
      fn(0, 0);
    } else {
      parallel_parts(t, t, fn);
    }
  };
  // Scratch is allocated here, per thread: pool jobs must not throw (bad_alloc included).
  std::vector<std::vector<double>> sums(t, std::vector<double>(k)),
      moms(t, std::vector<double>(k * k)), scratch(t, std::vector<double>(k * kBlock));
  run_ranges([&](int i, int) { add_sums(x, lanes, n * i / t, n * (i + 1) / t, sums[i].data()); });
  std::vector<double> mean(k, 0.0);
  for (std::size_t l = 0; l < k; ++l) {
    for (int i = 0; i < t; ++i) mean[l] += sums[i][l];
    mean[l] /= static_cast<double>(n);
  }
  run_ranges([&](int i, int tid) {
    add_products(x, lanes, mean.data(), n * i / t, n * (i + 1) / t, scratch[tid].data(),
                 moms[i].data());
  });
  std::vector<double> packed(k * (k + 1) / 2, 0.0), zero(k, 0.0);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j)
      for (int p = 0; p < t; ++p) packed[i * (i + 1) / 2 + j] += moms[p][i * k + j];
  // Centred around the exact means: the lane sums are zero, the means are the pilots.
  moments_from_lanes(a.desc, batch, mean.data(), zero.data(), packed.data(), out);
}

}  // namespace

void reference_moments(const CovArgs& a, CovMoments& out) {
  out.reset(a.desc);
  const std::int64_t batches = a.desc.batch;
  const int parts = part_count(a.desc.samples), threads = default_threads();
  if (batches == 1 || parts >= threads || batches > std::numeric_limits<int>::max()) {
    for (std::int64_t b = 0; b < batches; ++b) batch_moments(a, b, parts, out);
    return;
  }
  // Short blocks in a batch: one batch per pool part. Pool jobs must not throw, so an error
  // (bad_alloc) is kept and rethrown here.
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(batches));
  parallel_parts(static_cast<int>(batches), threads, [&](int b, int) {
    try {
      batch_moments(a, b, 1, out);
    } catch (...) {
      errors[static_cast<std::size_t>(b)] = std::current_exception();
    }
  });
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

CovResult reference_covariance(const SamplesView& s, std::int64_t ddof) {
  const CovDesc desc = desc_of(s, ddof);
  desc.validate();
  if (s.data == nullptr) throw InvalidArgument("reference_covariance: null sample pointer");
  CovMoments m;
  reference_moments(CovArgs{desc, s.data, s.tight_stride(), s.tight_batch_stride()}, m);
  CovResult r = finalize_cov(desc, m);
  r.kernel = "cpu.reference";
  return r;
}

}  // namespace kafel
