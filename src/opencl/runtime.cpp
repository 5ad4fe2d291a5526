// The OpenCL runtime: device discovery (and the backend's registration), cached contexts and
// queues, RAII handles, kernel launches. Program builds and their caches: program.cpp.
#include "opencl/runtime.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "core/registry.hpp"
#include "cpu/peak.hpp"

namespace kafel::ocl {
namespace {

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  std::size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  clGetPlatformInfo(p, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string device_string(cl_device_id d, cl_device_info what) {
  std::size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  clGetDeviceInfo(d, what, n, s.data(), nullptr);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <class T>
T device_value(cl_device_id d, cl_device_info what) {
  T v{};
  clGetDeviceInfo(d, what, sizeof(T), &v, nullptr);
  return v;
}

std::vector<cl_platform_id> platforms() {
  cl_uint n = 0;
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::vector<cl_platform_id> ps(n);
  if (clGetPlatformIDs(n, ps.data(), nullptr) != CL_SUCCESS) return {};
  return ps;
}

std::vector<cl_device_id> devices_of(cl_platform_id p) {
  cl_uint n = 0;
  if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::vector<cl_device_id> ds(n);
  if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ds.data(), nullptr) != CL_SUCCESS) return {};
  return ds;
}

// True when the space-separated `list` holds `word` (an extension name) exactly.
bool has_word(std::string_view list, std::string_view word) {
  std::size_t pos = 0;
  while (pos < list.size()) {
    const std::size_t end = std::min(list.find(' ', pos), list.size());
    if (list.substr(pos, end - pos) == word) return true;
    pos = end + 1;
  }
  return false;
}

// FP32 lanes per compute unit, for the peak estimate (vendor data; 0 when unknown).
double lanes_per_unit(cl_device_id d, const std::string& vendor, bool gpu) {
  std::string v = vendor;
  std::transform(v.begin(), v.end(), v.begin(), ::tolower);
  if (!gpu) {
    // A CPU core: one native-width FMA per cycle (Zen 4 AVX-512 is 2 x 256-bit pipes).
    auto w = device_value<cl_uint>(d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT);
    return double(std::max<cl_uint>(w, 1));
  }
  if (v.find("nvidia") != std::string::npos) return 128;  // Ampere..Hopper SM
  if (v.find("advanced micro") != std::string::npos || v.find("amd") != std::string::npos)
    return 128;                                         // RDNA CU (dual-issue) / CDNA
  if (v.find("intel") != std::string::npos) return 16;  // Xe EU: 8 lanes x dual issue
  return 64;
}

// A CPU device (PoCL) runs on this machine's cores: its peak is the host's measured one, per
// core times the device's compute units (the nominal estimate above assumes one native-width
// FMA per cycle, which on a Zen 5 printed 95 % of "peak" for 27 % of the FMA loop's rate).
void use_host_peak(Device& dev) {
  cpu::PeakMeasurement m;
  try {
    m = cpu::machine_peak();
  } catch (const Error& e) {
    dev.details.push_back({"peak", std::string("nominal estimate (host peak: ") + e.what() + ")"});
    return;
  }
  if (m.f32 <= 0 || m.f64 <= 0 || m.threads <= 0) {
    dev.details.push_back({"peak", "nominal estimate (host peak: " + m.source + ")"});
    return;
  }
  const double share = std::min(1.0, double(dev.compute_units) / double(m.threads));
  dev.peak_gflops_f32 = m.f32 * share;
  if (dev.peak_gflops_f64 > 0) dev.peak_gflops_f64 = m.f64 * share;
  if (m.read_gbs > 0) dev.bandwidth_gbs = m.read_gbs;
  dev.details.push_back({"peak", "the host CPU's measured peak (" + m.source + ")"});
}

cl_device_id device_id(int platform, int index) {
  auto ps = platforms();
  if (platform < 0 || platform >= int(ps.size()))
    throw InvalidArgument("opencl:" + std::to_string(platform) + ":" + std::to_string(index) +
                          ": no such OpenCL platform (" + std::to_string(ps.size()) + " present)");
  auto ds = devices_of(ps[platform]);
  if (index < 0 || index >= int(ds.size()))
    throw InvalidArgument("opencl:" + std::to_string(platform) + ":" + std::to_string(index) +
                          ": no such device on that platform (" + std::to_string(ds.size()) +
                          " present)");
  return ds[index];
}

std::string driver_of(cl_platform_id p, cl_device_id d) {
  return platform_string(p, CL_PLATFORM_NAME) + " " + device_string(d, CL_DRIVER_VERSION);
}

Device describe(cl_platform_id p, cl_device_id d, int pi, int di) {
  Device dev;
  dev.id = "opencl:" + std::to_string(pi) + ":" + std::to_string(di);
  dev.backend = "opencl";
  dev.name = device_string(d, CL_DEVICE_NAME);
  dev.vendor = device_string(d, CL_DEVICE_VENDOR);
  dev.driver = driver_of(p, d);
  dev.platform = pi;
  dev.index = di;
  dev.compute_units = int(device_value<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS));
  dev.clock_mhz = device_value<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
  dev.global_memory = device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
  dev.local_memory = device_value<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE);
  dev.cache_bytes = device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
  auto type = device_value<cl_device_type>(d, CL_DEVICE_TYPE);
  dev.is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  double lanes = lanes_per_unit(d, dev.vendor, dev.is_gpu);
  dev.peak_gflops_f32 = dev.compute_units * lanes * 2.0 * dev.clock_mhz * 1e-3;
  const std::string ext = device_string(d, CL_DEVICE_EXTENSIONS);
  const bool images = device_value<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT) != 0;
  if (has_word(ext, "cl_khr_fp64")) {
    dev.caps |= Cap::fp64;
    dev.peak_gflops_f64 = dev.peak_gflops_f32 / 2.0;  // an estimate; consumer GPUs do less
  }
  if ((type & CL_DEVICE_TYPE_CPU) != 0) use_host_peak(dev);
  if (has_word(ext, "cl_khr_fp16")) dev.caps |= Cap::fp16;
  if (images) dev.caps |= Cap::images;
  dev.details.push_back({kNativeFloatWidth, std::to_string(device_value<cl_uint>(
                                                d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT))});
  dev.details.push_back({"platform", platform_string(p, CL_PLATFORM_NAME)});
  dev.details.push_back({"version", device_string(d, CL_DEVICE_VERSION)});
  dev.details.push_back({"max work-group size", std::to_string(device_value<std::size_t>(
                                                    d, CL_DEVICE_MAX_WORK_GROUP_SIZE))});
  dev.details.push_back({"image support", images ? "yes" : "no"});
  dev.details.push_back({"extensions", ext});
  return dev;
}

