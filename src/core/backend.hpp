// The contract between the framework and a backend: devices, GEMM kernels and their plans.
// A kernel file registers its own kernel(s) with one `Register` object (core/registry.hpp);
// nothing else in the tree lists kernels.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/gemm.hpp"
#include "kafel/kernels.hpp"
#include "kafel/params.hpp"

namespace kafel {

// Operands as every kernel sees them, normalised by the framework (see normalize_gemm):
// all row-major. op(A) is m x k: A is m x k (lda >= k) for N, k x m (lda >= m) for T.
// Likewise B is k x n (N) or n x k (T); C is m x n, ldc >= n. Host pointers; element types
// are desc.types (A and B in types.a / types.b, C in types.c).
// A batch (desc.batch > 1) lists where each matrix starts; a, b, c are matrix 0's, and every
// matrix of an operand has its lda / ldb / ldc. Output matrices never share an element
// (normalize_gemm_batch refuses that).
struct GemmArgs {
  GemmArgs() = default;
  GemmArgs(const GemmDesc& d, const void* a_, std::int64_t lda_, const void* b_, std::int64_t ldb_,
           void* c_, std::int64_t ldc_)
      : desc(d), a(a_), lda(lda_), b(b_), ldb(ldb_), c(c_), ldc(ldc_) {}

  GemmDesc desc;
  const void* a = nullptr;
  std::int64_t lda = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* c = nullptr;
  std::int64_t ldc = 0;
  std::vector<const void*> batch_a, batch_b;  // empty for a single matrix
  std::vector<void*> batch_c;

  const void* a_of(std::int64_t i) const { return batch_a.empty() ? a : batch_a[i]; }
  const void* b_of(std::int64_t i) const { return batch_b.empty() ? b : batch_b[i]; }
  void* c_of(std::int64_t i) const { return batch_c.empty() ? c : batch_c[i]; }
  // Matrix i of the batch as a single GEMM (desc.batch = 1).
  GemmArgs matrix(std::int64_t i) const;
};

// One GEMM problem prepared on one device for one kernel with fixed parameters.
// The framework calls load once, run any number of times, then fetch.
class GemmPlan {
 public:
  virtual ~GemmPlan() = default;
  // Copies A, B and C to the device, `slots` independent copies (benchmarks rotate between
  // them so repeated runs do not measure a warm cache). Slot 0 is the one fetch returns.
  virtual void load(const GemmArgs& args, int slots) = 0;
  // Runs the kernel on slot `slot` and returns its time in milliseconds, measured by device
  // events where the backend has them (the call returns when the kernel has finished).
  virtual double run(int slot) = 0;
  // Copies C of slot 0 back into args.c of load (same ldc).
  virtual void fetch() = 0;
  // How run() measures time: "cuda-events", "opencl-events" or "steady-clock".
  virtual std::string timer() const = 0;
  // Instead of load: binds slot 0 to operands already in this device's memory (`args` holds
  // device pointers) and makes run() enqueue on `stream` (CUDA: a cudaStream_t, nullptr = the
  // legacy default stream) after the work already there, returning without waiting (time 0:
  // not measured); nothing is copied through the host and fetch() does nothing. Plans of
  // backends that cannot run on caller-owned memory keep this default, which throws Unsupported.
  virtual void bind(const GemmArgs& args, void* stream);
};

using PlanFactory =
    std::function<std::unique_ptr<GemmPlan>(const Device&, const GemmDesc&, const Params&)>;

// A GEMM kernel: its public description plus what the framework needs to choose and run it.
struct GemmKernel : GemmKernelInfo {
  PlanFactory make_plan;
  // Limits beyond the type table, checked before a plan is made: "" when this kernel can run
  // `desc` on `device` with `params`, else why not (grid limits, shared / local memory for the
  // type, compiled shapes, m*n <= 1024 for one block). Null: no further limits.
  std::function<std::string(const Device&, const GemmDesc&, const Params&)> can_implement;
  // Parameters the kernel prefers for a problem before tuning (may name a subset); applied over
  // the defaults, under tuned values and user overrides. Null: the defaults.
  std::function<Params(const Device&, const GemmDesc&)> heuristic;
  // Rank when the user names no kernel: the highest positive one that can run wins; 0 never.
  std::function<int(const Device&, const GemmDesc&)> preference;

