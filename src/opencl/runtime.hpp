// The OpenCL runtime every OpenCL part of kafel uses: devices, cached contexts and queues,
// RAII buffers/programs/kernels/events, programs built with -D defines and an on-disk binary cache.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/error.hpp"

// Usage in a nutshell (covariance and GEMM plans follow this pattern):
//
//   auto& ctx = ocl::Context::get(device);                 // cached per device, never freed
//   ocl::Program prog = ocl::build(ctx, {"common.cl", "tiled.cl"}, {{"TS", 16}});
//   ocl::Kernel k = prog.kernel("gemm_tiled");
//   ocl::Buffer a(ctx, bytes);  a.write(host_ptr, bytes);
//   k.args(m, n, k_, a, ...);                                // cl_mem, int, float, ... by value
//   ocl::Event e = ocl::launch(ctx, k, {gx, gy}, {lx, ly});  // global rounded up to local
//   double ms = e.wait_ms();                                 // profiling-event time
//
// Every failing call throws DeviceError("what: CL_ERROR_NAME (code)"); a failed build throws
// BuildError whose log() is the compiler's build log.
namespace kafel::ocl {

// "CL_OUT_OF_RESOURCES" for -5, "CL_UNKNOWN_ERROR(-1234)" for codes not in the table.
std::string error_name(cl_int err);
// Throws DeviceError("<what>: <CL error name> (<code>)") unless err == CL_SUCCESS;
// CL_MEM_OBJECT_ALLOCATION_FAILURE / CL_OUT_OF_RESOURCES on allocation become OutOfMemory.
void check(cl_int err, std::string_view what);

// Every OpenCL device of every platform, as kafel Devices with id "opencl:P:D" and their
// capabilities (Cap::fp64, fp16, images from the extensions and CL_DEVICE_IMAGE_SUPPORT).
// Returns an empty list (never throws) when there is no ICD or no platform.
std::vector<Device> discover();

// The device's native float vector width (CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, kept in its
// details under kNativeFloatWidth by discover()): 8 for PoCL on AVX2, 16 on AVX-512; 0 unknown.
inline constexpr const char* kNativeFloatWidth = "native float width";
int native_float_width(const Device& device);

// A device's context and its in-order, profiling-enabled queue, plus the facts kernels need.
class Context {
 public:
  // The cached context for `device` (backend "opencl"); created on first use, thread-safe.
  static Context& get(const Device& device);
  // The same by platform and device index.
  static Context& get(int platform, int index);

  cl_context context() const { return context_; }
  cl_device_id device() const { return device_; }
  const cl_device_id& device_ref() const { return device_; }  // for calls taking a list
  cl_command_queue queue() const { return queue_; }

  const std::string& name() const { return name_; }
  const std::string& driver() const { return driver_; }  // platform + driver version
  bool has_extension(std::string_view ext) const;
  bool fp64() const { return has_extension("cl_khr_fp64"); }
  bool fp16() const { return has_extension("cl_khr_fp16"); }
  bool image_support() const { return image_support_; }
  std::size_t image2d_max_width() const { return image2d_max_w_; }
  std::size_t image2d_max_height() const { return image2d_max_h_; }
  std::size_t max_work_group_size() const { return max_wg_; }
  std::uint64_t local_memory() const { return local_mem_; }
  std::uint64_t max_alloc() const { return max_alloc_; }
  bool is_gpu() const { return is_gpu_; }
  // Waits for everything queued so far.
  void finish() const;

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

 private:
  Context(int platform, int index);
  cl_context context_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::string name_, driver_, extensions_;
  bool image_support_ = false, is_gpu_ = false;
  std::size_t image2d_max_w_ = 0, image2d_max_h_ = 0, max_wg_ = 0;
  std::uint64_t local_mem_ = 0, max_alloc_ = 0;
};

// Owns one cl_mem (a buffer or an image); movable, released on every path.
class Buffer {
 public:
  Buffer() = default;
  // A device buffer of `bytes` (0 is allowed: no allocation, handle() is null).
  Buffer(const Context& ctx, std::size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);
  // Takes ownership of an existing cl_mem (images).
  explicit Buffer(cl_mem mem, std::size_t bytes = 0) : mem_(mem), bytes_(bytes) {}
  ~Buffer();
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer t(std::move(o));
    swap(t);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  cl_mem handle() const { return mem_; }
  std::size_t bytes() const { return bytes_; }
  // Blocking host <-> device copies of `bytes` at byte `offset`.
  void write(const Context& ctx, const void* host, std::size_t bytes, std::size_t offset = 0);
  void read(const Context& ctx, void* host, std::size_t bytes, std::size_t offset = 0) const;
  // Fills the whole buffer with zero bytes (blocking).
  void zero(const Context& ctx);

