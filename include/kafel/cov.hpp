// Covariance of C channels x N float32 samples on any device (numpy/MATLAB `cov` semantics).
// Also the float64 two-pass reference (the oracle of every test) and the error measure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/params.hpp"
#include "kafel/types.hpp"

namespace kafel {

// Planar: channel c, sample n at data[c*stride + n] (C x N, the article's layout).
// Interleaved: at data[n*stride + c] (N x C, sample-major, as ADCs deliver).
// SampleLayout { Planar, Interleaved } and parse_sample_layout are in kafel/types.hpp.

// A block of float32 samples; stride 0 means tight (N for planar, C for interleaved).
struct SamplesView {
  const float* data = nullptr;
  std::int64_t channels = 0;
  std::int64_t samples = 0;
  SampleLayout layout = SampleLayout::Planar;
  std::int64_t stride = 0;

  std::int64_t tight_stride() const {
    return stride ? stride : (layout == SampleLayout::Planar ? samples : channels);
  }
  float at(std::int64_t c, std::int64_t n) const {
    return layout == SampleLayout::Planar ? data[c * tight_stride() + n]
                                          : data[n * tight_stride() + c];
  }
};

// The operation, independent of where the samples live (what kernels, the choice, the stream
// and the benchmark share).
struct CovDesc {
  std::int64_t channels = 0, samples = 0;
  SampleLayout layout = SampleLayout::Planar;
  std::int64_t ddof = 1;

  std::int64_t pairs() const { return channels * (channels + 1) / 2; }
  // One multiply-add per channel pair and sample (one triangle), plus the mean removal.
  double flops() const {
    return 2.0 * double(pairs()) * double(samples) + double(channels * samples);
  }
  // Fewest bytes a device must move: every sample read once.
  double min_bytes() const { return 4.0 * double(channels) * double(samples); }
  // "10x4194304 planar".
  std::string shape() const;
  // Throws InvalidArgument for C < 1, N <= ddof, ddof < 0 or element counts that overflow.
  void validate() const;
};

struct CovOptions {
  std::string kernel;     // e.g. "cpu.fast"; empty = the device's default for the shape
  Params params;          // overrides of the kernel's parameters
  std::int64_t ddof = 1;  // divisor N - ddof (1: sample covariance, 0: population)
};

struct CovResult {
  std::int64_t channels = 0, samples = 0, ddof = 1;
  std::vector<double> cov;     // C x C, row-major, full symmetric, float64
  std::vector<float> cov_f32;  // the same rounded to float32
  std::vector<double> mean;    // C channel means
  std::string kernel;
  double kernel_ms = 0;          // the kernel alone (device events where the backend has them)
  double total_ms = 0;           // including transfers
  std::int64_t nan_entries = 0;  // entries of cov that are NaN (NaN in the data propagates)

  double at(std::int64_t i, std::int64_t j) const { return cov[i * channels + j]; }
};

// The decision of choose_cov: which kernel, with which parameters, and why.
struct CovChoice {
  std::string kernel;
  Params params;
  std::string source;          // "default" or "user"
  std::string config() const;  // "BLOCK=1024 ISA=auto (user)"
};

// The one place that decides how a covariance runs, for covariance(), the stream, the benchmark
// and the CLI. Kernel: `kernel` when named, else the highest-preference kernel of the device
// whose channel limit admits the shape. Parameters: the kernel's defaults overlaid with
// `overrides`, checked against its ParamSpace (ranges and constraint) before anything is built.
// Throws InvalidArgument for unknown names or bad parameters, Unsupported when the kernel cannot
// do the shape here.
CovChoice choose_cov(const Device& device, const CovDesc& desc, const std::string& kernel = {},
                     const Params& overrides = {});

// Covariance on `device`. Throws InvalidArgument for C < 1, N <= ddof, a null pointer or a
// stride too small; Unsupported when the chosen kernel cannot do the shape.
CovResult covariance(const Device& device, const SamplesView& samples, const CovOptions& opt = {});

// ---- streams of blocks --------------------------------------------------------------------

struct CovStreamOptions {
  int depth = 3;            // blocks in flight (buffers), 1 .. kMaxCovDepth
  double rate = 0;          // arrivals per second; 0 = as fast as possible
  double deadline_ms = 50;  // a block misses when its latency exceeds this (finite, > 0)
};
inline constexpr int kMaxCovDepth = 64;

// Where blocks come from. fill(b, buf) writes block b (a tight block of the descriptor) into
// buf and returns false when there is no block b. With `static_buffers`, fill is called only
// for the first `depth` blocks and block b reuses buffer b % depth as it is (generators:
// the data sits in pinned memory like an ADC's DMA buffers, no host copy per block).
struct CovBlockSource {
  std::function<bool(std::int64_t block, float* buf)> fill;
  bool static_buffers = false;
};

// Called for every finished block, in order, while `data` still holds its samples: at once for
// file sources (inside the timed loop), after the loop for static buffers (outside it).
using CovResultHook = std::function<void(std::int64_t block, const float* data, const CovResult&)>;

struct CovStreamStats {
  std::int64_t blocks = 0;
  std::vector<double> latency_ms;  // per block: completion - arrival (rate > 0) or - submit
  // Before the first block's clock: plan creation, buffers (pages touched), one untimed pass
  // over every buffer (thread pool, program builds, caches). Not part of any block's latency.
  double startup_ms = 0;
  double wall_ms = 0;
  double median_ms = 0, p99_ms = 0, max_ms = 0, blocks_per_s = 0;
  std::int64_t missed = 0;
};

// Runs blocks from `source` through the chosen kernel (choose_cov), several in flight where the
// backend streams (GPU: pinned buffers, one stream each). Rate mode (rate > 0): block b arrives
// at b/rate after start-up; it is submitted on arrival and the host waits for it, so latency
// includes any queueing behind a late block. Throughput mode: up to `depth` blocks in flight,
// latency from submit to the host collecting the result. max_blocks < 0: until the source ends.
// Throws InvalidArgument for bad options, OutOfMemory when the buffers do not fit.
CovStreamStats run_cov_stream(const Device& device, const CovChoice& choice, const CovDesc& desc,
                              const CovBlockSource& source, std::int64_t max_blocks,
                              const CovStreamOptions& opt, const CovResultHook& hook = {});

// Float64 two-pass reference: means in double, then sums of centred products in double.
CovResult reference_covariance(const SamplesView& samples, std::int64_t ddof = 1);

// ||cov - ref||_F / ||ref||_F over the full matrices in float64 (NaN entries of both ignored
// when they coincide; a NaN in one but not the other gives an infinite error).
double cov_rel_err(const CovResult& cov, const CovResult& ref);

}  // namespace kafel
