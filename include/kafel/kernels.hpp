// What the registry knows about each kernel, for users and tools: names in ladder order, the
// element roles each implements and what it needs from a device, parameters, and the one
// function that chooses a kernel and its parameters for a problem.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/gemm.hpp"
#include "kafel/params.hpp"
#include "kafel/types.hpp"

namespace kafel {

// One combination of element roles a kernel implements, and the device features it needs
// for it (e.g. f64 on OpenCL needs Cap::fp64).
struct TypeSupport {
  GemmTypes types;
  Caps needs;
};

// The description every GEMM kernel registers (src/core/registry.hpp adds the factories).
struct GemmKernelInfo {
  std::string name;     // "<backend>.<rung>[.<variant>]", e.g. "cuda.pipelined"
  std::string summary;  // one line: what the rung does
  int rung = 0;         // position in the backend's ladder (tables and charts sort by it)
  std::vector<TypeSupport> types;
  ParamSpace params;      // launch / tile parameters (empty when none)
  bool baseline = false;  // a comparison library (OpenBLAS, cuBLAS, CLBlast), not one of ours
  // A baseline's caveat on this machine ("" when none), which `kafel bench` prints as a warning:
  // e.g. OpenBLAS running kernels for an older ISA than the CPU's.
  std::string caveat;
  // Runs a whole batch (GemmDesc::batch > 1) in one plan: one launch on GPUs. Kernels without it
  // still run batches: the framework gives each matrix its own plan.
  bool batches = false;

  std::string backend() const { return name.substr(0, name.find('.')); }
  bool supports(const GemmTypes& t) const;
  // "" when this kernel implements `t` and the device has what it needs for it, else why not.
  std::string runs(const GemmTypes& t, const Device& device) const;
};

// The covariance kernels' description (the sample types they take, limits).
struct CovKernelInfo {
  std::string name;
  std::string summary;
  int rung = 0;
  std::vector<DType> sample_types;  // f32, cf32, ci8 ...
  std::int64_t max_channels = 0;    // 0 = any
  ParamSpace params;
  bool baseline = false;  // a vendor library (cuBLAS), not one of ours
  // What the lane products run on, for the bench's compute floor: "" the SIMT f32 units, else
  // the Device::tensor_peaks entry ("tf32", "f16", "i8"), `products` tensor-core products per
  // lane product (3 for split operands: big*big + big*small + small*big).
  std::string tensor_peak;
  int products = 1;
};

// The kernels compiled in for a device's backend, in ladder order (rung, then name).
std::vector<GemmKernelInfo> gemm_kernels(const Device& device);
std::vector<CovKernelInfo> cov_kernels(const Device& device);
// One kernel by name; throws InvalidArgument listing the kernels available.
GemmKernelInfo gemm_kernel(const Device& device, const std::string& name);
CovKernelInfo cov_kernel(const Device& device, const std::string& name);

// The decision of choose_gemm: which kernel, with which parameters, and why.
struct GemmChoice {
  std::string kernel;
  Params params;
  std::string source;  // "default", "heuristic", "tuned: <key>", "shipped: <key>", "user" ...
  std::string config() const;  // "BM=128 BN=256 (heuristic)"
};

// The one place that decides how a GEMM runs, for gemm(), the CLI, the benchmarks and the
// tests. Kernel: `kernel` when named (it must implement desc.types on this device), else the
// best-ranked of the device's kernels that implements them and can_implement this problem.
// Parameters: `overrides` > the tuning database > the kernel's heuristic > its defaults.
// Throws Unsupported with the reason when no kernel can run it, InvalidArgument for bad names or
// parameters.
GemmChoice choose_gemm(const Device& device, const GemmDesc& desc, const std::string& kernel = {},
                       const Params& overrides = {});

// The covariance kernel used for a device, sample type and channel count when none is named.
std::string default_cov_kernel(const Device& device, std::int64_t channels,
                               DType sample_type = DType::f32);

}  // namespace kafel
