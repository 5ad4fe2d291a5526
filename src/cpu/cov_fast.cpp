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

// Scratch rows of `block` samples for every padded channel should stay in L2 (1-2 MB): 1024
// samples for 64 lanes with AVX-512. Grids of at most two tile rows (the radar's 10 channels)
// are bound by the read and stream best in blocks of 256 samples (AVX-512 on a Zen 5, radar
// block: 1.12x a read pass against 1.30x with 1024; docs/BENCHMARKS.md, session 12).
std::int64_t default_block(std::int64_t padded, const Worker& w) {
  const std::int64_t b = (256 * 1024 / 4) / std::max<std::int64_t>(padded, 1);
  const std::int64_t most = padded <= 2 * w.tile ? std::min<std::int64_t>(256, 64 * w.lanes)
                                                 : 64 * w.lanes;  // the float sums' bound
  return std::clamp<std::int64_t>(b / w.lanes * w.lanes, 4 * w.lanes, most);
}
}  // namespace

Worker worker_portable() {
  return {"portable", 1, 4, &range_portable};
}

Worker choose_worker(Isa isa, std::int64_t lanes) {
  // resolve_isa applies the same rules (and $KAFEL_CPU_ISA) as the GEMM micro-kernels.
  const Isa resolved = resolve_isa(isa);
  // Up to 36 lanes (Zen 5, 2 cores, 64 M values, × the 5x5 worker's time: 12 lanes 0.69, 16
  // 0.69, 24 0.68, 32 0.91, 36 0.97); from 44 lanes the 4x4 tiles' extra loads per product
  // cost more than the padding they save (44: 1.09, 48: 1.20, 64: 1.27-1.37).
  const bool tile4 = lanes > 0 && lanes <= 36 && lanes % 4 == 0 && lanes % 5 != 0;
  const Worker w = resolved == Isa::avx512 ? (tile4 ? worker_avx512_tile4() : worker_avx512())
                   : resolved == Isa::avx2 ? worker_avx2()
                                           : worker_portable();
  if (!w.fn) throw Unsupported("this build has no " + std::string(w.name) + " covariance worker");
  return w;
}

namespace {

// Floats kept per thread for the tiles' float sums between the blocks of a run: R x R pair
// vectors and R row-sum vectors for each lower tile of the P x P grid.
std::int64_t keep_floats(const Worker& w, std::int64_t padded) {
  const std::int64_t rows = padded / w.tile;
  return rows * (rows + 1) / 2 * (w.tile * w.tile + w.tile) * w.lanes;
}

// The lanes' job for batch b (data pointer moved to the batch, fill mode from type/layout).
Job make_job(const CovArgs& a, const Worker& w, const RunOptions& o, std::int64_t b,
             const float* pilot) {
  const LaneAddressing at = lane_addressing(a);
  const std::int64_t K = a.desc.lanes();
  Job j;
  const std::size_t comp = a.desc.type == DType::ci8 ? 1 : a.desc.type == DType::ci16 ? 2 : 4;
  j.data = static_cast<const char*>(a.data) + std::size_t(b * at.batch_step) * comp;
  j.channel_step = at.channel_step;
  j.sample_step = at.sample_step;
  j.comps = at.comps;
  const bool planar = a.desc.layout == SampleLayout::Planar;
  j.mode = a.desc.type == DType::ci8 ? FillMode::any_i8
           : !planar                 ? FillMode::lanes_f32
           : a.desc.complex()        ? FillMode::pairs_f32
                                     : FillMode::rows_f32;
  j.channels = K;
  j.padded = (K + w.tile - 1) / w.tile * w.tile;
  j.pilot = pilot;
  j.block = o.block > 0 ? (o.block + w.lanes - 1) / w.lanes * w.lanes : default_block(j.padded, w);
  // int8 products (|p| <= 2^14) summed in float stay exact integers while a block's sums stay
  // below 2^24: at most 1024 samples per block.
  if (j.mode == FillMode::any_i8) j.block = std::min<std::int64_t>(j.block, 1024);
  j.prefetch_blocks = o.prefetch_blocks;
  // Float sums run over at most 64 vectors of samples per lane (the error bound above; int8:
  // 1024 samples of products below 2^14 stay below 2^24), so blocks shorter than that share
  // one flush, as long as the kept sums stay small next to L1.
  const std::int64_t run = std::max<std::int64_t>(1, 64 * w.lanes / j.block);
  j.run_blocks = keep_floats(w, j.padded) * 4 <= 32 * 1024 ? run : 1;
  j.direct = o.direct;
  j.ld = j.block + 16;
  j.panel = o.panel;
  return j;
}

// Exact sums of ci16 lanes over [n0, n1): products of 16-bit integers (|p| <= 2^30) in int64.
void int16_range(const Job& j, std::int64_t n0, std::int64_t n1, std::int32_t* y, std::int64_t* sum,
                 std::int64_t* q) {
  constexpr std::int64_t kB = 256;
  const std::int64_t K = j.channels;
  const auto* x = static_cast<const std::int16_t*>(j.data);
  for (std::int64_t n = n0; n < n1; n += kB) {
    const std::int64_t len = std::min(kB, n1 - n);
    for (std::int64_t k = 0; k < K; ++k) {
      std::int64_t s = 0;
      for (std::int64_t t = 0; t < len; ++t) s += (y[k * kB + t] = x[j.offset(k, n + t)]);
      sum[k] += s;
    }
    for (std::int64_t i = 0; i < K; ++i)
      for (std::int64_t l = 0; l <= i; ++l) {
        const std::int32_t* u = y + i * kB;
        const std::int32_t* v = y + l * kB;
        std::int64_t acc = 0;
        for (std::int64_t t = 0; t < len; ++t) acc += std::int64_t(u[t]) * v[t];
        q[i * K + l] += acc;
      }
  }
}

// Partial results of one (batch, sample range) part: lane sums and the P x P lower tiles.
template <class Acc>
struct Partial {
  std::vector<Acc> sum, q;
};

}  // namespace

