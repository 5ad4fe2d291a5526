// Implementation of the CUDA runtime layer (see runtime.hpp): error translation, buffers,
// streams, timers and the device description shown by `kafel devices`.
#include "cuda/runtime.hpp"

#include <array>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>

#include "kafel/bench.hpp"
namespace kafel::cuda {

namespace {

std::string where(const char* file, int line) {
  std::string f = file;
  auto slash = f.find_last_of('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  return f + ":" + std::to_string(line);
}

std::string mib(std::size_t bytes) {
  return human_bytes(static_cast<double>(bytes));
}

// FP64 rate relative to FP32 per compute capability: full-rate parts (x.0 data-centre GPUs)
// run FP64 at 1/2, consumer parts at 1/32 or 1/64.
double f64_ratio(int major, int minor) {
  if (minor == 0 && (major == 6 || major == 7 || major == 8 || major == 9 || major >= 10))
    return 0.5;
  if (major == 8 || major == 12) return 1.0 / 64.0;
  return 1.0 / 32.0;
}

int attribute(cudaDeviceAttr attr, int ordinal) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, ordinal) != cudaSuccess) return 0;
  return v;
}

}  // namespace

void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::string msg = std::string("CUDA error at ") + where(file, line) + ": " + call + ": " +
                    cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  if (err == cudaErrorMemoryAllocation) throw OutOfMemory(msg);
  throw DeviceError(msg);
}

void check_launch(const char* kernel, const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return;
  throw DeviceError(std::string("CUDA launch of ") + kernel + " failed at " + where(file, line) +
                    ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error so later calls are not confused
    return 0;
  }
  return n;
}

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
  // 128 FP32 lanes per SM (Volta and later data-centre parts), 2 flops per FMA.
  d.peak_gflops_f32 = double(p.multiProcessorCount) * 128.0 * 2.0 * d.clock_mhz / 1000.0;
  d.peak_gflops_f64 = d.peak_gflops_f32 * f64_ratio(p.major, p.minor);
  double mem_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);
  double bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  d.bandwidth_gbs = 2.0 * mem_khz * 1e3 * bus_bits / 8.0 / 1e9;  // double data rate
  d.is_gpu = true;
  d.details = {
      {"compute capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
      {"multiprocessors", std::to_string(p.multiProcessorCount)},
      {"L2 cache", mib(static_cast<std::size_t>(p.l2CacheSize))},
      {"shared memory per block (opt-in)",
       std::to_string(p.sharedMemPerBlockOptin / 1024) + " KiB"},
      {"registers per SM", std::to_string(p.regsPerMultiprocessor)},
      {"CUDA runtime", std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10)},
  };
  return d;
}

std::vector<Device> list_cuda_devices() noexcept {
  std::vector<Device> out;
  try {
    int n = device_count();
    for (int i = 0; i < n; ++i) out.push_back(describe_device(i));
  } catch (...) {
    // A device that cannot be queried is left out rather than failing the listing.
  }
  return out;
}

int ordinal_of(const Device& device) {
  if (device.backend != "cuda")
    throw InvalidArgument("device '" + device.id + "' is not a CUDA device");
  return device.index;
}

DeviceGuard::DeviceGuard(int ordinal) {
  KAFEL_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != ordinal) KAFEL_CUDA_CHECK(cudaSetDevice(ordinal));
}

DeviceGuard::~DeviceGuard() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_ && previous_ >= 0)
    cudaSetDevice(previous_);
}

// --- DeviceBuffer ----------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(std::size_t bytes, const char* what) : bytes_(bytes) {
  if (bytes == 0) return;
  std::size_t free_b = 0, total_b = 0;
  KAFEL_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (bytes > free_b) {
    int dev = 0;
    cudaGetDevice(&dev);
    throw OutOfMemory("cuda:" + std::to_string(dev) + ": " + what + " needs " +
                      std::to_string(bytes) + " bytes (" + mib(bytes) + "), only " + mib(free_b) +
                      " of " + mib(total_b) + " free");
  }
  KAFEL_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  release();
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (ptr_) cudaFree(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  if (!bytes) return;
  KAFEL_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice));
  KAFEL_CUDA_CHECK(cudaStreamSynchronize(nullptr));  // pageable copies may still be in flight
}
void DeviceBuffer::download(void* host, std::size_t bytes) const {
  if (bytes) KAFEL_CUDA_CHECK(cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost));
}
void DeviceBuffer::upload_async(const void* host, std::size_t bytes, cudaStream_t s) {
  if (bytes) KAFEL_CUDA_CHECK(cudaMemcpyAsync(ptr_, host, bytes, cudaMemcpyHostToDevice, s));
}
void DeviceBuffer::download_async(void* host, std::size_t bytes, cudaStream_t s) const {
  if (bytes) KAFEL_CUDA_CHECK(cudaMemcpyAsync(host, ptr_, bytes, cudaMemcpyDeviceToHost, s));
}
void DeviceBuffer::fill_bytes(int value) {
  if (!bytes_) return;
  KAFEL_CUDA_CHECK(cudaMemset(ptr_, value, bytes_));
  KAFEL_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

// --- PinnedBuffer ----------------------------------------------------------------------------

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  if (cudaMallocHost(&ptr_, bytes) != cudaSuccess) {
    cudaGetLastError();
    ptr_ = nullptr;
    throw OutOfMemory("cudaMallocHost: cannot pin " + std::to_string(bytes) + " bytes (" +
                      mib(bytes) + ") of host memory");
  }
}
PinnedBuffer::~PinnedBuffer() {
  release();
}
PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}
void PinnedBuffer::release() noexcept {
  if (ptr_) cudaFreeHost(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
}

// --- Stream and EventTimer -------------------------------------------------------------------

Stream::Stream() {
  KAFEL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamDefault));
}
Stream::~Stream() {
  if (stream_) cudaStreamDestroy(stream_);
}
void Stream::synchronize() const {
  KAFEL_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

EventTimer::EventTimer() {
  KAFEL_CUDA_CHECK(cudaEventCreate(&start_));
  KAFEL_CUDA_CHECK(cudaEventCreate(&stop_));
}
EventTimer::~EventTimer() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
}
void EventTimer::start(cudaStream_t s) {
  KAFEL_CUDA_CHECK(cudaEventRecord(start_, s));
}
void EventTimer::stop(cudaStream_t s) {
  KAFEL_CUDA_CHECK(cudaEventRecord(stop_, s));
}
double EventTimer::ms() const {
  KAFEL_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  KAFEL_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

// --- DeviceProps -----------------------------------------------------------------------------

const DeviceProps& device_props(int ordinal) {
  static std::mutex mu;
  static std::map<int, DeviceProps> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(ordinal);
  if (it != cache.end()) return it->second;
  cudaDeviceProp p{};
  KAFEL_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
  DeviceProps d;
  d.ordinal = ordinal;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.shared_per_block_optin = p.sharedMemPerBlockOptin;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.global_bytes = p.totalGlobalMem;
  return cache.emplace(ordinal, d).first->second;
}

}  // namespace kafel::cuda
