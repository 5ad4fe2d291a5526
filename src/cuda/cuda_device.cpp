// The CUDA backend's devices: discovery, the description `kafel devices` shows (peaks of the
// SIMT units and of the tensor cores, capabilities), and the registration of backend "cuda".
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "core/registry.hpp"
#include "cuda/device_facts.hpp"
#include "cuda/runtime.hpp"
#include "kafel/bench.hpp"

namespace kafel::cuda {

namespace {

// Dense tensor-core rates in FLOP (OP for int8) per SM per clock, by architecture.
// Sources, NVIDIA's figures divided by SMs x clock:
// - sm_80, "NVIDIA A100 Tensor Core GPU Architecture" whitepaper: 1024 dense FP16 FMA per clock
//   per SM (256 per tensor core, 4 per SM); A100 SXM4 (108 SMs, 1410 MHz): FP16 / BF16 312,
//   TF32 156, INT8 624 TOPS, FP64 tensor 19.5 TFLOPS. No fp8.
// - sm_90, "NVIDIA H100 Tensor Core GPU Architecture" whitepaper and the blog "NVIDIA Hopper
//   Architecture In-Depth", table 3 (twice A100's rates per SM and clock; fp8 and int8 twice
//   FP16): H100 SXM5 (132 SMs, 1830 MHz boost for tensor work): FP16 / BF16 989.4, TF32 494.7,
//   FP8 1978.9 TFLOPS, INT8 1978.9 TOPS; FP64 tensor 66.9 TFLOPS at 1980 MHz.
// The peaks below use the clock the device reports (its maximum, 1980 MHz on H100/H200 SXM),
// so they read about 8 % above the datasheet's tensor figures, which use 1830 MHz.
struct TensorRates {
  int sm_version;
  double tf32, f16, bf16, fp8, i8, f64;
};

constexpr TensorRates kTensorRates[] = {
    {80, 1024, 2048, 2048, 0, 4096, 128},
    {90, 2048, 4096, 4096, 8192, 8192, 256},
};

int attribute(cudaDeviceAttr attr, int ordinal) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, ordinal) != cudaSuccess) return 0;
  return v;
}

// Whether this build carries sm_90a machine code (the *_sm90a.cu files, see CMakeLists.txt).
constexpr bool kSm90aCompiled =
#ifdef KAFEL_CUDA_SM90A
    true;
#else
    false;
#endif

Device describe_device(int ordinal) {
  cudaDeviceProp p{};
  KAFEL_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
  Device d;
  d.id = "cuda:" + std::to_string(ordinal);
  d.backend = "cuda";
  d.name = p.name;
  d.vendor = "NVIDIA";
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  d.driver = "CUDA driver " + std::to_string(driver / 1000) + "." +
             std::to_string(driver % 1000 / 10) + ", sm_" + std::to_string(p.major) +
             std::to_string(p.minor);
  d.platform = 0;
  d.index = ordinal;
  d.compute_units = p.multiProcessorCount;
  d.clock_mhz = attribute(cudaDevAttrClockRate, ordinal) / 1000.0;
  d.global_memory = p.totalGlobalMem;
  d.local_memory = p.sharedMemPerBlockOptin;
  d.cache_bytes = static_cast<std::uint64_t>(p.l2CacheSize);
  d.sm_version = p.major * 10 + p.minor;
  // 128 FP32 lanes per SM (Volta and later data-centre parts), 2 flops per FMA.
  d.peak_gflops_f32 = double(p.multiProcessorCount) * 128.0 * 2.0 * d.clock_mhz / 1000.0;
  d.peak_gflops_f64 = d.peak_gflops_f32 * f64_ratio(d.sm_version);
  d.tensor_peaks = tensor_peaks_for(d.sm_version, p.multiProcessorCount, d.clock_mhz);
  d.caps = cuda_caps(d.sm_version, kSm90aCompiled);
  const double mem_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);
  const double bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  d.bandwidth_gbs = 2.0 * mem_khz * 1e3 * bus_bits / 8.0 / 1e9;  // double data rate
  d.is_gpu = true;
  d.details = {
      {"compute capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
      {"multiprocessors", std::to_string(p.multiProcessorCount)},
      {"L2 cache", human_bytes(static_cast<double>(p.l2CacheSize))},
      {"shared memory per block (opt-in)",
       std::to_string(p.sharedMemPerBlockOptin / 1024) + " KiB"},
      {"registers per SM", std::to_string(p.regsPerMultiprocessor)},
      {"CUDA runtime", std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10)},
      {"tensor-core kernels", d.caps.has(Cap::wgmma_sm90a) ? "mma.sync and wgmma/TMA (sm_90a)"
                              : d.caps.has(Cap::mma_sm80)  ? "mma.sync (sm_80+)"
                                                           : "none"},
  };
  return d;
}

// Every CUDA device present; empty without a driver or device, and a device that cannot be
// queried is left out rather than failing the listing.
std::vector<Device> list_cuda_devices() {
  std::vector<Device> out;
  try {
    const int n = device_count();
    for (int i = 0; i < n; ++i) out.push_back(describe_device(i));
  } catch (const Error&) {
  }
  return out;
}

const Register registered{Backend{"cuda", 2, list_cuda_devices, nullptr}};

}  // namespace

Caps cuda_caps(int sm_version, bool sm90a_compiled) {
  Caps caps = Cap::fp64;
  if (sm_version >= 53) caps |= Cap::fp16;  // native half arithmetic
  if (sm_version >= 80) caps |= Cap::mma_sm80;
  if (sm_version == 90 && sm90a_compiled) caps |= Cap::wgmma_sm90a;
  return caps;
}

std::vector<std::pair<std::string, double>> tensor_peaks_for(int sm_version, int sms,
                                                             double clock_mhz) {
  for (const TensorRates& r : kTensorRates) {
    if (r.sm_version != sm_version) continue;
    const double per_rate = double(sms) * clock_mhz / 1000.0;  // GFLOP/s per FLOP/SM/clock
    std::vector<std::pair<std::string, double>> peaks = {
        {"tf32", r.tf32 * per_rate}, {"f16", r.f16 * per_rate}, {"bf16", r.bf16 * per_rate},
        {"fp8", r.fp8 * per_rate},   {"i8", r.i8 * per_rate},   {"f64", r.f64 * per_rate}};
    std::erase_if(peaks, [](const auto& p) { return p.second <= 0; });
    return peaks;
  }
  return {};
}

double f64_ratio(int sm_version) {
  const int major = sm_version / 10, minor = sm_version % 10;
  // Consumer Ampere/Ada (8.6, 8.9) and Blackwell (12.x) run FP64 at 1/64; the x.0 data-centre
  // parts from Pascal on at 1/2; the rest at 1/32.
  if (major == 12 || (major == 8 && minor != 0)) return 1.0 / 64.0;
  if (minor == 0 && major >= 6) return 0.5;
  return 1.0 / 32.0;
}

}  // namespace kafel::cuda
