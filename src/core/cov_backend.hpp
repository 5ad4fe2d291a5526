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

// Samples as kernels see them: host memory, desc.layout, stride >= N (planar) or >= C.
struct CovArgs {
  CovDesc desc;
  const float* data = nullptr;
  std::int64_t stride = 0;
};

// What a kernel returns before the divisor: channel means and the centred co-moments
// M_ij = sum_n (x_in - mean_i)(x_jn - mean_j), C x C row-major, both triangles filled.
struct CovMoments {
  std::vector<double> mean;
  std::vector<double> comoment;
};

// Kernels that accumulate around a per-channel pilot p (sums S_i = sum(x_i - p_i) and
// Q_ij = sum (x_i - p_i)(x_j - p_j), lower triangle packed row by row: index i*(i+1)/2 + j)
// convert with this: mean = p + S/N, M = Q - S S^T / N.
void moments_from_shifted(std::int64_t channels, std::int64_t samples, const double* pilot,
                          const double* sum, const double* q_packed, CovMoments& out);

// The pilot every one-pass kernel shifts by: the float mean of channel c's first
// min(N, kPilotSamples) samples, summed in order in float. Deterministic, so a GPU work-group
// computing it on its own gets the same value as the host.
inline constexpr std::int64_t kPilotSamples = 32;
float pilot_value(const float* data, std::int64_t stride, SampleLayout layout, std::int64_t c,
                  std::int64_t samples);

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
};

// A covariance kernel: its public description plus the plan factory. Registered by its own
// file with a `Register` object (core/registry.hpp), like GEMM kernels.
struct CovKernel : CovKernelInfo {
  // Throws Unsupported when the kernel cannot do this shape (and says why).
  std::function<std::unique_ptr<CovPlan>(const Device&, const CovDesc&, const Params&)> make_plan;
  // Rank when the user names no kernel: the highest positive one whose channel limit admits
  // the shape wins; 0 = never chosen by default.
  int preference = 0;
};

// The kernels of a device's backend in ladder order, and lookup by name (InvalidArgument lists
// them).
const std::vector<CovKernel>& cov_kernels_for(const Device& device);
const CovKernel& find_cov_kernel(const Device& device, const std::string& name);

// Kernel "<prefix>.syrk": pilot-shifted chunks of the samples multiplied with the device's
// GEMM (Y Y^T, op T) and accumulated in float64 on the host. Any channel count; meant for
// hundreds of channels, where covariance is a compute-bound SYRK.
CovKernel make_syrk_cov_kernel(const std::string& prefix);

// The float64 two-pass oracle (behind reference_covariance and cpu.reference), multi-threaded.
void reference_moments(const CovArgs& args, CovMoments& out);

// Divides, mirrors and rounds: CovMoments -> CovResult (counts NaN entries).
CovResult finalize_cov(const CovDesc& desc, const CovMoments& m);

// A synchronous stream over any plan (host buffers, load + run + fetch per block).
std::unique_ptr<CovStream> make_sync_stream(CovPlan& plan, const CovDesc& desc, int depth);

}  // namespace kafel
