// The CUDA runtime layer every CUDA file of kafel uses: checked calls, RAII device/pinned
// buffers, streams, event timers, device properties. No managed memory anywhere.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/error.hpp"

namespace kafel::cuda {

// Throws kafel::DeviceError "CUDA error at <file>:<line>: <call>: <cudaGetErrorString>" unless
// err == cudaSuccess. Memory errors throw kafel::OutOfMemory instead.
void check(cudaError_t err, const char* call, const char* file, int line);
// After a kernel launch: reports launch-configuration errors (cudaGetLastError) for `kernel`.
void check_launch(const char* kernel, const char* file, int line);

}  // namespace kafel::cuda

// KAFEL_CUDA_CHECK(cudaMemcpy(...)); KAFEL_CUDA_CHECK_LAUNCH("gemm_smem");
#define KAFEL_CUDA_CHECK(call) ::kafel::cuda::check((call), #call, __FILE__, __LINE__)
#define KAFEL_CUDA_CHECK_LAUNCH(name) ::kafel::cuda::check_launch((name), __FILE__, __LINE__)

namespace kafel::cuda {

// Number of CUDA devices; 0 (never an exception) when there is no driver or no device.
int device_count() noexcept;
// The CUDA ordinal of a kafel device with backend "cuda"; throws InvalidArgument otherwise.
int ordinal_of(const Device& device);

// Makes `ordinal` current for the scope and restores the previous device afterwards.
class DeviceGuard {
 public:
  explicit DeviceGuard(int ordinal);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Device memory from cudaMalloc (256-byte aligned). The free memory of the current device is
// checked first: a request that cannot fit throws OutOfMemory naming the bytes and `what`.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes, const char* what = "buffer");
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }
  bool empty() const { return ptr_ == nullptr; }

  // Copies of the first `bytes` bytes from / to host memory that have completed on return
  // (cudaMemcpy from pageable memory may return before its DMA lands; these synchronise).
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;
  // Asynchronous versions on `stream` (host memory should be pinned to overlap).
  void upload_async(const void* host, std::size_t bytes, cudaStream_t stream);
  void download_async(void* host, std::size_t bytes, cudaStream_t stream) const;
  // Sets every byte to `value` (0xFF poisons floats with NaN).
  void fill_bytes(int value);

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Page-locked host memory (cudaMallocHost): needed for truly asynchronous copies.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// A stream of the current device. It is a blocking stream (cudaStreamDefault): work on it
// waits for earlier work on the legacy default stream (plain cudaMemcpy/cudaMemset), so
// mixing synchronous copies with kernels on a Stream is safe.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  operator cudaStream_t() const { return stream_; }
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
};

// Times work on a stream with a pair of CUDA events: start(s); ...launches...; stop(s); ms().
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(cudaStream_t stream);
  void stop(cudaStream_t stream);
  // Waits for the stop event and returns the elapsed milliseconds.
  double ms() const;

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Selected properties of the current device, read once per ordinal.
struct DeviceProps {
  int ordinal = 0;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::size_t shared_per_block_optin = 0;  // bytes a block may get after cudaFuncSetAttribute
  std::size_t l2_bytes = 0;
  std::size_t global_bytes = 0;
};
const DeviceProps& device_props(int ordinal);

}  // namespace kafel::cuda
