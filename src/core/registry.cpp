// The registry every kernel file adds itself to at library load, and the lookups built on it:
// backends in rank order, kernels per backend in ladder order, by-name search.
#include "core/registry.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "kafel/error.hpp"

namespace kafel {
namespace {

// Filled during static initialisation (one thread), frozen and sorted at the first query.
struct Store {
  std::mutex mutex;
  bool frozen = false;
  std::vector<Backend> backends;
  std::map<std::string, std::vector<GemmKernel>> gemm;  // backend name -> kernels
  std::map<std::string, std::vector<CovKernel>> cov;

  void add_check() const {
    if (frozen)
      throw std::logic_error("kafel: a kernel registered after the registry was first used");
  }
  void freeze() {
    std::lock_guard<std::mutex> lock(mutex);
    if (frozen) return;
    std::sort(backends.begin(), backends.end(),
              [](const Backend& a, const Backend& b) { return a.rank < b.rank; });
    auto by_rung = [](const auto& a, const auto& b) {
      return a.rung != b.rung ? a.rung < b.rung : a.name < b.name;
    };
    for (auto& [name, list] : gemm) std::sort(list.begin(), list.end(), by_rung);
    for (auto& [name, list] : cov) std::sort(list.begin(), list.end(), by_rung);
    frozen = true;
  }
};

Store& store() {
  static Store s;
  return s;
}

Store& frozen_store() {
  Store& s = store();
  s.freeze();
  return s;
}

// A parameter space whose own defaults or candidates break its ranges is a programming error.
void check_space(const std::string& kernel, const ParamSpace& space) {
  for (const auto& d : space.params) {
    if (d.max < d.min)
      throw std::logic_error("kafel: " + kernel + " parameter " + d.name + " has an empty range");
    for (auto v : d.candidates)
      if (v < d.min || v > d.max)
        throw std::logic_error("kafel: " + kernel + " parameter " + d.name + " candidate " +
                               std::to_string(v) + " is outside its range");
  }
  if (const std::string why = space.check(space.defaults()); !why.empty())
    throw std::logic_error("kafel: " + kernel + " default parameters are invalid: " + why);
}

std::string backend_prefix(const std::string& kernel_name) {
  const auto dot = kernel_name.find('.');
  if (dot == std::string::npos || dot == 0)
    throw std::logic_error("kafel: kernel name '" + kernel_name + "' has no '<backend>.' prefix");
  return kernel_name.substr(0, dot);
}

// The registry keys kernels by backend name; OpenCL kernels are named "ocl.*".
std::string backend_key(const std::string& prefix) {
  return prefix == "ocl" ? "opencl" : prefix;
}

template <class K>
const K& find_named(const std::vector<K>& list, std::string_view name, const Device& device,
                    const char* what) {
  for (const auto& k : list)
    if (k.name == name) return k;
  std::string known;
  for (const auto& k : list) known += (known.empty() ? "" : ", ") + k.name;
  throw InvalidArgument("unknown " + std::string(what) + " '" + std::string(name) + "' for " +
                        device.id + "; available: " + (known.empty() ? "none" : known));
}

}  // namespace

Register::Register(Backend backend) {
  Store& s = store();
  s.add_check();
  s.backends.push_back(std::move(backend));
}

Register::Register(GemmKernel kernel) {
  Store& s = store();
  s.add_check();
  check_space(kernel.name, kernel.params);
  if (!kernel.make_plan) throw std::logic_error("kafel: " + kernel.name + " has no make_plan");
  s.gemm[backend_key(backend_prefix(kernel.name))].push_back(std::move(kernel));
}

Register::Register(std::vector<GemmKernel> kernels) {
  for (auto& k : kernels) Register{std::move(k)};
}

Register::Register(CovKernel kernel) {
  Store& s = store();
  s.add_check();
  check_space(kernel.name, kernel.params);
  if (!kernel.make_plan) throw std::logic_error("kafel: " + kernel.name + " has no make_plan");
  s.cov[backend_key(backend_prefix(kernel.name))].push_back(std::move(kernel));
}

const std::vector<Backend>& backends() {
  return frozen_store().backends;
}

const Backend& backend_of(const Device& device) {
  for (const auto& b : backends())
    if (b.name == device.backend) return b;
  throw InvalidArgument("device " + device.id + " belongs to backend '" + device.backend +
                        "', which this build does not include");
}

const std::vector<GemmKernel>& kernels_for(const Device& device) {
  backend_of(device);
  Store& s = frozen_store();
  static const std::vector<GemmKernel> none;
  const auto it = s.gemm.find(device.backend);
  return it == s.gemm.end() ? none : it->second;
}

const GemmKernel& find_gemm_kernel(const Device& device, std::string_view name) {
  return find_named(kernels_for(device), name, device, "kernel");
}

const std::vector<CovKernel>& cov_kernels_for(const Device& device) {
  backend_of(device);
  Store& s = frozen_store();
  static const std::vector<CovKernel> none;
  const auto it = s.cov.find(device.backend);
  return it == s.cov.end() ? none : it->second;
}

const CovKernel& find_cov_kernel(const Device& device, const std::string& name) {
  return find_named(cov_kernels_for(device), name, device, "covariance kernel");
}

std::vector<const GemmKernel*> all_gemm_kernels() {
  std::vector<const GemmKernel*> out;
  for (const auto& [backend, list] : frozen_store().gemm)
    for (const auto& k : list) out.push_back(&k);
  return out;
}

std::vector<const CovKernel*> all_cov_kernels() {
  std::vector<const CovKernel*> out;
  for (const auto& [backend, list] : frozen_store().cov)
    for (const auto& k : list) out.push_back(&k);
  return out;
}

// ---- public descriptions -----------------------------------------------------------------

bool GemmKernelInfo::supports(const GemmTypes& t) const {
  for (const auto& s : types)
    if (s.types == t) return true;
  return false;
}

std::string GemmKernelInfo::runs(const GemmTypes& t, const Device& device) const {
  bool found = false;
  for (const auto& s : types) {
    if (s.types != t) continue;
    found = true;
    if (device.caps.has(s.needs)) return "";
    Caps missing;
    missing.bits = s.needs.bits & ~device.caps.bits;
    return name + " needs " + missing.names() + " for " + t.name() + ", which " + device.id +
           " lacks";
  }
  if (!found) {
    std::string list;
    for (const auto& s : types) list += (list.empty() ? "" : ", ") + s.types.name();
    return name + " does not implement " + t.name() + " (it implements " +
           (list.empty() ? "nothing" : list) + ")";
  }
  return "";
}

std::string GemmKernel::can_run(const Device& device, const GemmDesc& desc, const Params& p) const {
  if (std::string why = runs(desc.types, device); !why.empty()) return why;
  if (std::string why = params.check(p); !why.empty())
    return name + " " + params.format(p) + ": " + why;
  if (can_implement) {
    if (std::string why = can_implement(device, desc, p); !why.empty())
      return name + (p.empty() ? "" : " " + params.format(p)) + ": " + why;
  }
  return "";
}

std::vector<TypeSupport> natural_types(std::initializer_list<DType> types, Caps needs) {
  std::vector<TypeSupport> out;
  for (DType t : types) out.push_back({GemmTypes::of(t), needs});
  return out;
}

std::vector<GemmKernelInfo> gemm_kernels(const Device& device) {
  std::vector<GemmKernelInfo> out;
  for (const auto& k : kernels_for(device)) out.push_back(k);
  return out;
}

std::vector<CovKernelInfo> cov_kernels(const Device& device) {
  std::vector<CovKernelInfo> out;
  for (const auto& k : cov_kernels_for(device)) out.push_back(k);
  return out;
}

GemmKernelInfo gemm_kernel(const Device& device, const std::string& name) {
  return find_gemm_kernel(device, name);
}

CovKernelInfo cov_kernel(const Device& device, const std::string& name) {
  return find_cov_kernel(device, name);
}

}  // namespace kafel
