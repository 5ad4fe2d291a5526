// The fast one-pass CPU covariance: per-ISA range workers (AVX-512, AVX2, portable) and the
// driver that picks one by cpu_features' rules and runs it on the CPU thread pool.
#pragma once

#include <cstdint>

#include "core/cov_backend.hpp"
#include "cpu/cpu_features.hpp"

namespace kafel::cpu::covfast {

// How a block of samples gets into the shifted float scratch rows (one row per real lane).
enum class FillMode : std::uint8_t {
  rows_f32,   // real planar f32: lane k is a contiguous row (the tiles may read it in place)
  lanes_f32,  // interleaved f32, real or complex: lane k of sample n at n*sample_step + k
  pairs_f32,  // planar complex f32: channel rows of (re, im) pairs
  any_i8,     // complex int8, any layout: converted exactly (no pilot; see cov_fast.cpp)
};

// What one worker needs; plain pointers only, so ISA-specific files instantiate no std code.
struct Job {
  const void* data = nullptr;     // this batch's first component
  std::int64_t channel_step = 0;  // components between channel c and c+1
  std::int64_t sample_step = 0;   // components between sample n and n+1
  int comps = 1;                  // 1 real, 2 complex (re, im)
  FillMode mode = FillMode::rows_f32;
  std::int64_t channels = 0;         // real lanes K (2C for complex samples)
  std::int64_t padded = 0;           // lanes rounded up to the ISA's tile size
  const float* pilot = nullptr;      // per lane
  std::int64_t block = 0;            // samples per scratch block, a multiple of the lane count
  std::int64_t prefetch_blocks = 1;  // software prefetch this many blocks ahead (0: off)
  // Blocks whose float sums run on before a float64 flush (1: every block flushes). With more,
  // the tiles keep their sums after the scratch rows (keep_floats) between blocks.
  std::int64_t run_blocks = 1;
  bool direct = true;  // rows_f32, K a multiple of the tile: tiles read the rows in place
  // Scratch row stride in floats: block + 16, so the rows of a transposing (interleaved) fill
  // do not all fall into the same L1 set (a 4 KB stride would).
  std::int64_t ld = 0;
  // Tiled order (cpu.herk): lower tiles visited in column panels of this many lanes, so a
  // panel stays in L2 while the rows below it stream past; 0 = row by row (cpu.fast).
  std::int64_t panel = 0;

  const float* f32() const { return static_cast<const float*>(data); }
  // Component offset of lane k, sample n (within this batch).
  std::int64_t offset(std::int64_t k, std::int64_t n) const {
    return (k / comps) * channel_step + (k % comps) + n * sample_step;
  }
};

// Adds, over samples [n0, n1): sum[c] += sum(x_c - p_c); q[i*padded + j] += sum of products
// of shifted values (lower tiles, j <= i within the tile grid). Scratch: padded*ld floats,
// 64-byte aligned, zeroed by the caller (padding rows stay zero).
using RangeFn = void (*)(const Job& job, std::int64_t n0, std::int64_t n1, float* scratch,
                         double* sum, double* q);

// One ISA's worker: its vector width, its square tile of channel pairs and its range function
// (nullptr when this build has no such worker, e.g. AVX-512 on a non-x86 build).
struct Worker {
  const char* name;
  int lanes;
  int tile;
  RangeFn fn;
};

Worker worker_avx512();
Worker worker_avx512_tile4();  // 4x4 tiles
Worker worker_avx2();
Worker worker_portable();
// The worker of `isa` after resolve_isa (automatic: the ISA the GEMM micro-kernels use too,
// $KAFEL_CPU_ISA included); Unsupported when this CPU or build lacks it. With AVX-512, up to 36
// `lanes` (real lanes per sample) that 4 divides and 5 does not take 4x4 tiles: no padded lane
// (16 lanes: 20 with 5x5 tiles) and planar real rows read in place.
Worker choose_worker(Isa isa, std::int64_t lanes = 0);

// Up to this many real lanes cpu.fast's DIRECT=auto reads planar rows in place; past it the
// scratch block is faster (Zen 5, 2 cores, 64 M values, in place vs scratch: 20 lanes 0.88,
// 25-30 0.89, 32 0.93, 36 1.00, 40 1.07-1.16, 55 1.12, 60 1.23-1.49: each tile's rows then
// stream from the caller's rows, far apart, instead of one compact L2-resident block).
inline constexpr std::int64_t kDirectMostLanes = 32;

// Options of one run of the fast or tiled kernel.
struct RunOptions {
  int threads = 0;                   // 0 = default_threads()
  std::int64_t block = 0;            // 0 = chosen from the lane count
  std::int64_t prefetch_blocks = 2;  // 0 = off
  bool direct = true;
  std::int64_t panel = 0;  // > 0: cpu.herk's column-panel order (lanes per panel)
};

// The moments of every batch with the float tiles (f32, cf32: pilot-shifted; ci8: exact, no
// shift) or exact integer sums (ci16). Threads take sample ranges of one batch, or whole
// batches when there are at least as many batches as threads; partials merge in float64 in
// range order, so the result does not depend on which thread ran what.
void fast_moments(const CovArgs& args, const Worker& worker, const RunOptions& opt,
                  CovMoments& out);

}  // namespace kafel::cpu::covfast
