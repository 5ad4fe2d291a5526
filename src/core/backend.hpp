// The contract between the framework and a backend: devices, GEMM kernels, plans.
// A backend is one registry (src/<backend>/registry.cpp); adding a kernel is one line there.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/gemm.hpp"
#include "kafel/params.hpp"

namespace kafel {

// Operands as every kernel sees them, normalised by the framework (see normalize_gemm):
// all row-major. op(A) is m x k: A is m x k (lda >= k) for N, k x m (lda >= m) for T.
// Likewise B is k x n (N) or n x k (T); C is m x n, ldc >= n. Host pointers.
struct GemmArgs {
  GemmDesc desc;
  const void* a = nullptr;
  std::int64_t lda = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* c = nullptr;
  std::int64_t ldc = 0;
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
};

struct GemmKernel {
  std::string name;     // "<backend>.<rung>", e.g. "cpu.naive", "cuda.smem"
  std::string summary;  // one line: what the rung does
  std::vector<DType> types;
  ParamSpace params;  // launch / tile parameters (empty when none)
  // Throws Unsupported when the kernel cannot do this problem (and says why), InvalidArgument
  // for bad parameters. `params` is already resolved (defaults, tuned values, overrides).
  std::function<std::unique_ptr<GemmPlan>(const Device&, const GemmDesc&, const Params&)> make_plan;
  // Extra operand rounding for verification (tensor-core modes); see VerifyOptions.
  double input_roundoff = 0;
  // A comparison library (OpenBLAS, cuBLAS, CLBlast), not one of ours; `--vs` selects these.
  bool baseline = false;

  bool supports(DType t) const;
};

struct Backend {
  std::string name;  // "cpu", "opencl", "cuda"
  std::function<std::vector<Device>()> devices;
  std::function<std::vector<GemmKernel>()> gemm_kernels;
  // The kernel used when the user names none, for a device and type.
  std::function<std::string(const Device&, DType)> default_gemm_kernel;
};

// Backends compiled into this build, CPU first.
const std::vector<Backend>& backends();
const Backend& backend_of(const Device& device);
// The kernels of the device's backend; cached after the first call.
const std::vector<GemmKernel>& kernels_for(const Device& device);
// Throws InvalidArgument listing the kernels available when `name` is unknown.
const GemmKernel& find_gemm_kernel(const Device& device, std::string_view name);

// Each backend's registry (defined in src/<backend>/registry.cpp).
Backend cpu_backend();
#ifdef KAFEL_WITH_OPENCL
Backend opencl_backend();
#endif
#ifdef KAFEL_WITH_CUDA
Backend cuda_backend();
#endif

// Parameters a kernel runs with: its defaults, then the tuning database's entry for this
// device and size class (when one exists), then `overrides`. `source` says which applied.
Params choose_params(const GemmKernel& kernel, const Device& device, const GemmDesc& desc,
                     const Params& overrides, std::string* source = nullptr);

// Validates shapes and turns any combination of layouts into the row-major GemmArgs above
// (a column-major C swaps the roles of A and B; a column-major operand flips its op).
GemmArgs normalize_gemm(Op op_a, Op op_b, double alpha, const MatrixView& A, const MatrixView& B,
                        double beta, const MatrixView& C);

}  // namespace kafel
