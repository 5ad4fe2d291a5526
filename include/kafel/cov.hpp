// Covariance (Hermitian for complex samples) of B x C channels x N samples on any device, with
// numpy/MATLAB `cov` semantics; the float64 reference, the error measure, windows and forgetting.
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
//
// Sample types: f32 (real), cf32 (DType::c64: interleaved re, im floats, numpy's <c8), and
// complex integers ci8 / ci16 (interleaved re, im int8 / int16, as correlators deliver). Offsets
// and strides count whole elements (one complex value is one element). The covariance of
// complex samples is Hermitian: R = X X^H / (N - ddof), R_ij = sum_n x_i[n] conj(x_j[n]) / .. .

// True for the sample types covariance takes: f32, c64 (cf32), ci8, ci16.
bool is_cov_sample_type(DType t);
// "f32, cf32, ci8, ci16".
std::string cov_sample_types_text();

// B blocks (batch) of C channels x N samples of `type`; stride 0 means tight (N for planar, C
// for interleaved); batch_stride 0 means tight blocks back to back (C*stride planar, N*stride
// interleaved). Batches may overlap (sliding windows are a batch with batch_stride = hop).
struct SamplesView {
  const void* data = nullptr;
  std::int64_t channels = 0;
  std::int64_t samples = 0;
  SampleLayout layout = SampleLayout::Planar;
  std::int64_t stride = 0;
  DType type = DType::f32;
  std::int64_t batch = 1;
  std::int64_t batch_stride = 0;

  std::int64_t tight_stride() const {
    return stride ? stride : (layout == SampleLayout::Planar ? samples : channels);
  }
  std::int64_t tight_batch_stride() const {
    return batch_stride ? batch_stride
                        : tight_stride() * (layout == SampleLayout::Planar ? channels : samples);
  }
  // Element offset of channel c, sample n of batch b.
  std::int64_t offset(std::int64_t c, std::int64_t n, std::int64_t b = 0) const {
    return b * tight_batch_stride() +
           (layout == SampleLayout::Planar ? c * tight_stride() + n : n * tight_stride() + c);
  }
  // Real part (the value for real types) and imaginary part (0 for real types) widened to double.
  double re(std::int64_t c, std::int64_t n, std::int64_t b = 0) const;
  double im(std::int64_t c, std::int64_t n, std::int64_t b = 0) const;
};

// The operation, independent of where the samples live (what kernels, the choice, the stream
// and the benchmark share). Aggregate order kept: {channels, samples, layout, ddof, type, batch}.
struct CovDesc {
  std::int64_t channels = 0, samples = 0;
  SampleLayout layout = SampleLayout::Planar;
  std::int64_t ddof = 1;
  DType type = DType::f32;
  std::int64_t batch = 1;

  bool complex() const { return is_complex(type); }
  bool integer() const { return type == DType::ci8 || type == DType::ci16; }
  // Real lanes the kernels see: C for real samples, 2C for complex (re and im of each channel).
  std::int64_t lanes() const { return complex() ? 2 * channels : channels; }
  std::int64_t pairs() const { return channels * (channels + 1) / 2; }
  // Real multiply-adds x 2 of one triangle plus the mean removal, over every batch: a complex
  // multiply-add is 4 real ones (8 flops), so complex costs 4x real at the same channel count.
  double flops() const {
    const double per = complex() ? 8.0 : 2.0;
    return double(batch) *
           (per * double(pairs()) * double(samples) + double(lanes()) * double(samples));
  }
  // Fewest bytes a device must move: every sample read once.
  double min_bytes() const {
    return double(batch) * double(channels) * double(samples) * double(dtype_size(type));
  }
  // Tight elements of all batches (channels x samples x batch).
  std::int64_t elements() const { return batch * channels * samples; }
  // "10x4194304 planar", "64x1048576 interleaved cf32", "1024 x 64x4096 planar cf32".
  std::string shape() const;
  // Throws InvalidArgument for C < 1, N <= ddof, ddof < 0, batch < 1, a type covariance does
  // not take, or element counts that overflow.
  void validate() const;
};

struct CovOptions {
  std::string kernel;     // e.g. "cpu.fast"; empty = the device's default for the shape
  Params params;          // overrides of the kernel's parameters
  std::int64_t ddof = 1;  // divisor N - ddof (1: sample covariance, 0: population)
};

// Float64 results of every batch. For complex samples `cov` holds the real parts and `cov_im`
// the imaginary parts of the Hermitian matrix (cov_im[i][j] = -cov_im[j][i], exactly 0 on the
// diagonal); for real samples cov_im and mean_im are empty.
struct CovResult {
  std::int64_t channels = 0, samples = 0, ddof = 1, batch = 1;
  DType type = DType::f32;
  std::vector<double> cov;      // batch x C x C, row-major, full, float64 (real parts)
  std::vector<double> cov_im;   // complex: imaginary parts, same layout; else empty
  std::vector<float> cov_f32;   // real samples: cov rounded to float32; else empty
  std::vector<double> mean;     // batch x C channel means (real parts)
  std::vector<double> mean_im;  // complex: imaginary parts of the means
  std::string kernel;
  double kernel_ms = 0;          // the kernel alone (device events where the backend has them)
  double total_ms = 0;           // including transfers
  std::int64_t nan_entries = 0;  // entries of cov that are NaN (NaN in the data propagates)

