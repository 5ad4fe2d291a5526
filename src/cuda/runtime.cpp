// Implementation of the CUDA runtime layer (see runtime.hpp): error translation, buffers,
// streams, timers and cached device properties.
#include "cuda/runtime.hpp"

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
