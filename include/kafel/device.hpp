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
  Caps caps;           // features beyond the backend (fp64, images, tensor cores, AVX-512 ...)
  int sm_version = 0;  // CUDA compute capability x 10 (90 for Hopper); 0 elsewhere
  // Peak rates of the matrix units by compute mode where they exist (GFLOP/s or GOP/s):
  // "tf32", "f16", "bf16", "i8", "fp8", "f64". Empty elsewhere.
  std::vector<std::pair<std::string, double>> tensor_peaks;
  std::vector<std::pair<std::string, std::string>> details;  // extra facts for `kafel devices`

  // Peak for a GEMM's element roles: the tensor-core figure when the compute mode runs on
  // matrix units here and one is known, else the SIMT f32/f64 figure; 0 when unknown.
  double peak_gflops(const GemmTypes& t) const;
  double peak_gflops(DType t) const { return peak_gflops(GemmTypes::of(t)); }
};

// The device as a JSON object (the same one `kafel devices --json` and bench reports carry).
std::string device_json(const Device& d, int indent = 2);

// Every device of every backend compiled in, CPU first. A backend whose runtime is missing
// (no driver, no ICD) contributes nothing instead of failing.
std::vector<Device> list_devices();

// Resolves a device name (see the file comment). An empty spec means $KAFEL_DEVICE, else "cpu".
// Throws InvalidArgument naming the spec and the devices present when nothing matches.
Device select_device(std::string_view spec = {});

// Measures the device's peak now and puts it in the peak fields (peak_gflops_f32/f64 and the
// tensor_peaks the probe covers), with a "peak probed" line in `details`: a figure for "% peak"
// from the machine as it runs now, not the cached one of `kafel devices` (which keeps the
// highest figure ever measured under this machine's name, possibly on a faster host of a
// cloud). CPU: the multiply-add loops, ~0.5 s. Returns false, changing nothing, where the
// device's backend has no probe (GPUs).
bool probe_peak(Device& device);

// The fastest device present: a CUDA GPU, else an OpenCL GPU, else the CPU.
Device best_device();

}  // namespace kafel