  // Every check in order: type roles and device features (runs), parameter ranges and
  // constraint, can_implement. "" when the kernel can run this problem here.
  std::string can_run(const Device& device, const GemmDesc& desc, const Params& params) const;
  int preference_for(const Device& device, const GemmDesc& desc) const {
    return preference ? preference(device, desc) : 0;
  }
  // The plan for `desc`: make_plan's, or for a batch on a kernel without `batches`, a plan that
  // holds one of make_plan's plans per matrix (run() returns the sum of their times).
  std::unique_ptr<GemmPlan> plan(const Device& device, const GemmDesc& desc,
                                 const Params& params) const;
};

// A constant preference, for kernels that are the default wherever they can run.
inline std::function<int(const Device&, const GemmDesc&)> always(int rank) {
  return [rank](const Device&, const GemmDesc&) { return rank; };
}

// Type support helpers for registrations: the natural roles of each storage type, each
// needing `needs`.
std::vector<TypeSupport> natural_types(std::initializer_list<DType> types, Caps needs = {});

struct Backend {
  std::string name;  // "cpu", "opencl", "cuda"
  int rank = 0;      // listing order: cpu 0, opencl 1, cuda 2
  std::function<std::vector<Device>()> devices;
  // Measures the device's peak now and puts it in its peak fields (kafel::probe_peak); null
  // where the backend has no probe (the GPUs' figures come from their clocks and unit counts).
  std::function<bool(Device&)> probe_peak;
};

// Backends compiled into this build, in rank order.
const std::vector<Backend>& backends();
const Backend& backend_of(const Device& device);
// The GEMM kernels of the device's backend in ladder order (rung, then name).
const std::vector<GemmKernel>& kernels_for(const Device& device);
// Throws InvalidArgument listing the kernels available when `name` is unknown.
const GemmKernel& find_gemm_kernel(const Device& device, std::string_view name);

// What a kernel runs with when neither the user nor the tuning database says otherwise: its
// defaults, overridden by its heuristic for this problem (the tuner's starting point).
// `from_heuristic`, when given, says whether the heuristic set any parameter.
Params heuristic_params(const GemmKernel& kernel, const Device& device, const GemmDesc& desc,
                        bool* from_heuristic = nullptr);

// choose_gemm for one given kernel (which may be outside the registry, as in tests): its
// parameters (overrides > tuned > heuristic > defaults) and every check of can_run. Throws
// InvalidArgument for bad parameters, Unsupported when the kernel cannot run the problem here.
GemmChoice choose_params_for(const GemmKernel& kernel, const Device& device, const GemmDesc& desc,
                             const Params& overrides);

struct BenchOptions;
struct BenchRecord;
// bench_gemm for one given kernel object (the harness itself; bench_gemm resolves a name).
BenchRecord bench_kernel(const Device& device, const GemmKernel& kernel, const GemmDesc& desc,
                         const BenchOptions& opt);

// Validates shapes and turns any combination of layouts into the row-major GemmArgs above
// (a column-major C swaps the roles of A and B; a column-major operand flips its op).
// The roles are the views' element types with `compute`.
GemmArgs normalize_gemm(Op op_a, Op op_b, double alpha, const MatrixView& A, const MatrixView& B,
                        double beta, const MatrixView& C, Compute compute);
// The same for a batch (one view per matrix in each list, equal lengths): every matrix of a list
// must have matrix 0's element type, shape, layout and ld, and no two output matrices may share
// an element; InvalidArgument otherwise. desc.batch is the lists' length (0: nothing to do).
GemmArgs normalize_gemm_batch(Op op_a, Op op_b, double alpha, const std::vector<MatrixView>& A,
                              const std::vector<MatrixView>& B, double beta,
                              const std::vector<MatrixView>& C, Compute compute);
// Chooses the kernel for args.desc as gemm() does (opt.kernel, opt.params), runs it on `args`
// (a single matrix or a batch) and reports; `start` is when the caller's call began.
GemmReport run_gemm(const Device& device, const GemmArgs& args, const GemmOptions& opt,
                    std::chrono::steady_clock::time_point start);
// "" when the row-major rows x cols matrices (leading dimension ld, elements of elem_size bytes)
// starting at `starts` share no element, else which two do.
std::string output_overlap(const std::vector<void*>& starts, std::int64_t rows, std::int64_t cols,
                           std::int64_t ld, std::size_t elem_size);

}  // namespace kafel
