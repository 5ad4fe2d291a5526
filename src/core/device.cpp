// Device discovery across backends and resolution of a user's device name.
// Accepted: "cpu", "opencl", "opencl:P:D", "cuda", "cuda:N", or a name substring.
#include "kafel/device.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "core/backend.hpp"
#include "kafel/error.hpp"

namespace kafel {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string present(const std::vector<Device>& all) {
  std::string out;
  for (const auto& d : all) out += (out.empty() ? "" : ", ") + d.id + " (" + d.name + ")";
  return out.empty() ? "none" : out;
}

// "opencl" means the first OpenCL device, GPUs before CPUs; "cuda" means cuda:0.
const Device* first_of(const std::vector<Device>& all, const std::string& backend) {
  const Device* pick = nullptr;
  for (const auto& d : all) {
    if (d.backend != backend) continue;
    if (!pick || (d.is_gpu && !pick->is_gpu)) pick = &d;
  }
  return pick;
}

}  // namespace

double Device::peak_gflops(DType t) const {
  return t == DType::f64 ? peak_gflops_f64 : peak_gflops_f32;
}

std::vector<Device> list_devices() {
  std::vector<Device> all;
  for (const auto& b : backends()) {
    std::vector<Device> found;
    try {
      found = b.devices();
    } catch (const Error&) {
      continue;  // a missing driver or ICD hides that backend's devices, nothing else
    }
    all.insert(all.end(), found.begin(), found.end());
  }
  return all;
}

Device select_device(std::string_view spec_in) {
  std::string spec = trim(spec_in);
  if (spec.empty()) {
    const char* env = std::getenv("KAFEL_DEVICE");
    spec = trim(env ? env : "");
    if (spec.empty()) spec = "cpu";
  }
  const std::vector<Device> all = list_devices();
  const std::string key = lower(spec);
  for (const auto& d : all)
    if (lower(d.id) == key) return d;
  if (key == "opencl" || key == "cuda" || key == "gpu") {
    const Device* d = key == "gpu" ? first_of(all, "cuda") : first_of(all, key);
    if (!d && key == "gpu") d = first_of(all, "opencl");
    if (d && (key != "gpu" || d->is_gpu)) return *d;
  }
  bool looks_like_id = key.rfind("cuda:", 0) == 0 || key.rfind("opencl:", 0) == 0;
  if (!looks_like_id) {
    const Device* match = nullptr;
    for (const auto& d : all)
      if (lower(d.name).find(key) != std::string::npos) {
        if (match)
          throw InvalidArgument("device '" + spec + "' is ambiguous: it matches " + match->id +
                                " and " + d.id);
        match = &d;
      }
    if (match) return *match;
  }
  throw InvalidArgument("unknown device '" + spec + "'; devices present: " + present(all));
}

Device best_device() {
  const std::vector<Device> all = list_devices();
  if (const Device* d = first_of(all, "cuda")) return *d;
  if (const Device* d = first_of(all, "opencl"); d && d->is_gpu) return *d;
  for (const auto& d : all)
    if (d.backend == "cpu") return d;
  throw DeviceError("no device found (not even the CPU backend)");
}

}  // namespace kafel
