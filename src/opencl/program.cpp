// OpenCL program builds: -D defines, build logs in BuildError, an in-process cache and an
// on-disk binary cache (one file per device + driver + source + options hash, each binary behind
// a header with its size and checksum, so a damaged file is rebuilt, never given to the driver).
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "kafel/io.hpp"
#include "opencl/runtime.hpp"

namespace kafel::ocl {
namespace {

namespace fs = std::filesystem;

std::atomic<int> g_compiled{0}, g_disk_hits{0}, g_memory_hits{0}, g_rejected{0};

std::mutex& memo_mutex() {
  static std::mutex m;
  return m;
}
// Built programs by cache key; retained handles, intentionally never released at exit.
std::map<std::string, cl_program>& memo() {
  static auto* m = new std::map<std::string, cl_program>;
  return *m;
}

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = digits[v & 15];
  return s;
}

std::string build_log(const Context& ctx, cl_program p) {
  std::size_t n = 0;
  clGetProgramBuildInfo(p, ctx.device(), CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
  std::string log(n, '\0');
  if (n) clGetProgramBuildInfo(p, ctx.device(), CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line))
    if (line.find("error") != std::string::npos) return line;
  return log.substr(0, log.find('\n'));
}

// Builds `p`; on failure releases it and throws BuildError with the log.
void build_or_throw(const Context& ctx, cl_program p, const std::string& options,
                    const std::string& label) {
  cl_int err = clBuildProgram(p, 1, &ctx.device_ref(), options.c_str(), nullptr, nullptr);
  if (err == CL_SUCCESS) return;
  std::string log = build_log(ctx, p);
  clReleaseProgram(p);
  throw BuildError("OpenCL build of " + label + " failed on " + ctx.name() + " (" +
                       error_name(err) + ", options '" + options + "'): " + first_error_line(log),
                   log);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A cache file: "kafelcl1", the binary's size and its FNV-1a checksum (little-endian 64-bit
// each), then the binary. Some drivers crash on a damaged binary (a process killed while
// writing elsewhere, a full disk, a hand-edited cache): the header catches all of these.
constexpr std::string_view kMagic = "kafelcl1";
constexpr std::size_t kHeaderBytes = kMagic.size() + 16;

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint64_t get_u64(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[std::size_t(i)]);
  return v;
}

std::string cache_entry(const std::string& binary) {
  std::string out(kMagic);
  put_u64(out, binary.size());
  put_u64(out, fnv1a(binary));
  return out + binary;
}

// The binary of a cache file, or nothing when the header does not match what follows it.
std::optional<std::string> cached_binary(const std::string& file) {
  if (file.size() <= kHeaderBytes || std::string_view(file).substr(0, kMagic.size()) != kMagic)
    return std::nullopt;
  const std::string_view rest = std::string_view(file).substr(kMagic.size());
  const std::uint64_t size = get_u64(rest), checksum = get_u64(rest.substr(8));
  std::string binary = file.substr(kHeaderBytes);
  if (size != binary.size() || checksum != fnv1a(binary)) return std::nullopt;
  return binary;
}

cl_program from_binary(const Context& ctx, const std::string& bin, const std::string& options) {
  const auto* data = reinterpret_cast<const unsigned char*>(bin.data());
  std::size_t size = bin.size();
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  cl_program p =
      clCreateProgramWithBinary(ctx.context(), 1, &ctx.device_ref(), &size, &data, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS) {
    if (p) clReleaseProgram(p);
    return nullptr;
  }
  if (clBuildProgram(p, 1, &ctx.device_ref(), options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
    clReleaseProgram(p);
    return nullptr;
  }
  return p;
}

// Best effort: a cache that cannot be written only costs a rebuild next time.
void save_binary(const Context& ctx, cl_program p, const fs::path& path) {
  std::size_t size = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS ||
      size == 0)
    return;
  std::string bin(size, '\0');
  auto* ptr = reinterpret_cast<unsigned char*>(bin.data());
  if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != CL_SUCCESS) return;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  try {
    write_file_atomic(path.string(), cache_entry(bin));  // readers never see half a file
  } catch (const Error&) {
  }
  (void)ctx;
}

cl_program compile(const Context& ctx, const std::string& source, const std::string& options,
                   const std::string& label) {
  const char* text = source.c_str();
  std::size_t len = source.size();
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(ctx.context(), 1, &text, &len, &err);
  check(err, "clCreateProgramWithSource(" + label + ")");
  build_or_throw(ctx, p, options, label);
  ++g_compiled;
  return p;
}

}  // namespace

std::string cache_dir() {
  if (const char* d = std::getenv("KAFEL_CACHE_DIR")) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kafel";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kafel";
  return {};
}

CacheStats cache_stats() {
  return {g_compiled.load(), g_disk_hits.load(), g_memory_hits.load(), g_rejected.load()};
}

void clear_memory_cache() {
  std::lock_guard lock(memo_mutex());
  for (auto& [key, p] : memo()) clReleaseProgram(p);
  memo().clear();
}

Program build_source(const Context& ctx, const std::string& source, const std::string& options,
                     const std::string& label) {
  std::string key = hex(fnv1a(source, fnv1a(options, fnv1a(ctx.driver(), fnv1a(ctx.name())))));
  key += hex(fnv1a(source + options, std::uint64_t(source.size()) * 31 + 7));
  // Programs belong to one cl_context: two identical GPUs share the disk entry, not the program.
  const std::string memo_key = key + "@" + hex(std::uint64_t(std::uintptr_t(ctx.context())));
  std::lock_guard lock(memo_mutex());
  if (auto it = memo().find(memo_key); it != memo().end()) {
    ++g_memory_hits;
    clRetainProgram(it->second);
    return Program(it->second);
  }
  cl_program p = nullptr;
  std::string dir = cache_dir();
  fs::path file = dir.empty() ? fs::path() : fs::path(dir) / "opencl" / (key + ".clbin");
  if (!dir.empty()) {
    if (const std::string entry = read_file(file); !entry.empty()) {
      const std::optional<std::string> bin = cached_binary(entry);
      if (bin) p = from_binary(ctx, *bin, options);
      if (p) {
        ++g_disk_hits;
      } else {  // damaged, stale or foreign: rebuild from source (and overwrite it)
        ++g_rejected;
        std::error_code ec;
        fs::remove(file, ec);
      }
    }
  }
  if (!p) {
    p = compile(ctx, source, options, label);
    if (!dir.empty()) save_binary(ctx, p, file);
  }
  memo()[memo_key] = p;
  clRetainProgram(p);
  return Program(p);
}

Program build(const Context& ctx, const std::vector<std::string>& files, const Defines& defines,
              const std::string& options) {
  std::string source, label;
  for (const auto& f : files) {
    source += "// ---- " + f + "\n";
    source += kernel_source(f);
    source += "\n";
    label += (label.empty() ? "" : "+") + f;
  }
  std::string opts = options;
  for (const auto& [name, value] : defines)
    opts += (opts.empty() ? "" : " ") + ("-D" + name + "=" + std::to_string(value));
  return build_source(ctx, source, opts, label);
}

}  // namespace kafel::ocl
