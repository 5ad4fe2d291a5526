// The host covariance plans' memory floor: one plain read pass over every float of a block
// on the thread pool, timed like the kernels so "x floor" compares like with like.
#include <algorithm>
#include <chrono>
#include <vector>

#include "core/thread_pool.hpp"
#include "cpu/cov_host_plan.hpp"

namespace kafel::cpu {

double read_pass(const CovArgs& a, int threads) {
  std::int64_t rows = a.desc.layout == SampleLayout::Planar ? a.desc.channels : a.desc.samples;
  std::int64_t cols = a.desc.layout == SampleLayout::Planar ? a.desc.samples : a.desc.channels;
  if (a.stride == cols) {  // tight: one flat row, so threads never share cache lines
    cols *= rows;
    rows = 1;
  }
  threads = std::max(1, threads);
  std::vector<double> part(threads);
  parallel_parts(threads, threads, [&](int t, int) {
    // Each thread sums a contiguous share of every row, sixteen float lanes (vectorisable).
    const std::int64_t b = cols * t / threads, e = cols * (t + 1) / threads;
    float acc[16] = {};
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* p = a.data + r * a.stride;
      std::int64_t n = b;
      for (; n + 16 <= e; n += 16)
        for (int l = 0; l < 16; ++l) acc[l] += p[n + l];
      for (; n < e; ++n) acc[0] += p[n];
    }
    double s = 0;
    for (float x : acc) s += x;
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
