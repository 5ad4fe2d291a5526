// The contract between the covariance framework and a backend: descriptor, kernels, plans,
// streams. Mirrors GemmKernel/GemmPlan (core/backend.hpp); one registry function per backend.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kafel/cov.hpp"
#include "kafel/device.hpp"
#include "kafel/kernels.hpp"
#include "kafel/params.hpp"

namespace kafel {

// CovDesc (the operation) and CovChoice are public: kafel/cov.hpp.

// Samples as kernels see them: host memory, desc.layout and desc.type, stride >= N (planar) or
// >= C, batch b at data + b * batch_stride elements (0: tight blocks back to back).
struct CovArgs {
  CovDesc desc;
  const void* data = nullptr;
  std::int64_t stride = 0;
  std::int64_t batch_stride = 0;

  SamplesView view() const {
    return {data,   desc.channels, desc.samples, desc.layout,
            stride, desc.type,     desc.batch,   batch_stride};
  }
  const float* f32() const { return static_cast<const float*>(data); }
};

// Where kernels find real lane k (k < desc.lanes(): channel k for real samples, re / im of
// channel k/2 for complex ones), sample n of batch b: offset(k, n, b) components (floats,
// int8 or int16) from the data pointer.
struct LaneAddressing {
  std::int64_t channel_step = 0, sample_step = 0, batch_step = 0;
  int comps = 1;  // 1: real, 2: complex (re, im interleaved)
  std::int64_t offset(std::int64_t k, std::int64_t n, std::int64_t b = 0) const {
    return b * batch_step + (k / comps) * channel_step + (k % comps) + n * sample_step;
  }
};
LaneAddressing lane_addressing(const CovArgs& args);

// What a kernel returns before the divisor, for every batch b: channel means and the centred
// co-moments M_ij = sum_n (x_in - mean_i) conj(x_jn - mean_j), C x C row-major per batch, both
// triangles filled (the upper one conjugated). Imaginary parts only for complex samples.
struct CovMoments {
  std::vector<double> mean, mean_im;          // batch x C
  std::vector<double> comoment, comoment_im;  // batch x C x C
  // Sized and zeroed for `desc` (imaginary parts only when complex).
  void reset(const CovDesc& desc);
};

// Kernels that accumulate around a per-channel pilot p (sums S_i = sum(x_i - p_i) and
// Q_ij = sum (x_i - p_i)(x_j - p_j), lower triangle packed row by row: index i*(i+1)/2 + j)
// convert with this: mean = p + S/N, M = Q - S S^T / N. (Real samples, one batch.)
void moments_from_shifted(std::int64_t channels, std::int64_t samples, const double* pilot,
                          const double* sum, const double* q_packed, CovMoments& out);

// The same per batch in lane space (any sample type): pilot, S and packed Q over the
// desc.lanes() real lanes of batch b; complex channels are assembled from their re/im lanes
// (Re R_ij = M(2i,2j) + M(2i+1,2j+1), Im R_ij = M(2i+1,2j) - M(2i,2j+1)). `out` must have
// been reset for desc.
void moments_from_lanes(const CovDesc& desc, std::int64_t b, const double* pilot, const double* sum,
                        const double* q_packed, CovMoments& out);

// The pilot every one-pass kernel shifts by: the float mean of channel c's first
// min(N, kPilotSamples) samples, summed in order in float. Deterministic, so a GPU work-group
// computing it on its own gets the same value as the host.
inline constexpr std::int64_t kPilotSamples = 32;
float pilot_value(const float* data, std::int64_t stride, SampleLayout layout, std::int64_t c,
                  std::int64_t samples);
// The same for lane k of batch b of any float sample type; 0 for integer samples (their sums
// are exact, nothing to shift).
float lane_pilot(const CovArgs& args, std::int64_t k, std::int64_t b = 0);

// Several blocks in flight (GPU: pinned host buffers, one stream each, copies overlapping
// compute). Buffers are tight blocks of the plan's descriptor.
class CovStream {
 public:
  virtual ~CovStream() = default;
  virtual int depth() const = 0;
  // Host buffer i (pinned where the backend has it): desc.channels * desc.samples floats.
  virtual float* buffer(int i) = 0;
  // Starts copy + compute of buffer i; may return before it is done.
  virtual void submit(int i) = 0;
  // Waits for buffer i's result; the buffer may be refilled afterwards.
  virtual void wait(int i, CovMoments& out) = 0;
};

// One covariance shape prepared on one device for one kernel with fixed parameters.
class CovPlan {
 public:
  virtual ~CovPlan() = default;
  // Copies the samples to the device, `slots` copies (benchmarks rotate between them).
  // Host kernels read the caller's memory in place (every slot is the caller's block).
  virtual void load(const CovArgs& args, int slots) = 0;
  // Computes slot `slot`'s moments; returns the time in ms (device events where present).
  virtual double run(int slot) = 0;
  // Moments of the last run.
  virtual void fetch(CovMoments& out) = 0;
  // "cuda-events", "opencl-events" or "steady-clock".
  virtual std::string timer() const = 0;
  // A stream of `depth` blocks; nullptr means the framework wraps load/run/fetch (synchronous).
  virtual std::unique_ptr<CovStream> stream(int /*depth*/) { return nullptr; }
  // Floors measured on the same device, after load: one plain read pass over slot `slot`
  // (a sum kernel) and one bare host->device copy of a block from pinned memory; 0 if none.
  virtual double read_floor_ms(int /*slot*/) { return 0; }
  virtual double copy_floor_ms() { return 0; }
  // The tensor_peaks key of the units the last run's products took, where the plan chooses them
  // itself (cuda.herk_tc's one 128-lane tile: f16 parts, or tf32 after a redo); "" where the
  // kernel's registration (CovKernelInfo::tensor_peak) says it.
  virtual std::string tensor_peak() const { return {}; }
};

// A covariance kernel: its public description plus the plan factory. Registered by its own
// file with a `Register` object (core/registry.hpp), like GEMM kernels.
struct CovKernel : CovKernelInfo {
  // Throws Unsupported when the kernel cannot do this shape (and says why).
  std::function<std::unique_ptr<CovPlan>(const Device&, const CovDesc&, const Params&)> make_plan;
  // "" when the kernel can do `desc` on `device` with `params`, else why not; checked before a
  // plan is made (sample type and max_channels are checked by the framework already). Null:
  // anything within those limits.
  std::function<std::string(const Device&, const CovDesc&, const Params&)> can_implement;
  // Rank when the user names no kernel: the highest positive one that takes the sample type,
  // whose channel limit admits the shape and whose can_implement agrees wins; 0 = never chosen
  // by default (baselines, kernels not yet verified on hardware).
  int preference = 0;
  // The default only from this many real lanes on (desc.lanes(): 2C for complex samples): the
  // channel-count crossover between a one-pass register kernel and a tiled one. Named
  // explicitly, the kernel runs any lane count (the bench measures both sides).
  std::int64_t min_default_lanes = 0;
  // ... and only up to this many (0: no limit): where another kernel takes over above it.
  std::int64_t max_default_lanes = 0;
  // With batches, the default only from this many samples per batch on (kernels that pay a
  // launch or two per batch); one block is not limited.
  std::int64_t min_default_batch_samples = 0;
  // The default only up to this many samples over all batches (0: no limit): where a kernel
  // with a larger fixed cost but a faster stream takes over.
  std::int64_t max_default_samples = 0;
};

// The kernels of a device's backend in ladder order, and lookup by name (InvalidArgument lists
// them).
const std::vector<CovKernel>& cov_kernels_for(const Device& device);
const CovKernel& find_cov_kernel(const Device& device, const std::string& name);

// Kernel "<prefix>.syrk", a baseline: pilot-shifted chunks of the samples multiplied with the
// device's public gemm() (Y Y^T, op T, full square, a plan per chunk) and accumulated in float64
// on the host; real f32 samples, batch 1. Kept to show what the tiled kernels replaced.
CovKernel make_syrk_cov_kernel(const std::string& prefix);

// The float64 two-pass oracle (behind reference_covariance and cpu.reference), multi-threaded.
void reference_moments(const CovArgs& args, CovMoments& out);

// The descriptor of a view (its channels, samples, layout, type and batch) with `ddof`.
CovDesc desc_of(const SamplesView& s, std::int64_t ddof);

// "" when `k` takes desc.type, admits desc.channels and its can_implement agrees, else why not.
std::string cov_kernel_limits(const CovKernel& k, const Device& device, const CovDesc& desc,
                              const Params& params);

// Divides, mirrors (conjugating) and rounds: CovMoments -> CovResult (counts NaN entries).
CovResult finalize_cov(const CovDesc& desc, const CovMoments& m);

// A synchronous stream over any plan (host buffers, load + run + fetch per block).
std::unique_ptr<CovStream> make_sync_stream(CovPlan& plan, const CovDesc& desc, int depth);

}  // namespace kafel