// Contexts live for the whole process on purpose: releasing them from static destructors
// races with the ICD loader's own teardown on some drivers.
std::mutex& context_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::pair<int, int>, Context*>& context_map() {
  static auto* m = new std::map<std::pair<int, int>, Context*>;
  return *m;
}

}  // namespace

std::string error_name(cl_int err) {
  switch (err) {
#define KAFEL_CL_ERR(x) \
  case x:               \
    return #x;
    KAFEL_CL_ERR(CL_SUCCESS)
    KAFEL_CL_ERR(CL_DEVICE_NOT_FOUND)
    KAFEL_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    KAFEL_CL_ERR(CL_COMPILER_NOT_AVAILABLE)
    KAFEL_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    KAFEL_CL_ERR(CL_OUT_OF_RESOURCES)
    KAFEL_CL_ERR(CL_OUT_OF_HOST_MEMORY)
    KAFEL_CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE)
    KAFEL_CL_ERR(CL_MEM_COPY_OVERLAP)
    KAFEL_CL_ERR(CL_IMAGE_FORMAT_MISMATCH)
    KAFEL_CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    KAFEL_CL_ERR(CL_BUILD_PROGRAM_FAILURE)
    KAFEL_CL_ERR(CL_MAP_FAILURE)
    KAFEL_CL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    KAFEL_CL_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    KAFEL_CL_ERR(CL_COMPILE_PROGRAM_FAILURE)
    KAFEL_CL_ERR(CL_LINKER_NOT_AVAILABLE)
    KAFEL_CL_ERR(CL_LINK_PROGRAM_FAILURE)
    KAFEL_CL_ERR(CL_DEVICE_PARTITION_FAILED)
    KAFEL_CL_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    KAFEL_CL_ERR(CL_INVALID_VALUE)
    KAFEL_CL_ERR(CL_INVALID_DEVICE_TYPE)
    KAFEL_CL_ERR(CL_INVALID_PLATFORM)
    KAFEL_CL_ERR(CL_INVALID_DEVICE)
    KAFEL_CL_ERR(CL_INVALID_CONTEXT)
    KAFEL_CL_ERR(CL_INVALID_QUEUE_PROPERTIES)
    KAFEL_CL_ERR(CL_INVALID_COMMAND_QUEUE)
    KAFEL_CL_ERR(CL_INVALID_HOST_PTR)
    KAFEL_CL_ERR(CL_INVALID_MEM_OBJECT)
    KAFEL_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    KAFEL_CL_ERR(CL_INVALID_IMAGE_SIZE)
    KAFEL_CL_ERR(CL_INVALID_SAMPLER)
    KAFEL_CL_ERR(CL_INVALID_BINARY)
    KAFEL_CL_ERR(CL_INVALID_BUILD_OPTIONS)
    KAFEL_CL_ERR(CL_INVALID_PROGRAM)
    KAFEL_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    KAFEL_CL_ERR(CL_INVALID_KERNEL_NAME)
    KAFEL_CL_ERR(CL_INVALID_KERNEL_DEFINITION)
    KAFEL_CL_ERR(CL_INVALID_KERNEL)
    KAFEL_CL_ERR(CL_INVALID_ARG_INDEX)
    KAFEL_CL_ERR(CL_INVALID_ARG_VALUE)
    KAFEL_CL_ERR(CL_INVALID_ARG_SIZE)
    KAFEL_CL_ERR(CL_INVALID_KERNEL_ARGS)
    KAFEL_CL_ERR(CL_INVALID_WORK_DIMENSION)
    KAFEL_CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    KAFEL_CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
    KAFEL_CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    KAFEL_CL_ERR(CL_INVALID_EVENT_WAIT_LIST)
    KAFEL_CL_ERR(CL_INVALID_EVENT)
    KAFEL_CL_ERR(CL_INVALID_OPERATION)
    KAFEL_CL_ERR(CL_INVALID_GL_OBJECT)
    KAFEL_CL_ERR(CL_INVALID_BUFFER_SIZE)
    KAFEL_CL_ERR(CL_INVALID_MIP_LEVEL)
    KAFEL_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
    KAFEL_CL_ERR(CL_INVALID_PROPERTY)
    KAFEL_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR)
    KAFEL_CL_ERR(CL_INVALID_COMPILER_OPTIONS)
    KAFEL_CL_ERR(CL_INVALID_LINKER_OPTIONS)
    KAFEL_CL_ERR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef KAFEL_CL_ERR
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "CL_UNKNOWN_ERROR(" + std::to_string(err) + ")";
  }
}