void fast_moments(const CovArgs& a, const Worker& w, const RunOptions& o, CovMoments& out) {
  const CovDesc& d = a.desc;
  const std::int64_t K = d.lanes(), N = d.samples, nb = d.batch;
  const bool ints = d.type == DType::ci16;
  const std::int64_t P = ints ? K : (K + w.tile - 1) / w.tile * w.tile;
  std::vector<float> pilot(static_cast<std::size_t>(nb * K));
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t k = 0; k < K; ++k) pilot[b * K + k] = lane_pilot(a, k, b);
  int threads = o.threads > 0 ? o.threads : default_threads();
  // Ranges per batch: enough to keep every thread busy, none shorter than 4096 samples.
  const std::int64_t per_batch =
      nb >= threads ? 1 : std::clamp<std::int64_t>(N / 4096, 1, (threads + nb - 1) / nb);
  const std::int64_t parts = nb * per_batch;
  threads = static_cast<int>(std::min<std::int64_t>(threads, parts));

  // Per thread: scratch rows and, when a batch is one part, its partial (converted at once).
  std::vector<Scratch> scratch;
  std::vector<std::vector<std::int32_t>> iscratch(threads);
  const Job first = make_job(a, w, o, 0, pilot.data());
  const std::int64_t keep = first.run_blocks > 1 ? keep_floats(w, P) : 0;
  for (int t = 0; t < threads; ++t) {
    if (ints)
      iscratch[t].resize(static_cast<std::size_t>(K * 256));
    else
      scratch.push_back(zeroed_scratch(P * first.ld + keep));
  }
  out.reset(d);
  const bool merge = per_batch > 1;
  std::vector<Partial<double>> fparts(merge && !ints ? parts : threads);
  std::vector<Partial<std::int64_t>> iparts(merge && ints ? parts : threads);
  // Converts batch b's merged partial into moments (lower P x P tiles -> packed lanes).
  auto finish = [&](std::int64_t b, const auto& sum, const auto& q) {
    std::vector<double> s(K), packed(static_cast<std::size_t>(K * (K + 1) / 2)), p(K);
    for (std::int64_t k = 0; k < K; ++k) {
      s[k] = static_cast<double>(sum[k]);
      p[k] = pilot[b * K + k];
    }
    for (std::int64_t i = 0; i < K; ++i)
      for (std::int64_t j = 0; j <= i; ++j)
        packed[i * (i + 1) / 2 + j] = static_cast<double>(q[i * P + j]);
    moments_from_lanes(d, b, p.data(), s.data(), packed.data(), out);
  };
  parallel_parts(static_cast<int>(parts), threads, [&](int part, int tid) {
    const std::int64_t b = part / per_batch, r = part % per_batch;
    // Ranges start on multiples of 16 samples so vector loads stay on the same alignment.
    const std::int64_t n0 = N * r / per_batch / 16 * 16;
    const std::int64_t n1 = r + 1 == per_batch ? N : N * (r + 1) / per_batch / 16 * 16;
    const Job job = make_job(a, w, o, b, pilot.data() + b * K);
    const std::size_t slot = merge ? static_cast<std::size_t>(part) : static_cast<std::size_t>(tid);
    if (ints) {
      auto& pt = iparts[slot];
      pt.sum.assign(K, 0);
      pt.q.assign(static_cast<std::size_t>(P * P), 0);
      int16_range(job, n0, n1, iscratch[tid].data(), pt.sum.data(), pt.q.data());
      if (!merge) finish(b, pt.sum, pt.q);
    } else {
      auto& pt = fparts[slot];
      pt.sum.assign(K, 0.0);
      pt.q.assign(static_cast<std::size_t>(P * P), 0.0);
      w.fn(job, n0, n1, scratch[tid].get(), pt.sum.data(), pt.q.data());
      if (!merge) finish(b, pt.sum, pt.q);
    }
  });
  if (!merge) return;
  for (std::int64_t b = 0; b < nb; ++b) {
    auto add = [&](auto& list) {
      auto sum = list[b * per_batch].sum;
      auto q = list[b * per_batch].q;
      for (std::int64_t r = 1; r < per_batch; ++r) {
        const auto& pt = list[b * per_batch + r];
        for (std::int64_t k = 0; k < K; ++k) sum[k] += pt.sum[k];
        for (std::size_t t = 0; t < q.size(); ++t) q[t] += pt.q[t];
      }
      finish(b, sum, q);
    };
    if (ints)
      add(iparts);
    else
      add(fparts);
  }
}

}  // namespace kafel::cpu::covfast
