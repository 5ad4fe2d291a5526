// The streaming loop behind `kafel cov`: fills buffers from a source, submits them to the
// backend's stream, collects results in order and keeps the latency statistics.
#include "core/cov_stream.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "kafel/bench.hpp"
#include "kafel/error.hpp"

namespace kafel {

namespace {
using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
}  // namespace

CovStreamStats run_cov_stream(CovPlan& plan, const CovDesc& desc, const CovBlockSource& source,
                              std::int64_t max_blocks, const CovStreamOptions& opt,
                              const CovResultHook& hook) {
  desc.validate();
  if (opt.depth < 1) throw InvalidArgument("stream depth must be >= 1");
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

  {  // warm-up (program builds, first-touch, clocks): one untimed block of zeros
    std::fill_n(stream->buffer(0), desc.channels * desc.samples, 0.0f);
    stream->submit(0);
    stream->wait(0, m);
  }
  // Static buffers (generators) are written before the clock starts, like a DMA ring that
  // the ADC fills; a source with fewer blocks than buffers stops the stream early.
  std::int64_t available = max_blocks;
  if (source.static_buffers)
    for (int k = 0; k < depth && (max_blocks < 0 || k < max_blocks); ++k)
      if (!source.fill(k, stream->buffer(k))) {
        available = k;
        break;
      }
  const auto t0 = Clock::now();
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

}  // namespace kafel
