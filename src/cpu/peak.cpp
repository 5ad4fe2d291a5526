// The peak probe: short bursts of independent multiply-add chains on one pinned thread per core
// (the best burst of each thread counts, so a shared machine's interruptions fall out), a
// parallel streaming read for the bandwidth, and the per-machine cache file beside the tuning DB.
#include "cpu/peak.hpp"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "core/tuning_db.hpp"
#include "cpu/cpu_features.hpp"
#include "cpu/peak_loops.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel::cpu {

// Portable chains for CPUs without AVX2 (the compiler may vectorise them).
namespace {

template <class T>
double scalar_chains(std::int64_t iters, double* sink) {
  T acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = T(1) + T(c) / T(1024);
  const T x = T(1) - T(1) / T(1 << 20), y = T(1) / T(1 << 20);
  for (std::int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kPeakChains; ++c) acc[c] = acc[c] * x + y;
  T s = 0;
  for (int c = 0; c < kPeakChains; ++c) s += acc[c];
  *sink = double(s);
  return double(iters) * kPeakChains * 2;
}

}  // namespace

PeakLoops peak_loops_generic() {
  return {&scalar_chains<float>, &scalar_chains<double>, nullptr, nullptr};
}

std::uint64_t read_stream_generic(const void* p, std::size_t bytes) {
  const auto* v = static_cast<const std::uint64_t*>(p);
  std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (std::size_t i = 0; i < bytes / 8; i += 4) {
    s0 ^= v[i];
    s1 ^= v[i + 1];
    s2 ^= v[i + 2];
    s3 ^= v[i + 3];
  }
  return s0 ^ s1 ^ s2 ^ s3;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void pin_to(int cpu) {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // a refusal only costs accuracy
#else
  (void)cpu;
#endif
}

// The calling thread's CPU affinity, put back when this goes out of scope: the caller runs one
// share of the probe pinned, and threads it creates later inherit its mask (pinned to one core,
// the thread pool's workers of a `kafel bench` that probed first all ran on that core).
class KeepAffinity {
 public:
#if defined(__linux__)
  KeepAffinity() {
    saved_ = pthread_getaffinity_np(pthread_self(), sizeof(mask_), &mask_) == 0;
  }
  ~KeepAffinity() {
    if (saved_) pthread_setaffinity_np(pthread_self(), sizeof(mask_), &mask_);
  }

 private:
  cpu_set_t mask_{};
  bool saved_ = false;
#endif
};

// Runs body(index) on one thread pinned to each CPU of `cpus`, all released together.
template <class Body>
void on_each_core(const std::vector<int>& cpus, Body&& body) {
  const KeepAffinity keep;
  std::atomic<int> ready{0};
  const int n = static_cast<int>(cpus.size());
  auto run = [&](int i) {
    pin_to(cpus[std::size_t(i)]);
    ready.fetch_add(1);
    while (ready.load() < n) std::this_thread::yield();
    body(i);
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i) threads.emplace_back(run, i);
  run(0);
  for (auto& t : threads) t.join();
}

// Sum over the cores of each core's best rate (ops/s) in bursts of ~0.3 ms for `window_s`:
// a burst that was interrupted (the machine is shared) is slower and never the best.
double probe_rate(PeakLoop loop, const std::vector<int>& cpus, double window_s) {
  std::vector<double> best(cpus.size(), 0.0);
  on_each_core(cpus, [&](int i) {
    double sink = 0;
    std::int64_t iters = 256;
    const Clock::time_point start = Clock::now();
    while (seconds_since(start) < window_s) {
      const Clock::time_point t0 = Clock::now();
      const double ops = loop(iters, &sink);
      const double dt = seconds_since(t0);
      if (dt > 0) best[std::size_t(i)] = std::max(best[std::size_t(i)], ops / dt);
      if (dt < 3e-4) iters *= 2;  // grow the burst until it is long enough to time well
    }
    if (sink == 12345.678) best[std::size_t(i)] += 0;  // keeps the result alive
  });
  double sum = 0;
  for (double b : best) sum += b;
  return sum;
}

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

// All cores read disjoint shares of a buffer 4x the last-level cache at once, pass after pass;
// the sum of each core's median pass rate counts (the best pass may have found part of its
// share still in the cache, an interrupted one is slower).
double probe_read_gbs(const std::vector<int>& cpus, bool avx2, double window_s,
                      Clock::time_point deadline) {
  const CacheSizes& c = cache_sizes();
  const std::size_t llc = std::size_t(std::max<std::int64_t>(c.l3, c.l2));
  // 3-4x the cache: with 2x, Zen 3's victim L3 still served some passes (35 GB/s against
  // 5-7 GB/s from DRAM measured on one KVM core). First touching the pages is the slow part
  // under a hypervisor (~0.5 GB/s, far less on a busy machine), hence the cap and the deadline.
  std::size_t bytes =
      std::clamp<std::size_t>(4 * llc, std::size_t(64) << 20, std::size_t(96) << 20);
  bytes = std::min<std::size_t>(bytes, host_memory_available() / 8) / 4096 * 4096;
  const std::size_t n = cpus.size(), share = bytes / n / 4096 * 4096;
  constexpr std::size_t kChunk = std::size_t(1) << 20;
  if (share < kChunk) return 0;
  std::unique_ptr<void, AlignedFree> mem(std::aligned_alloc(4096, share * n));
  if (!mem) return 0;
  auto* base = static_cast<char*>(mem.get());
  std::vector<double> rate(n, 0.0);
  std::vector<std::size_t> touched(n, 0);
  std::atomic<int> filled{0};
  on_each_core(cpus, [&](int i) {
    char* mine = base + std::size_t(i) * share;
    // First touch on the reading core, a chunk at a time until the deadline.
    std::size_t& done = touched[std::size_t(i)];
    for (; done + kChunk <= share && Clock::now() < deadline; done += kChunk)
      std::fill(mine + done, mine + done + kChunk, char(i + 1));
    filled.fetch_add(1);
    while (filled.load() < int(n)) std::this_thread::yield();
    // Every core reads as much as all of them touched; less than 2x the cache would be read
    // partly from the cache, so it is no bandwidth figure.
    const std::size_t len = *std::min_element(touched.begin(), touched.end());
    if (len * n < 2 * llc) return;
    std::vector<double> passes;
    std::uint64_t sink = 0;
    const Clock::time_point start = Clock::now();
    // The first pass warms the TLB and the clock and does not count.
    for (int pass = 0;
         pass < 2 || (seconds_since(start) < window_s && pass < 32 && Clock::now() < deadline);
         ++pass) {
      const Clock::time_point t0 = Clock::now();
      sink ^= avx2 ? read_stream_avx2(mine, len) : read_stream_generic(mine, len);
      const double dt = seconds_since(t0);
      if (pass > 0 && dt > 0) passes.push_back(double(len) / dt);
    }
    std::nth_element(passes.begin(), passes.begin() + passes.size() / 2, passes.end());
    rate[std::size_t(i)] = passes.empty() || sink == 42 ? 0 : passes[passes.size() / 2];
  });
  double sum = 0;
  for (double r : rate) sum += r;
  return sum / 1e9;
}

}  // namespace