void check(cl_int err, std::string_view what) {
  if (err == CL_SUCCESS) return;
  std::string msg = std::string(what) + ": " + error_name(err) + " (" + std::to_string(err) + ")";
  if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY)
    throw OutOfMemory(msg);
  throw DeviceError(msg);
}

int native_float_width(const Device& device) {
  for (const auto& [key, value] : device.details)
    if (key == kNativeFloatWidth) return std::atoi(value.c_str());
  return 0;
}

std::vector<Device> discover() {
  std::vector<Device> out;
  auto ps = platforms();
  for (int pi = 0; pi < int(ps.size()); ++pi) {
    auto ds = devices_of(ps[pi]);
    for (int di = 0; di < int(ds.size()); ++di) out.push_back(describe(ps[pi], ds[di], pi, di));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Context

Context::Context(int platform, int index) {
  device_ = device_id(platform, index);
  cl_platform_id p = platforms()[platform];
  name_ = device_string(device_, CL_DEVICE_NAME);
  driver_ = driver_of(p, device_);
  extensions_ = device_string(device_, CL_DEVICE_EXTENSIONS);
  image_support_ = device_value<cl_bool>(device_, CL_DEVICE_IMAGE_SUPPORT) != 0;
  image2d_max_w_ = device_value<std::size_t>(device_, CL_DEVICE_IMAGE2D_MAX_WIDTH);
  image2d_max_h_ = device_value<std::size_t>(device_, CL_DEVICE_IMAGE2D_MAX_HEIGHT);
  max_wg_ = device_value<std::size_t>(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  local_mem_ = device_value<cl_ulong>(device_, CL_DEVICE_LOCAL_MEM_SIZE);
  max_alloc_ = device_value<cl_ulong>(device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  is_gpu_ = (device_value<cl_device_type>(device_, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) != 0;
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, cl_context_properties(p), 0};
  context_ = clCreateContext(props, 1, &device_, nullptr, nullptr, &err);
  check(err, "clCreateContext(" + name_ + ")");
  queue_ = clCreateCommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) {
    clReleaseContext(context_);
    check(err, "clCreateCommandQueue(" + name_ + ")");
  }
}

Context& Context::get(int platform, int index) {
  std::lock_guard lock(context_mutex());
  auto& m = context_map();
  auto it = m.find({platform, index});
  if (it != m.end()) return *it->second;
  auto* ctx = new Context(platform, index);
  m[{platform, index}] = ctx;
  return *ctx;
}

Context& Context::get(const Device& device) {
  if (device.backend != "opencl")
    throw InvalidArgument("device " + device.id + " is not an OpenCL device");
  return get(device.platform, device.index);
}

bool Context::has_extension(std::string_view ext) const {
  return has_word(extensions_, ext);
}

void Context::finish() const {
  check(clFinish(queue_), "clFinish");
}

// ---------------------------------------------------------------------------------------------
// Buffers, images, events, kernels

Buffer::Buffer(const Context& ctx, std::size_t bytes, cl_mem_flags flags) : bytes_(bytes) {
  if (bytes == 0) return;
  if (bytes > ctx.max_alloc())
    throw OutOfMemory("OpenCL buffer of " + std::to_string(bytes) + " bytes exceeds " + ctx.name() +
                      "'s largest allocation (" + std::to_string(ctx.max_alloc()) + " bytes)");
  cl_int err = CL_SUCCESS;
  mem_ = clCreateBuffer(ctx.context(), flags, bytes, nullptr, &err);
  check(err, "clCreateBuffer(" + std::to_string(bytes) + " bytes)");
}

Buffer::~Buffer() {
  if (mem_) clReleaseMemObject(mem_);
}

void Buffer::write(const Context& ctx, const void* host, std::size_t bytes, std::size_t offset) {
  if (bytes == 0) return;
  check(clEnqueueWriteBuffer(ctx.queue(), mem_, CL_TRUE, offset, bytes, host, 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
}

void Buffer::read(const Context& ctx, void* host, std::size_t bytes, std::size_t offset) const {
  if (bytes == 0) return;
  check(clEnqueueReadBuffer(ctx.queue(), mem_, CL_TRUE, offset, bytes, host, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
}

void Buffer::zero(const Context& ctx) {
  if (bytes_ == 0) return;
  cl_uchar z = 0;
  check(clEnqueueFillBuffer(ctx.queue(), mem_, &z, 1, 0, bytes_, 0, nullptr, nullptr),
        "clEnqueueFillBuffer");
  ctx.finish();
}

Buffer make_image2d(const Context& ctx, std::size_t width, std::size_t height,
                    cl_channel_type channel_type) {
  if (!ctx.image_support())
    throw Unsupported(ctx.name() + " has no image support (CL_DEVICE_IMAGE_SUPPORT is false)");
  if (width > ctx.image2d_max_width() || height > ctx.image2d_max_height())
    throw Unsupported("image2d of " + std::to_string(width) + " x " + std::to_string(height) +
                      " texels exceeds " + ctx.name() + "'s limit of " +
                      std::to_string(ctx.image2d_max_width()) + " x " +
                      std::to_string(ctx.image2d_max_height()));
  cl_image_format fmt{CL_RGBA, channel_type};
  cl_int err = CL_SUCCESS;
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = std::max<std::size_t>(width, 1);
  desc.image_height = std::max<std::size_t>(height, 1);
  cl_mem m = clCreateImage(ctx.context(), CL_MEM_READ_WRITE, &fmt, &desc, nullptr, &err);
  if (err == CL_IMAGE_FORMAT_NOT_SUPPORTED || err == CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    throw Unsupported(ctx.name() +
                      " does not support this RGBA image channel type: " + error_name(err));
  check(err, "clCreateImage(" + std::to_string(width) + "x" + std::to_string(height) + ")");
  return Buffer(m, width * height);
}

Event::~Event() {
  if (ev_) clReleaseEvent(ev_);
}

void Event::wait() const {
  check(clWaitForEvents(1, &ev_), "clWaitForEvents");
}

std::uint64_t Event::start_ns() const {
  wait();
  cl_ulong t = 0;
  check(clGetEventProfilingInfo(ev_, CL_PROFILING_COMMAND_START, sizeof t, &t, nullptr),
        "clGetEventProfilingInfo(START)");
  return t;
}

std::uint64_t Event::end_ns() const {
  wait();
  cl_ulong t = 0;
  check(clGetEventProfilingInfo(ev_, CL_PROFILING_COMMAND_END, sizeof t, &t, nullptr),
        "clGetEventProfilingInfo(END)");
  return t;
}

double span_ms(const std::vector<Event>& events) {
  if (events.empty()) return 0;
  std::uint64_t first = events.front().start_ns(), last = events.back().end_ns();
  for (const auto& e : events) {
    first = std::min(first, e.start_ns());
    last = std::max(last, e.end_ns());
  }
  return double(last - first) * 1e-6;
}

Kernel::~Kernel() {
  if (k_) clReleaseKernel(k_);
}

void Kernel::arg(cl_uint index, const Buffer& b) {
  cl_mem m = b.handle();
  check(clSetKernelArg(k_, index, sizeof(cl_mem), &m),
        "clSetKernelArg(" + std::to_string(index) + ")");
}

void Kernel::arg_bytes(cl_uint index, std::size_t size, const void* value) {
  check(clSetKernelArg(k_, index, size, value), "clSetKernelArg(" + std::to_string(index) + ")");
}

Program::~Program() {
  if (p_) clReleaseProgram(p_);
}

Kernel Program::kernel(const char* name) const {
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(p_, name, &err);
  check(err, std::string("clCreateKernel(") + name + ")");
  return Kernel(k);
}

Event launch(const Context& ctx, const Kernel& k, std::vector<std::size_t> global,
             const std::vector<std::size_t>& local) {
  if (!local.empty()) {
    if (local.size() != global.size())
      throw InvalidArgument("launch: global and local ranges differ in dimensions");
    for (std::size_t i = 0; i < global.size(); ++i)
      global[i] = std::size_t(
          round_up(std::int64_t(std::max<std::size_t>(global[i], 1)), std::int64_t(local[i])));
  }
  cl_event e = nullptr;
  cl_int err =
      clEnqueueNDRangeKernel(ctx.queue(), k.handle(), cl_uint(global.size()), nullptr,
                             global.data(), local.empty() ? nullptr : local.data(), 0, nullptr, &e);
  if (err != CL_SUCCESS) {
    std::string shape;
    for (std::size_t i = 0; i < global.size(); ++i)
      shape += (i ? "x" : "") + std::to_string(global[i]) + "/" +
               (local.empty() ? std::string("auto") : std::to_string(local[i]));
    check(err, "clEnqueueNDRangeKernel(" + shape + ")");
  }
  return Event(e);
}

namespace {
// The backend: its devices are what discovery finds (none without an ICD or platform).
const Register registered{Backend{"opencl", 1, discover, nullptr}};
}  // namespace

}  // namespace kafel::ocl
