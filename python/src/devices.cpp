// kafel.Device and kafel.devices(): the devices of every backend compiled in, with their peak
// figures, capabilities and kernels, named as in C++ and the CLI ("cpu", "cuda:0", ...).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

#include "binding.hpp"
#include "kafel/kernels.hpp"

namespace kafel::py {
namespace {

std::vector<std::string> gemm_kernel_names(const Device& d) {
  std::vector<std::string> names;
  for (const GemmKernelInfo& k : gemm_kernels(d)) names.push_back(k.name);
  return names;
}

std::vector<std::string> cov_kernel_names(const Device& d) {
  std::vector<std::string> names;
  for (const CovKernelInfo& k : cov_kernels(d)) names.push_back(k.name);
  return names;
}

// Element roles ("f32", "i8", "f32/tf32" ...) some kernel of this device runs here.
std::vector<std::string> gemm_type_names(const Device& d) {
  std::vector<std::string> names;
  for (const GemmKernelInfo& k : gemm_kernels(d))
    for (const TypeSupport& t : k.types)
      if (k.runs(t.types, d).empty() &&
          std::find(names.begin(), names.end(), t.types.name()) == names.end())
        names.push_back(t.types.name());
  return names;
}

nb::dict tensor_peaks(const Device& d) {
  nb::dict out;
  for (const auto& [mode, gflops] : d.tensor_peaks) out[mode.c_str()] = gflops;
  return out;
}

std::vector<std::string> cap_names(const Device& d) {
  std::vector<std::string> names;
  for (std::uint32_t bit = 1; bit != 0 && bit <= d.caps.bits; bit <<= 1)
    if (d.caps.bits & bit) names.emplace_back(to_string(static_cast<Cap>(bit)));
  return names;
}

std::string repr(const Device& d) {
  return "kafel.Device('" + d.id + "')  # " + d.name;
}

}  // namespace

void bind_devices(nb::module_& m) {
  nb::class_<Device>(m, "Device",
                     "A device kafel runs on. Device(spec) resolves a name as the C++ API and "
                     "the CLI do: 'cpu', 'opencl', 'opencl:P:D', 'cuda', 'cuda:N' or a "
                     "substring of the device's name; '' means $KAFEL_DEVICE, else 'cpu'.")
      .def(
          "__init__",
          [](Device* self, const std::string& spec) { new (self) Device(cached_device(spec)); },
          nb::arg("spec") = "")
      .def_ro("id", &Device::id, "Canonical name: 'cpu', 'opencl:0:1', 'cuda:0'.")
      .def_ro("backend", &Device::backend, "'cpu', 'opencl' or 'cuda'.")
      .def_ro("name", &Device::name, "The vendor's device name.")
      .def_ro("vendor", &Device::vendor)
      .def_ro("driver", &Device::driver, "Driver / runtime version.")
      .def_ro("index", &Device::index, "CUDA ordinal or OpenCL device index.")
      .def_ro("compute_units", &Device::compute_units)
      .def_ro("clock_mhz", &Device::clock_mhz)
      .def_ro("global_memory", &Device::global_memory, "Bytes usable for operands.")
      .def_ro("peak_gflops_f32", &Device::peak_gflops_f32, "Estimated float32 peak, GFLOP/s.")
      .def_ro("peak_gflops_f64", &Device::peak_gflops_f64, "Estimated float64 peak, GFLOP/s.")
      .def_ro("bandwidth_gbs", &Device::bandwidth_gbs, "Memory bandwidth, GB/s (0: unknown).")
      .def_ro("is_gpu", &Device::is_gpu)
      .def_ro("sm_version", &Device::sm_version, "CUDA compute capability x 10; 0 elsewhere.")
      .def_prop_ro("tensor_peaks", &tensor_peaks,
                   "Matrix-unit peaks by compute mode ('tf32', 'f16', ...), GFLOP/s or GOP/s.")
      .def_prop_ro("caps", &cap_names, "Features beyond the backend: 'fp64', 'avx512', ...")
      .def_prop_ro("kernels", &gemm_kernel_names, "GEMM kernels for this device, ladder order.")
      .def_prop_ro("gemm_types", &gemm_type_names,
                   "GEMM element roles some kernel runs here: 'f32', 'f64', 'i8', 'f32/tf32' ...")
      .def_prop_ro("cov_kernels", &cov_kernel_names, "Covariance kernels for this device.")
      .def(
          "json", [](const Device& d) { return device_json(d); },
          "The device as the JSON object of `kafel devices --json`.")
      .def("__repr__", &repr)
      .def("__eq__", [](const Device& a, const Device& b) { return a.id == b.id; })
      .def("__hash__", [](const Device& d) { return nb::hash(nb::str(d.id.c_str())); });

  m.def("devices", &list_devices,
        "Every device of every backend compiled in, CPU first (a backend without its runtime "
        "contributes none).");
  m.def("best_device", &best_device,
        "The fastest device present: a CUDA GPU, else an OpenCL "
        "GPU, else the CPU.");
}

}  // namespace kafel::py
