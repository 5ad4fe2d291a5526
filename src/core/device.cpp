// Device discovery across backends and resolution of a user's device name.
// Accepted: "cpu", "opencl", "opencl:P:D", "cuda", "cuda:N", or a name substring.
#include "kafel/device.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>
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

namespace {

// The tensor_peaks key of a compute mode on matrix units, "" for plain SIMT arithmetic.
std::string matrix_unit_key(const GemmTypes& t) {
  switch (t.compute) {
    case Compute::tf32:
    case Compute::tf32x3:
      return "tf32";
    case Compute::f64:
      return "f64";
    case Compute::i32:
      return t.a == DType::i8 ? "i8" : "";
    case Compute::f32:
      if (t.a == DType::f16) return "f16";
      if (t.a == DType::bf16) return "bf16";
      if (t.a == DType::e4m3 || t.a == DType::e5m2) return "fp8";
      return "";
    case Compute::f16:
      return "f16";
  }
  return "";
}

}  // namespace

double Device::peak_gflops(const GemmTypes& t) const {
  const std::string key = matrix_unit_key(t);
  for (const auto& [name, value] : tensor_peaks)
    if (name == key && value > 0)  // 3xtf32 runs three tf32 products per useful one
      return t.compute == Compute::tf32x3 ? value / 3.0 : value;
  return t.compute == Compute::f64 ? peak_gflops_f64 : peak_gflops_f32;
}

std::string device_json(const Device& d, int indent) {
  using Json = nlohmann::ordered_json;
  Json details = Json::object();
  for (const auto& [key, value] : d.details) details[key] = value;
  Json peaks = Json::object();
  for (const auto& [key, value] : d.tensor_peaks) peaks[key] = value;
  const Json j{{"id", d.id},
               {"backend", d.backend},
               {"name", d.name},
               {"vendor", d.vendor},
               {"driver", d.driver},
               {"is_gpu", d.is_gpu},
               {"compute_units", d.compute_units},
               {"clock_mhz", d.clock_mhz},
               {"global_memory", d.global_memory},
               {"local_memory", d.local_memory},
               {"cache_bytes", d.cache_bytes},
               {"peak_gflops_f32", d.peak_gflops_f32},
               {"peak_gflops_f64", d.peak_gflops_f64},
               {"tensor_peaks", peaks},
               {"bandwidth_gbs", d.bandwidth_gbs},
               {"capabilities", d.caps.names()},
               {"sm_version", d.sm_version},
               {"details", details}};
  return j.dump(indent);
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

bool probe_peak(Device& device) {
  const Backend& b = backend_of(device);
  return b.probe_peak && b.probe_peak(device);
}

}  // namespace kafel
