// The streaming loop behind run_cov_stream: buffers filled from a source, submitted, collected in
// order, latency statistics; one-time costs (plan, pages, pool, builds) are start-up, timed apart.
#include "core/cov_stream.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/registry.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel {

namespace {
using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void check_options(const CovStreamOptions& opt) {
  if (opt.depth < 1 || opt.depth > kMaxCovDepth)
    throw InvalidArgument("stream depth must be between 1 and " + std::to_string(kMaxCovDepth) +
                          " (got " + std::to_string(opt.depth) + ")");
  if (!std::isfinite(opt.rate) || opt.rate < 0 || opt.rate > 1e6)
    throw InvalidArgument("stream rate must be between 0 and 1e6 blocks per second (got " +
                          format_num("%g", opt.rate) + ")");
  if (!std::isfinite(opt.deadline_ms) || opt.deadline_ms <= 0 || opt.deadline_ms > 1e9)
    throw InvalidArgument("stream deadline must be between 0 and 1e9 ms, exclusive of 0 (got " +
                          format_num("%g", opt.deadline_ms) + ")");
}

// The buffers of a stream on host (and device) memory; throws OutOfMemory before allocating.
void check_stream_memory(const Device& device, const CovDesc& desc, int depth) {
  const double bytes = double(depth) * desc.min_bytes();
  const std::string what = std::to_string(depth) + " buffers of " + desc.shape();
  check_host_memory(bytes, what);
  if (device.backend != "cpu" && device.global_memory && bytes > double(device.global_memory))
    throw OutOfMemory(what + " need " + human_bytes(bytes) + " but " + device.id + " has " +
                      human_bytes(double(device.global_memory)));
}

// One untimed pass over every buffer: pages, pinned mappings, the thread pool, program builds
// and clocks are warm before the first deadline. Static buffers keep the source's data (filled
// first), so the pass also leaves them as the timed loop will find them.
void warm_up(CovStream& stream, const CovDesc& desc, CovMoments& m) {
  for (int i = 0; i < stream.depth(); ++i) {
    std::memset(stream.buffer(i), 0, static_cast<std::size_t>(desc.min_bytes()));
    stream.submit(i);
    stream.wait(i, m);
  }
}

}  // namespace

CovStreamStats run_cov_stream(CovPlan& plan, const CovDesc& desc, const CovBlockSource& source,
                              std::int64_t max_blocks, const CovStreamOptions& opt,
                              const CovResultHook& hook) {
  const auto entry = Clock::now();
  desc.validate();
  check_options(opt);
  if (!source.fill) throw InvalidArgument("covariance stream: the block source has no fill");
  std::unique_ptr<CovStream> stream = plan.stream(opt.depth);
  if (!stream) stream = make_sync_stream(plan, desc, opt.depth);
  const int depth = stream->depth();
  const bool realtime = opt.rate > 0;

  CovStreamStats st;
  std::vector<Clock::time_point> start(depth);
  std::vector<std::int64_t> in_slot(depth, -1);
  CovMoments m;
  std::vector<std::pair<std::int64_t, CovResult>> deferred;
  auto collect = [&](int slot) {
    stream->wait(slot, m);
    const auto done = Clock::now();
    const CovResult r = finalize_cov(desc, m);
    st.latency_ms.push_back(ms_between(start[slot], done));
    // Static buffers keep their data, so their hooks (verification) run after the timed loop
    // and cannot delay other blocks; a file's buffer is refilled, so its hook runs now.
    if (hook && source.static_buffers)
      deferred.emplace_back(in_slot[slot], r);
    else if (hook)
      hook(in_slot[slot], stream->buffer(slot), r);
    in_slot[slot] = -1;
  };

  warm_up(*stream, desc, m);
  // Static buffers (generators) are written before the clock starts, like a DMA ring that
  // the ADC fills; a source with fewer blocks than buffers stops the stream early.
  std::int64_t available = max_blocks;
  if (source.static_buffers) {
    for (int k = 0; k < depth && (max_blocks < 0 || k < max_blocks); ++k)
      if (!source.fill(k, stream->buffer(k))) {
        available = k;
        break;
      }
    // The data the first blocks read is now where a steady stream finds it (caches, TLB).
    for (int k = 0; k < depth && (available < 0 || k < available); ++k) {
      stream->submit(k);
      stream->wait(k, m);
    }
  }
  const auto t0 = Clock::now();
  st.startup_ms = ms_between(entry, t0);
  const auto period =
      realtime ? std::chrono::duration<double>(1.0 / opt.rate) : std::chrono::duration<double>(0);
  std::int64_t b = 0;
  for (; available < 0 || b < available; ++b) {
    const int slot = static_cast<int>(b % depth);
    if (in_slot[slot] >= 0) collect(slot);
    if (!source.static_buffers && !source.fill(b, stream->buffer(slot))) break;
    if (realtime) {
      const auto arrival = t0 + std::chrono::duration_cast<Clock::duration>(period * double(b));
      std::this_thread::sleep_until(arrival);
      start[slot] = arrival;
    } else {
      start[slot] = Clock::now();
    }
    stream->submit(slot);
    in_slot[slot] = b;
    if (realtime) collect(slot);
  }
  for (int k = 0; k < depth; ++k) {  // drain in submission order
    const int slot = static_cast<int>((b + k) % depth);
    if (in_slot[slot] >= 0) collect(slot);
  }
  st.wall_ms = ms_between(t0, Clock::now());
  for (const auto& [block, r] : deferred)
    hook(block, stream->buffer(static_cast<int>(block % depth)), r);
  st.blocks = static_cast<std::int64_t>(st.latency_ms.size());
  st.median_ms = quantile(st.latency_ms, 0.5);
  st.p99_ms = quantile(st.latency_ms, 0.99);
  st.max_ms =
      st.latency_ms.empty() ? 0 : *std::max_element(st.latency_ms.begin(), st.latency_ms.end());
  st.blocks_per_s = st.wall_ms > 0 ? 1000.0 * double(st.blocks) / st.wall_ms : 0;
  for (double l : st.latency_ms)
    if (l > opt.deadline_ms) ++st.missed;
  return st;
}

CovStreamStats run_cov_stream(const Device& device, const CovChoice& choice, const CovDesc& desc,
                              const CovBlockSource& source, std::int64_t max_blocks,
                              const CovStreamOptions& opt, const CovResultHook& hook) {
  const auto entry = Clock::now();
  desc.validate();
  check_options(opt);
  check_stream_memory(device, desc, opt.depth);
  // The choice may come from anywhere (a caller's struct): kernel limits and parameters are
  // checked again before the plan is made.
  const CovChoice checked = choose_cov(device, desc, choice.kernel, choice.params);
  auto plan = find_cov_kernel(device, checked.kernel).make_plan(device, desc, checked.params);
  const double plan_ms = ms_between(entry, Clock::now());
  CovStreamStats st = run_cov_stream(*plan, desc, source, max_blocks, opt, hook);
  st.startup_ms += plan_ms;
  return st;
}

}  // namespace kafel
