// Streaming covariance: blocks from a source processed back to back through a CovStream
// (several in flight on GPUs), with per-block latency, throughput and missed deadlines.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/cov_backend.hpp"

namespace kafel {

struct CovStreamOptions {
  int depth = 3;            // blocks in flight (buffers)
  double rate = 0;          // arrivals per second; 0 = as fast as possible
  double deadline_ms = 50;  // a block misses when its latency exceeds this
};

// Where blocks come from. fill(b, buf) writes block b (a tight block of the descriptor) into
// buf and returns false when there is no block b. With `static_buffers`, fill is called only
// for the first `depth` blocks and block b reuses buffer b % depth as it is (generators:
// the data sits in pinned memory like an ADC's DMA buffers, no host copy per block).
struct CovBlockSource {
  std::function<bool(std::int64_t block, float* buf)> fill;
  bool static_buffers = false;
};

// Called for every finished block, in order, while `data` still holds its samples: at once for
// file sources (inside the timed loop), after the loop for static buffers (outside it).
using CovResultHook = std::function<void(std::int64_t block, const float* data, const CovResult&)>;

struct CovStreamStats {
  std::int64_t blocks = 0;
  std::vector<double> latency_ms;  // per block: completion - arrival (rate > 0) or - submit
  double wall_ms = 0;
  double median_ms = 0, p99_ms = 0, max_ms = 0, blocks_per_s = 0;
  std::int64_t missed = 0;
};

// Rate mode (rate > 0): block b arrives at b/rate; it is submitted on arrival and the host
// waits for it, so latency includes any queueing behind a late block. Throughput mode: up to
// `depth` blocks in flight, latency from submit to the host collecting the result.
CovStreamStats run_cov_stream(CovPlan& plan, const CovDesc& desc, const CovBlockSource& source,
                              std::int64_t max_blocks, const CovStreamOptions& opt,
                              const CovResultHook& hook);

}  // namespace kafel
