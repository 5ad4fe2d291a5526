// Devices kafel can run on (CPU, OpenCL, CUDA) and how a user names one.
// Names: "cpu", "opencl", "opencl:P:D", "cuda", "cuda:N", or a substring of the device name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kafel/types.hpp"

namespace kafel {

struct Device {
  std::string id;       // canonical name: "cpu", "opencl:0:1", "cuda:0"
  std::string backend;  // "cpu", "opencl" or "cuda"
  std::string name;     // the vendor's device name
  std::string vendor;
  std::string driver;  // driver / runtime version, part of the tuning-database key
  int platform = 0;    // OpenCL platform index (0 elsewhere)
  int index = 0;       // device index within the platform / CUDA ordinal
  int compute_units = 0;
  double clock_mhz = 0;
  std::uint64_t global_memory = 0;  // bytes usable for operands
  std::uint64_t local_memory = 0;   // bytes of local/shared memory per work-group/block
  std::uint64_t cache_bytes = 0;    // last-level cache, decides benchmark buffer rotation
  double peak_gflops_f32 = 0;       // estimate: units x lanes x 2 x clock
  double peak_gflops_f64 = 0;
  double bandwidth_gbs = 0;  // estimate or 0 when unknown
  bool is_gpu = false;
  std::vector<std::pair<std::string, std::string>> details;  // extra facts for `kafel devices`

  // Peak for an element type (i32 and f16 storage use the f32 figure); 0 when unknown.
  double peak_gflops(DType t) const;
};

// Every device of every backend compiled in, CPU first. A backend whose runtime is missing
// (no driver, no ICD) contributes nothing instead of failing.
std::vector<Device> list_devices();

// Resolves a device name (see the file comment). An empty spec means $KAFEL_DEVICE, else "cpu".
// Throws InvalidArgument naming the spec and the devices present when nothing matches.
Device select_device(std::string_view spec = {});

// The fastest device present: a CUDA GPU, else an OpenCL GPU, else the CPU.
Device best_device();

}  // namespace kafel