 private:
  void swap(Buffer& o) noexcept {
    std::swap(mem_, o.mem_);
    std::swap(bytes_, o.bytes_);
  }
  cl_mem mem_ = nullptr;
  std::size_t bytes_ = 0;
};

// A 2D image of RGBA texels, `width` x `height`, with `channel_type` (CL_FLOAT, CL_HALF_FLOAT,
// CL_SIGNED_INT32, CL_UNSIGNED_INT32). Throws Unsupported when the device has no images or
// the size exceeds its limits (the message names the limit).
Buffer make_image2d(const Context& ctx, std::size_t width, std::size_t height,
                    cl_channel_type channel_type);

// Owns a cl_event; wait_ms() waits and returns the profiled execution time.
class Event {
 public:
  Event() = default;
  explicit Event(cl_event e) : ev_(e) {}
  ~Event();
  Event(Event&& o) noexcept : ev_(std::exchange(o.ev_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    std::swap(ev_, o.ev_);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cl_event handle() const { return ev_; }
  void wait() const;
  // Profiling timestamps in nanoseconds (waits first).
  std::uint64_t start_ns() const;
  std::uint64_t end_ns() const;
  double wait_ms() const { return double(end_ns() - start_ns()) * 1e-6; }

 private:
  cl_event ev_ = nullptr;
};

// Milliseconds from the first event's start to the last one's end (waits for all).
double span_ms(const std::vector<Event>& events);

class Kernel {
 public:
  Kernel() = default;
  explicit Kernel(cl_kernel k) : k_(k) {}
  ~Kernel();
  Kernel(Kernel&& o) noexcept : k_(std::exchange(o.k_, nullptr)) {}
  Kernel& operator=(Kernel&& o) noexcept {
    std::swap(k_, o.k_);
    return *this;
  }
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  cl_kernel handle() const { return k_; }
  // Sets argument `index`: a Buffer, or any trivially copyable value passed by value.
  void arg(cl_uint index, const Buffer& b);
  template <class T>
  void arg(cl_uint index, const T& value) {
    arg_bytes(index, sizeof(T), &value);
  }
  // clSetKernelArg, kept out of line so users need not link OpenCL themselves.
  void arg_bytes(cl_uint index, std::size_t size, const void* value);
  // Sets all arguments in order.
  template <class... Ts>
  void args(const Ts&... values) {
    cl_uint i = 0;
    (arg(i++, values), ...);
  }

 private:
  cl_kernel k_ = nullptr;
};

class Program {
 public:
  Program() = default;
  explicit Program(cl_program p) : p_(p) {}
  ~Program();
  Program(Program&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Program& operator=(Program&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  cl_program handle() const { return p_; }
  // Throws DeviceError naming the kernel when the program has none of that name.
  Kernel kernel(const char* name) const;

 private:
  cl_program p_ = nullptr;
};

// The text of an embedded kernel file (src/opencl/kernels/<name>); throws InvalidArgument.
std::string_view kernel_source(std::string_view file);
// Names of every embedded kernel file.
std::vector<std::string> kernel_files();

// Integer -D defines, e.g. {{"TS", 16}} -> "-DTS=16".
using Defines = std::vector<std::pair<std::string, std::int64_t>>;

// Builds the concatenation of the embedded `files` (in order) with `defines` and the extra
// `options`. Uses the on-disk binary cache (see cache_dir; every file checked against its size
// and checksum header before the driver sees it) and an in-process cache per context, so the
// same program is compiled once per machine. Throws BuildError carrying the build log.
Program build(const Context& ctx, const std::vector<std::string>& files, const Defines& defines,
              const std::string& options = "");
// The same for literal source text (tests, tools); `label` names it in error messages.
Program build_source(const Context& ctx, const std::string& source, const std::string& options,
                     const std::string& label = "program");

// $KAFEL_CACHE_DIR, else $XDG_CACHE_HOME/kafel, else ~/.cache/kafel ("" disables the cache).
std::string cache_dir();

// Counters of build(): compiled from source, loaded from the on-disk cache, found in memory,
// and cache files refused (header, size or checksum wrong, or the driver rejected the binary).
struct CacheStats {
  int compiled = 0;
  int disk_hits = 0;
  int memory_hits = 0;
  int rejected = 0;
};
CacheStats cache_stats();
// Forgets the in-process program cache (tests use it to observe the disk cache).
void clear_memory_cache();

// Enqueues an ND-range; `global` is rounded up to multiples of `local` (local may be empty:
// the driver chooses). Returns the kernel's event.
Event launch(const Context& ctx, const Kernel& k, std::vector<std::size_t> global,
             const std::vector<std::size_t>& local);

// The smallest multiple of `m` that is >= x (m > 0).
inline std::int64_t round_up(std::int64_t x, std::int64_t m) {
  return (x + m - 1) / m * m;
}

}  // namespace kafel::ocl