namespace {

// The multiply-add rates of measure_peak: `share` of `budget_s`, split among the kinds of loop.
PeakMeasurement measure_rates(double share, double budget_s) {
  PeakMeasurement m;
  const std::vector<int>& cpus = one_cpu_per_core();
  m.threads = static_cast<int>(cpus.size());
  PeakLoops loops = peak_loops_generic();
  m.isa = "generic";
  if (isa_supported(Isa::avx2)) {
    loops = peak_loops_avx2();
    m.isa = "avx2";
  }
  if (isa_supported(Isa::avx512)) {
    const PeakLoops wide = peak_loops_avx512();
    loops.f32 = wide.f32;
    loops.f64 = wide.f64;
    if (cpu_has_avx512_bf16()) loops.bf16 = peak_loop_avx512_bf16();
    if (cpu_has_avx512_vnni()) loops.i8 = peak_loop_avx512_vnni();
    m.isa = "avx512";
  }
  const PeakLoop amx_bf16 = cpu_has_amx() ? peak_loop_amx_bf16() : nullptr;
  const PeakLoop amx_i8 = cpu_has_amx() ? peak_loop_amx_i8() : nullptr;
  const int kinds =
      2 + (loops.bf16 ? 1 : 0) + (loops.i8 ? 1 : 0) + (amx_bf16 ? 1 : 0) + (amx_i8 ? 1 : 0);
  const double window = share * budget_s / kinds;
  m.f32 = probe_rate(loops.f32, cpus, window) / 1e9;
  m.f64 = probe_rate(loops.f64, cpus, window) / 1e9;
  if (loops.bf16) m.bf16 = probe_rate(loops.bf16, cpus, window) / 1e9;
  if (loops.i8) m.i8 = probe_rate(loops.i8, cpus, window) / 1e9;
  if (amx_bf16) m.amx_bf16 = probe_rate(amx_bf16, cpus, window) / 1e9;
  if (amx_i8) m.amx_i8 = probe_rate(amx_i8, cpus, window) / 1e9;
  return m;
}

}  // namespace

PeakMeasurement measure_compute_peak(double budget_s) {
  const Clock::time_point start = Clock::now();
  PeakMeasurement m = measure_rates(1.0, budget_s);
  m.seconds = seconds_since(start);
  m.source = "measured now (multiply-add rates only)";
  return m;
}