  bool complex() const { return !cov_im.empty(); }
  double at(std::int64_t i, std::int64_t j, std::int64_t b = 0) const {
    return cov[(b * channels + i) * channels + j];
  }
  double imag_at(std::int64_t i, std::int64_t j, std::int64_t b = 0) const {
    return cov_im.empty() ? 0.0 : cov_im[(b * channels + i) * channels + j];
  }
  // Batch b alone (a batch-1 result).
  CovResult batch_result(std::int64_t b) const;
};

// The lower triangle of batch b packed row by row (entry (i, j), j <= i, at i*(i+1)/2 + j):
// real parts, and imaginary parts in `im` when the result is complex.
std::vector<double> lower_packed(const CovResult& r, std::int64_t b = 0,
                                 std::vector<double>* im = nullptr);

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

// Where blocks come from. fill(b, buf) writes block b (a tight block of the descriptor: every
// batch, desc.min_bytes() bytes of desc.type; `buf` is float-typed storage aligned for any
// sample type, reinterpret it for others) into buf and returns false when there is no block b. With
// `static_buffers`, fill is called only for the first `depth` blocks and block b reuses buffer b %
// depth as it is (generators: the data sits in pinned memory like an ADC's DMA buffers, no host
// copy per block).
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

// Float64 two-pass reference: means in double, then sums of centred products in double
// (complex128 arithmetic for complex samples), every batch.
CovResult reference_covariance(const SamplesView& samples, std::int64_t ddof = 1);

// ||cov - ref||_F / ||ref||_F over the full (complex) matrices of every batch in float64 (NaN
// entries of both ignored when they coincide; a NaN in one but not the other gives an infinite
// error).
double cov_rel_err(const CovResult& cov, const CovResult& ref);

// ---- windows, forgetting, forward-backward averaging ----------------------------------------

// Forward-backward averaging for uniform linear arrays: R <- (R + J conj(R) J) / 2 with J the
// exchange matrix, (J conj(R) J)_ij = conj(R_{C-1-i, C-1-j}); every batch. Means are averaged
// the same way (m <- (m + J conj(m)) / 2).
CovResult forward_backward(const CovResult& r);

struct CovWindowOptions {
  std::int64_t window = 0;  // samples per window; 0: one estimate per block (no windows)
  std::int64_t hop = 0;     // samples between window starts; 0: = window (no overlap)
  double forget = 0;        // lambda in [0, 1): R <- lambda R + (1 - lambda) R_new; 0: off
  bool forward_backward = false;
  // Throws InvalidArgument for window < 0, hop < 0 or > window, hop without window, lambda
  // outside [0, 1).
  void validate() const;
};

// Turns a stream of samples into covariance estimates: windows of `window` samples every `hop`
// samples (each window from the float64 Chan merge of the moments of gcd(window, hop)-sample
// segments, so every sample is read once however much the windows overlap), then exponential
// forgetting over the estimates, then forward-backward averaging. Without windows each pushed
// block is one estimate.
class CovEstimator {
 public:
  // `desc`: channels, layout, type and ddof of the estimates; samples/batch are ignored.
  CovEstimator(const CovDesc& desc, const CovWindowOptions& opt);
  // Samples per segment the input must be cut into: gcd(window, hop) (0 without windows).
  std::int64_t segment() const { return segment_; }
  // Windowed: the segments' moments as one result with ddof 0, one batch per consecutive
  // segment of segment() samples. Returns the estimates of every window that ends in them.
  std::vector<CovResult> push_segments(const CovResult& segments);
  // Not windowed: one block's covariance (batch 1); returns the estimate after forgetting/fb.
  CovResult push_block(const CovResult& block);
  std::int64_t estimates() const { return estimates_; }

 private:
  CovResult finish(CovResult r);
  CovDesc desc_;
  CovWindowOptions opt_;
  std::int64_t segment_ = 0, per_window_ = 0, per_hop_ = 0;
  std::int64_t seen_ = 0;        // segments pushed so far
  std::vector<CovResult> ring_;  // the last per_window_ segments' moments (batch-1, ddof 0)
  CovResult state_;              // forgetting state
  std::int64_t estimates_ = 0;
};

// The windowed estimates of one run of samples (batch 1, any length >= window) on `device`:
// its segments in one batched launch (batch_stride = segment), then CovEstimator; when the
// segments would be shorter than 64 samples, the windows themselves in one batched launch
// (batch_stride = hop). Samples after the last whole window are not used. Throws
// InvalidArgument when the window exceeds the samples.
std::vector<CovResult> covariance_windows(const Device& device, const SamplesView& samples,
                                          const CovWindowOptions& windows,
                                          const CovOptions& opt = {});

}  // namespace kafel
