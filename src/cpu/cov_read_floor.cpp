// The host covariance plans' memory floor: one plain read pass over every byte of a block on
// the thread pool, timed like the kernels so "x floor" compares like with like.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "core/thread_pool.hpp"
#include "cpu/cov_host_plan.hpp"

namespace kafel::cpu {

namespace {

// Sums the 32-bit words of [p, p + words) in sixteen integer lanes (vectorisable; integer adds
// never take the slow path that float adds of denormal bit patterns can).
std::uint32_t sum_words(const char* p, std::int64_t words) {
  std::uint32_t acc[16] = {};
  std::int64_t i = 0;
  for (; i + 16 <= words; i += 16)
    for (int l = 0; l < 16; ++l) {
      std::uint32_t w;
      std::memcpy(&w, p + (i + l) * 4, 4);
      acc[l] += w;
    }
  for (; i < words; ++i) {
    std::uint32_t w;
    std::memcpy(&w, p + i * 4, 4);
    acc[0] += w;
  }
  std::uint32_t s = 0;
  for (auto x : acc) s += x;
  return s;
}

}  // namespace

double read_pass(const CovArgs& a, int threads) {
  const SamplesView v = a.view();
  const bool planar = a.desc.layout == SampleLayout::Planar;
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(a.desc.type));
  // Lines of contiguous elements: rows of a planar block (or samples of an interleaved one).
  std::int64_t lines = (planar ? a.desc.channels : a.desc.samples) * a.desc.batch;
  std::int64_t bytes = (planar ? a.desc.samples : a.desc.channels) * es;
  const std::int64_t per_batch = planar ? a.desc.channels : a.desc.samples;
  const bool tight =
      v.tight_stride() * es == bytes && v.tight_batch_stride() * es == bytes * per_batch;
  if (tight) {  // one flat line, so threads never share cache lines
    bytes *= lines;
    lines = 1;
  }
  auto line_ptr = [&](std::int64_t l) {
    return static_cast<const char*>(a.data) +
           ((l / per_batch) * v.tight_batch_stride() + (l % per_batch) * v.tight_stride()) * es;
  };
  threads = std::max(1, threads);
  std::vector<double> part(threads);
  parallel_parts(threads, threads, [&](int t, int) {
    // Each thread reads a contiguous share of every line.
    const std::int64_t words = bytes / 4;
    const std::int64_t b = words * t / threads, e = words * (t + 1) / threads;
    std::uint32_t s = 0;
    for (std::int64_t l = 0; l < lines; ++l) s += sum_words(line_ptr(l) + b * 4, e - b);
    part[t] = s;
  });
  double s = 0;
  for (double x : part) s += x;
  return s;
}

double CovHostPlan::read_floor_ms(int) {
  // As many threads as the covariance kernels use by default, so the two are comparable.
  const int threads = default_threads();
  const auto t0 = std::chrono::steady_clock::now();
  volatile double sink = read_pass(args_, threads);
  (void)sink;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace kafel::cpu