PeakMeasurement measure_peak(double budget_s) {
  const Clock::time_point start = Clock::now();
  PeakMeasurement m = measure_rates(0.4, budget_s);
  const std::vector<int>& cpus = one_cpu_per_core();
  // The first touch of the read buffer is what a busy machine slows down most; it stops at
  // the deadline (the bandwidth is then 0, unmeasured), so the whole probe stays under ~1 s.
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(std::max(0.7, 2 * budget_s)));
  m.read_gbs = probe_read_gbs(cpus, isa_supported(Isa::avx2), 0.2 * budget_s, deadline);
  m.seconds = seconds_since(start);
  m.source = "measured now";
  return m;
}

std::string machine_key() {
  std::string model = cpuinfo_field("model name");
  if (model.empty()) model = cpu_ident().vendor;
  return model + "|" + std::to_string(physical_cores()) + " cores|" +
         std::string(to_string(cpu_isa()));
}

std::string peak_cache_path() {
  const std::filesystem::path db(default_db_path());
  return (db.has_parent_path() ? db.parent_path() / "cpu_peak.json" : "cpu_peak.json").string();
}

namespace {

using Json = nlohmann::json;
constexpr int kProbeVersion = 2;  // bump when the probe changes what it measures (2: AMX)

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Json read_cache(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Json::object();
  try {
    Json j = Json::parse(in);
    return j.is_object() ? j : Json::object();
  } catch (const Json::exception&) {
    return Json::object();  // a damaged cache is measured again and rewritten
  }
}

bool from_cache(const Json& all, PeakMeasurement& m, const std::string& path) {
  const auto it = all.find(machine_key());
  if (it == all.end() || !it->is_object() || it->value("probe", 0) != kProbeVersion) return false;
  const Json& e = *it;
  m.f32 = e.value("f32", 0.0);
  m.f64 = e.value("f64", 0.0);
  m.bf16 = e.value("bf16", 0.0);
  m.i8 = e.value("i8", 0.0);
  m.amx_bf16 = e.value("amx_bf16", 0.0);
  m.amx_i8 = e.value("amx_i8", 0.0);
  m.read_gbs = e.value("read_gbs", 0.0);
  m.threads = e.value("threads", 0);
  m.isa = e.value("isa", "");
  m.seconds = e.value("seconds", 0.0);
  m.source = "cache " + path + " (measured " + e.value("measured", std::string("?")) + ")";
  return m.f32 > 0 && m.f64 > 0;
}

// Writes this machine's entry and returns the figures it now holds.
PeakMeasurement write_cache(const std::string& path, const PeakMeasurement& m) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  Json all = read_cache(path);
  // A peak is an upper bound: a new measurement (a busy machine reads low) only raises it.
  PeakMeasurement best = m, old;
  if (from_cache(all, old, path)) {
    best.f32 = std::max(best.f32, old.f32);
    best.f64 = std::max(best.f64, old.f64);
    best.bf16 = std::max(best.bf16, old.bf16);
    best.i8 = std::max(best.i8, old.i8);
    best.amx_bf16 = std::max(best.amx_bf16, old.amx_bf16);
    best.amx_i8 = std::max(best.amx_i8, old.amx_i8);
    best.read_gbs = std::max(best.read_gbs, old.read_gbs);
  }
  all[machine_key()] = {{"probe", kProbeVersion}, {"f32", best.f32},
                        {"f64", best.f64},        {"bf16", best.bf16},
                        {"i8", best.i8},          {"amx_bf16", best.amx_bf16},
                        {"amx_i8", best.amx_i8},  {"read_gbs", best.read_gbs},
                        {"threads", m.threads},   {"isa", m.isa},
                        {"seconds", m.seconds},   {"measured", utc_now()}};
  write_file_atomic(path, all.dump(2) + "\n");
  return best;
}

PeakMeasurement load_or_measure() {
  const char* env = std::getenv("KAFEL_CPU_PEAK");
  const std::string mode = env ? env : "";
  if (mode == "off") {
    PeakMeasurement none;
    none.source = "not measured ($KAFEL_CPU_PEAK=off)";
    return none;
  }
  if (!mode.empty() && mode != "measure")
    throw InvalidArgument("KAFEL_CPU_PEAK='" + mode + "' (expected measure or off)");
  const std::string path = peak_cache_path();
  PeakMeasurement m;
  if (mode != "measure" && from_cache(read_cache(path), m, path)) return m;
  m = measure_peak();
  try {
    with_db_lock(path, [&] { m = write_cache(path, m); });
    m.source = "measured now (cached in " + path + "; a peak only grows there)";
  } catch (const Error& e) {
    m.source = std::string("measured now (not cached: ") + e.what() + ")";
  }
  return m;
}

}  // namespace

const PeakMeasurement& machine_peak() {
  static const PeakMeasurement m = load_or_measure();
  return m;
}

}  // namespace kafel::cpu
