// The list of backends compiled into this build and kernel lookup by name.
// Adding a backend is one line here; adding a kernel is one line in its backend's registry.
#include <map>
#include <mutex>
#include <string>

#include "core/backend.hpp"
#include "kafel/error.hpp"

namespace kafel {

bool GemmKernel::supports(DType t) const {
  for (DType s : types)
    if (s == t) return true;
  return false;
}

const std::vector<Backend>& backends() {
  static const std::vector<Backend> all = [] {
    std::vector<Backend> v{cpu_backend()};
#ifdef KAFEL_WITH_OPENCL
    v.push_back(opencl_backend());
#endif
#ifdef KAFEL_WITH_CUDA
    v.push_back(cuda_backend());
#endif
    return v;
  }();
  return all;
}

const Backend& backend_of(const Device& device) {
  for (const auto& b : backends())
    if (b.name == device.backend) return b;
  throw InvalidArgument("device " + device.id + " belongs to backend '" + device.backend +
                        "', which this build does not include");
}

const std::vector<GemmKernel>& kernels_for(const Device& device) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<GemmKernel>> cache;  // node-stable references
  const Backend& b = backend_of(device);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(b.name);
  if (it == cache.end()) it = cache.emplace(b.name, b.gemm_kernels()).first;
  return it->second;
}

const GemmKernel& find_gemm_kernel(const Device& device, std::string_view name) {
  const auto& list = kernels_for(device);
  for (const auto& k : list)
    if (k.name == name) return k;
  std::string known;
  for (const auto& k : list) known += (known.empty() ? "" : ", ") + k.name;
  throw InvalidArgument("unknown kernel '" + std::string(name) + "' for " + device.id +
                        "; available: " + known);
}

std::vector<GemmKernelInfo> gemm_kernels(const Device& device) {
  std::vector<GemmKernelInfo> out;
  for (const auto& k : kernels_for(device)) out.push_back({k.name, k.summary, k.types});
  return out;
}

}  // namespace kafel
