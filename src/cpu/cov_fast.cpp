// The fast one-pass CPU covariance driver: pilot shift, sample ranges on the CPU thread pool,
// run-time ISA choice, float64 merge. Also the portable worker (plain C++, one lane, 4x4 tiles).
#include "cpu/cov_fast.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "core/thread_pool.hpp"
#include "kafel/error.hpp"

namespace {

struct Scalar {
  using T = float;
  static constexpr int kLanes = 1;
  static T zero() { return 0.0f; }
  static T load(const float* p) { return *p; }
  static void store(float* p, T v) { *p = v; }
  static T set1(float f) { return f; }
  static T sub(T a, T b) { return a - b; }
  static T add(T a, T b) { return a + b; }
  static T fmadd(T a, T b, T c) { return a * b + c; }
  static double hsum_d(T v) { return v; }
};

}  // namespace

#include "cpu/cov_fast_impl.hpp"

namespace kafel::cpu::covfast {

namespace {
void range_portable(const Job& j, std::int64_t n0, std::int64_t n1, float* y, double* sum,
                    double* q) {
  process_range<Scalar, 4>(j, n0, n1, y, sum, q);
}

struct FreeAligned {
  void operator()(float* p) const { std::free(p); }
};
using Scratch = std::unique_ptr<float, FreeAligned>;

Scratch zeroed_scratch(std::int64_t floats) {
  const std::size_t bytes = (static_cast<std::size_t>(floats) * 4 + 63) / 64 * 64;
  auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (!p) throw OutOfMemory("covariance scratch of " + std::to_string(bytes) + " bytes");
  std::fill(p, p + bytes / 4, 0.0f);
  return Scratch(p);
}

// Scratch rows of `block` samples for every padded channel should stay in L2 (1-2 MB), and
// each float accumulator lane should sum at most 64 products (relative error ~1e-7 even on
// the offset signal): 1024 samples for the radar's 10 channels with AVX-512.
std::int64_t default_block(std::int64_t padded, int lanes) {
  const std::int64_t b = (256 * 1024 / 4) / std::max<std::int64_t>(padded, 1);
  return std::clamp<std::int64_t>(b / lanes * lanes, 4 * lanes, 64 * lanes);
}
}  // namespace

Worker worker_portable() {
  return {"portable", 1, 4, &range_portable};
}

Worker choose_worker(Isa isa) {
  // resolve_isa applies the same rules (and $KAFEL_CPU_ISA) as the GEMM micro-kernels.
  const Isa resolved = resolve_isa(isa);
  const Worker w = resolved == Isa::avx512 ? worker_avx512()
                   : resolved == Isa::avx2 ? worker_avx2()
                                           : worker_portable();
  if (!w.fn) throw Unsupported("this build has no " + std::string(w.name) + " covariance worker");
  return w;
}

void fast_moments(const CovArgs& a, const Worker& w, int threads, std::int64_t block,
                  std::int64_t prefetch_blocks, bool direct, CovMoments& out) {
  const std::int64_t C = a.desc.channels, N = a.desc.samples;
  const std::int64_t P = (C + w.tile - 1) / w.tile * w.tile;
  std::vector<float> pilot(static_cast<std::size_t>(C));
  for (std::int64_t c = 0; c < C; ++c)
    pilot[c] = pilot_value(a.data, a.stride, a.desc.layout, c, N);
  Job job{a.data,
          a.stride,
          C,
          P,
          a.desc.layout == SampleLayout::Planar,
          pilot.data(),
          block > 0 ? (block + w.lanes - 1) / w.lanes * w.lanes : default_block(P, w.lanes),
          prefetch_blocks,
          direct};
  if (threads <= 0) threads = default_threads();
  threads = static_cast<int>(std::clamp<std::int64_t>(N / 4096, 1, threads));

  // One sample range (and one partial result) per thread; the ranges are claimed on the pool,
  // so a late worker only shifts ranges to the others and the merge order stays the same.
  std::vector<Scratch> scratch;
  std::vector<std::vector<double>> sums(threads, std::vector<double>(C)),
      qs(threads, std::vector<double>(P * P));
  job.ld = job.block + 16;
  for (int t = 0; t < threads; ++t) scratch.push_back(zeroed_scratch(P * job.ld));
  parallel_parts(threads, threads, [&](int part, int tid) {
    // Ranges start on multiples of 16 samples so vector loads stay on the same alignment.
    const std::int64_t b = N * part / threads / 16 * 16;
    const std::int64_t e = part + 1 == threads ? N : N * (part + 1) / threads / 16 * 16;
    w.fn(job, b, e, scratch[tid].get(), sums[part].data(), qs[part].data());
  });

  std::vector<double> sum(C, 0.0), packed(static_cast<std::size_t>(C * (C + 1) / 2), 0.0);
  for (int t = 0; t < threads; ++t) {
    for (std::int64_t c = 0; c < C; ++c) sum[c] += sums[t][c];
    for (std::int64_t i = 0; i < C; ++i)
      for (std::int64_t j = 0; j <= i; ++j) packed[i * (i + 1) / 2 + j] += qs[t][i * P + j];
  }
  std::vector<double> pilot_d(pilot.begin(), pilot.end());
  moments_from_shifted(C, N, pilot_d.data(), sum.data(), packed.data(), out);
}

}  // namespace kafel::cpu::covfast
