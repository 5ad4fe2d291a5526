// The CUDA one-pass covariance (up to 16 channels): every thread keeps pilot-shifted sums and
// all channel-pair co-moments in float registers, warps reduce in double, a tiny second kernel
// merges the blocks in double. Streams of pinned blocks overlap copies with compute.
#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/cov_backend.hpp"
#include "core/registry.hpp"
#include "cuda/cov_floor.hpp"
#include "cuda/runtime.hpp"
#include "kafel/bench.hpp"

namespace kafel::cuda {

namespace {

constexpr int kMaxChannels = 16;
constexpr int kThreads = 256;

// Samples [0, n) of a block at x (planar: channel c at x[c*stride + i]; interleaved:
// x[i*stride + c]). Block b writes its CH sums and NP co-moments (lower triangle, row by row)
// to partial[b*(CH+NP)]. The pilot (float mean of the first kPilotSamples samples, summed in
// order like the host's pilot_value) is computed when `compute_pilot`, else read from `pilot`;
// block 0 stores it there.
template <int CH, bool PLANAR>
__global__ void __launch_bounds__(kThreads)
    cov_onepass(const float* __restrict__ x, long long stride, long long n,
                double* __restrict__ partial, float* pilot, int compute_pilot) {
  constexpr int NP = CH * (CH + 1) / 2;
  constexpr int W = CH + NP;
  __shared__ float sp[CH];
  __shared__ double warp_part[kThreads / 32][W];
  const int tid = threadIdx.x;
  auto at = [&](int c, long long i) { return PLANAR ? x[c * stride + i] : x[i * stride + c]; };
  if (compute_pilot) {
    // The first samples in one round of loads, then summed in order: a thread's loop of loads
    // waited out kPilotSamples / unroll memory latencies at every block's start.
    constexpr int K = static_cast<int>(kPilotSamples);
    __shared__ float head[CH][K];
    const int k = static_cast<int>(n < K ? n : K);
    for (int e = tid; e < CH * K; e += kThreads)
      if (e % K < k) head[e / K][e % K] = at(e / K, e % K);
    __syncthreads();
    if (tid < CH) {
      float s = 0.0f;
      for (int i = 0; i < k; ++i) s += head[tid][i];
      sp[tid] = __fdiv_rn(s, static_cast<float>(k));
    }
  } else if (tid < CH) {
    sp[tid] = pilot[tid];
  }
  __syncthreads();
  float p[CH], s[CH], q[NP];
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    p[c] = sp[c];
    s[c] = 0.0f;
  }
#pragma unroll
  for (int t = 0; t < NP; ++t) q[t] = 0.0f;
  // One sample's shifted values into the sums and co-moments.
  auto add = [&](const float(&y)[CH]) {
#pragma unroll
    for (int c = 0; c < CH; ++c) s[c] += y[c];
    int t = 0;
#pragma unroll
    for (int a = 0; a < CH; ++a)
#pragma unroll
      for (int b = 0; b <= a; ++b, ++t) q[t] = fmaf(y[a], y[b], q[t]);
  };
  const long long first = static_cast<long long>(blockIdx.x) * kThreads + tid;
  const long long step = static_cast<long long>(gridDim.x) * kThreads;
  long long i = first;
  // VEC consecutive samples of a channel in one load where every channel's row is aligned to
  // it (planar): VEC times the bytes in flight per load of the scalar loop, which kept the
  // radar block at 1.35x its read pass (Nsight Compute: 76 us against 57, 2.2 TB/s). Two from
  // 11 channels and one from 14, where more values would not fit beside the co-moments in
  // registers (ptxas spills).
  constexpr int VEC = CH <= 10 ? 4 : (CH <= 13 ? 2 : 1);
  if constexpr (PLANAR && VEC > 1) {
    using Vec = std::conditional_t<VEC == 4, float4, float2>;
    if ((reinterpret_cast<unsigned long long>(x) % (4 * VEC)) == 0 && stride % VEC == 0) {
      const long long nv = n / VEC;
      for (long long j = first; j < nv; j += step) {
        float y[VEC][CH];
#pragma unroll
        for (int c = 0; c < CH; ++c) {
          const Vec v = __ldg(reinterpret_cast<const Vec*>(x + c * stride) + j);
          const float* e = reinterpret_cast<const float*>(&v);
#pragma unroll
          for (int k = 0; k < VEC; ++k) y[k][c] = e[k] - p[c];
        }
#pragma unroll
        for (int k = 0; k < VEC; ++k) add(y[k]);
      }
      i = VEC * nv + first;  // the last n % VEC samples, one per thread
    }
  }
  for (; i < n; i += step) {
    float y[CH];
#pragma unroll
    for (int c = 0; c < CH; ++c)
      y[c] = __ldg(PLANAR ? &x[c * stride + i] : &x[i * stride + c]) - p[c];
    add(y);
  }
  const int lane = tid & 31, warp = tid >> 5;
#pragma unroll
  for (int v = 0; v < W; ++v) {
    double d = v < CH ? s[v] : q[v - CH];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) d += __shfl_down_sync(0xffffffffu, d, off);
    if (lane == 0) warp_part[warp][v] = d;
  }
  __syncthreads();
  for (int v = tid; v < W; v += kThreads) {
    double d = 0;
#pragma unroll
    for (int w = 0; w < kThreads / 32; ++w) d += warp_part[w][v];
    partial[static_cast<long long>(blockIdx.x) * W + v] = d;
  }
  if (blockIdx.x == 0 && tid < CH && compute_pilot) pilot[tid] = sp[tid];
}

using LaunchFn = void (*)(int grid, cudaStream_t, const float*, long long, long long, double*,
                          float*, int);

template <int CH, bool PLANAR>
void launch_onepass(int grid, cudaStream_t st, const float* x, long long stride, long long n,
                    double* partial, float* pilot, int compute_pilot) {
  cov_onepass<CH, PLANAR><<<grid, kThreads, 0, st>>>(x, stride, n, partial, pilot, compute_pilot);
}

// Blocks of the kernel that fit on one SM at once (registers, shared memory, threads).
template <int CH, bool PLANAR>
int resident_onepass() {
  int blocks = 0;
  KAFEL_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, cov_onepass<CH, PLANAR>, kThreads, 0));
  return blocks;
}

struct Entry {
  LaunchFn launch;
  int (*resident)();
};

template <int CH>
Entry pick_layout(bool planar) {
  return planar ? Entry{&launch_onepass<CH, true>, &resident_onepass<CH, true>}
                : Entry{&launch_onepass<CH, false>, &resident_onepass<CH, false>};
}

Entry pick(int ch, bool planar) {
  switch (ch) {
    case 1:
      return pick_layout<1>(planar);
    case 2:
      return pick_layout<2>(planar);
    case 3:
      return pick_layout<3>(planar);
    case 4:
      return pick_layout<4>(planar);
    case 5:
      return pick_layout<5>(planar);
    case 6:
      return pick_layout<6>(planar);
    case 7:
      return pick_layout<7>(planar);
    case 8:
      return pick_layout<8>(planar);
    case 9:
      return pick_layout<9>(planar);
    case 10:
      return pick_layout<10>(planar);
    case 11:
      return pick_layout<11>(planar);
    case 12:
      return pick_layout<12>(planar);
    case 13:
      return pick_layout<13>(planar);
    case 14:
      return pick_layout<14>(planar);
    case 15:
      return pick_layout<15>(planar);
    case 16:
      return pick_layout<16>(planar);
  }
  throw Unsupported("cuda.onepass handles 1.." + std::to_string(kMaxChannels) + " channels");
}

// One "piece copied" event per piece of a streamed block (the compute stream waits on them).
class PieceEvents {
 public:
  explicit PieceEvents(int n) : ev_(n, nullptr) {
    for (auto& e : ev_) KAFEL_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~PieceEvents() {
    for (auto e : ev_)
      if (e) cudaEventDestroy(e);
  }
  PieceEvents(const PieceEvents&) = delete;
  PieceEvents& operator=(const PieceEvents&) = delete;
  cudaEvent_t operator[](int i) const { return ev_.at(i); }

 private:
  std::vector<cudaEvent_t> ev_;
};

// Device buffers for one block in flight: samples, block partials, merged sums, pilot; the
// compute stream, and for streaming a copy stream, pinned block and pinned result.
struct Slot {
  DeviceBuffer x, partial, merged, pilot;
  std::unique_ptr<Stream> stream, copy;
  std::unique_ptr<PieceEvents> copied;
  PinnedBuffer host, result;
};

class CudaCovPlan : public CovPlan {
 public:
  CudaCovPlan(const Device& dev, const CovDesc& d, const Params& p)
      : ordinal_(ordinal_of(dev)), guard_(ordinal_), desc_(d), pieces_(p.at("PIECES")) {
    const Entry e = pick(static_cast<int>(d.channels), d.layout == SampleLayout::Planar);
    launch_ = e.launch;
    const auto& props = device_props(ordinal_);
    sms_ = props.sm_count;
    // BPS 0: one wave, every block resident from the start. Each block pays a start (pilot,
    // first loads) and an end (the double reduction), so a second wave of blocks cost the radar
    // block 0.082 against 0.067-0.068 ms on an H100 (1 block per SM at 142 registers).
    const int bps = p.at("BPS") > 0 ? static_cast<int>(p.at("BPS")) : std::max(1, e.resident());
    groups_ = std::max<int>(1, sms_ * bps);
    w_ = static_cast<int>(d.channels + d.pairs());
  }

  void load(const CovArgs& a, int slots) override {
    DeviceGuard g(ordinal_);  // another plan may have switched the current device
    std::vector<float> packed;
    const float* src = tight(a, packed);
    slots_.clear();
    for (int s = 0; s < std::max(1, slots); ++s) {
      slots_.push_back(make_slot(1));
      slots_.back().x.upload(src, bytes());
    }
  }

  double run(int slot) override {
    DeviceGuard g(ordinal_);  // another plan may have switched the current device
    Slot& s = slots_.at(slot);
    EventTimer t;
    t.start(*s.stream);
    enqueue_compute(s, 1);
    t.stop(*s.stream);
    last_ = slot;
    return t.ms();
  }

  void fetch(CovMoments& out) override {
    DeviceGuard g(ordinal_);  // another plan may have switched the current device
    Slot& s = slots_.at(last_);
    std::vector<double> merged(w_);
    std::vector<float> pilot(desc_.channels);
    s.stream->synchronize();
    s.merged.download(merged.data(), merged.size() * 8);
    s.pilot.download(pilot.data(), pilot.size() * 4);
    to_moments(merged.data(), pilot.data(), out);
  }

  std::string timer() const override { return "cuda-events"; }
  std::unique_ptr<CovStream> stream(int depth) override;
  int ordinal() const { return ordinal_; }

  double read_floor_ms(int slot) override {
    return time_cov_readpass(ordinal_, slots_.at(slot).x.get(), bytes(), floor_sink_,
                             *slots_.at(slot).stream);
  }

  double copy_floor_ms() override {
    DeviceGuard g(ordinal_);  // another plan may have switched the current device
    Slot s = make_slot(1);
    return pinned_copy_floor_ms(s.x, bytes(), *s.stream);
  }

  // Streaming: piece k (a range of samples of every channel) is copied on the copy stream
  // and computed on the compute stream once its copy is done, so the kernel on piece k
  // overlaps the copy of piece k+1; then the merge and a small download of the sums.
  void enqueue_block(Slot& s, const float* host) {
    const long long n = desc_.samples, c = desc_.channels;
    const bool planar = desc_.layout == SampleLayout::Planar;
    for (int k = 0; k < pieces_; ++k) {
      const long long b = n * k / pieces_, e = n * (k + 1) / pieces_;
      if (e == b) continue;
      if (planar) {
        KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(s.x.as<float>() + b, n * 4, host + b, n * 4, (e - b) * 4,
                                           c, cudaMemcpyHostToDevice, *s.copy));
      } else {
        KAFEL_CUDA_CHECK(cudaMemcpyAsync(s.x.as<float>() + b * c, host + b * c, (e - b) * c * 4,
                                         cudaMemcpyHostToDevice, *s.copy));
      }
      KAFEL_CUDA_CHECK(cudaEventRecord((*s.copied)[k], *s.copy));
    }
    enqueue_compute(s, pieces_, s.copied.get());
    KAFEL_CUDA_CHECK(
        cudaMemcpyAsync(s.result.get(), s.merged.get(), w_ * 8, cudaMemcpyDeviceToHost, *s.stream));
    KAFEL_CUDA_CHECK(cudaMemcpyAsync(s.result.as<char>() + w_ * 8, s.pilot.get(), c * 4,
                                     cudaMemcpyDeviceToHost, *s.stream));
  }

  // Reads a pinned result (w sums, then the float pilot) into moments.
  void result_to_moments(const void* result, CovMoments& out) const {
    const auto* merged = static_cast<const double*>(result);
    const auto* pilot = reinterpret_cast<const float*>(merged + w_);
    to_moments(merged, pilot, out);
  }

  void to_moments(const double* merged, const float* pilot, CovMoments& out) const {
    const std::int64_t c = desc_.channels;
    std::vector<double> p(pilot, pilot + c);
    moments_from_shifted(c, desc_.samples, p.data(), merged, merged + c, out);
  }

  Slot make_slot(int pieces, bool streaming = false) const {
    Slot s;
    s.x = DeviceBuffer(bytes(), "covariance samples");
    s.partial = DeviceBuffer(std::size_t(pieces) * groups_ * w_ * 8, "covariance partials");
    s.merged = DeviceBuffer(std::size_t(w_) * 8, "covariance sums");
    s.pilot = DeviceBuffer(std::size_t(desc_.channels) * 4, "covariance pilot");
    s.stream = std::make_unique<Stream>();
    if (pieces > 1 || streaming) {
      s.copy = std::make_unique<Stream>();
      s.copied = std::make_unique<PieceEvents>(pieces);
    }
    return s;
  }

  std::size_t bytes() const { return std::size_t(desc_.min_bytes()); }
  int pieces() const { return pieces_; }

 private:
  // The one-pass kernel over `pieces` sample ranges (piece 0 computes the pilot), then merge;
  // with `copied`, piece k first waits for its copy event.
  void enqueue_compute(Slot& s, int pieces, const PieceEvents* copied = nullptr) {
    const long long n = desc_.samples, c = desc_.channels;
    const bool planar = desc_.layout == SampleLayout::Planar;
    const long long stride = planar ? n : c;
    int used = 0;
    for (int k = 0; k < pieces; ++k) {
      const long long b = n * k / pieces, e = n * (k + 1) / pieces;
      if (e == b) continue;
      const float* x = s.x.as<float>() + (planar ? b : b * c);
      if (copied) KAFEL_CUDA_CHECK(cudaStreamWaitEvent(*s.stream, (*copied)[k], 0));
      launch_(groups_, *s.stream, x, stride, e - b,
              s.partial.as<double>() + std::size_t(used) * groups_ * w_, s.pilot.as<float>(),
              k == 0 ? 1 : 0);
      KAFEL_CUDA_CHECK_LAUNCH("cov_onepass");
      ++used;
    }
    launch_cov_merge(s.partial.as<double>(), used * groups_, w_, 1, s.merged.as<double>(),
                     *s.stream);
  }

  const float* tight(const CovArgs& a, std::vector<float>& packed) const {
    const bool planar = desc_.layout == SampleLayout::Planar;
    const std::int64_t rows = planar ? desc_.channels : desc_.samples;
    const std::int64_t cols = planar ? desc_.samples : desc_.channels;
    if (a.stride == cols) return a.f32();
    packed.resize(std::size_t(rows * cols));
    for (std::int64_t r = 0; r < rows; ++r)
      std::memcpy(&packed[r * cols], a.f32() + r * a.stride, std::size_t(cols) * 4);
    return packed.data();
  }

  int ordinal_;
  DeviceGuard guard_;
  CovDesc desc_;
  int pieces_ = 1, groups_ = 1, sms_ = 1, w_ = 0, last_ = 0;
  LaunchFn launch_ = nullptr;
  std::vector<Slot> slots_;
  DeviceBuffer floor_sink_;
};

// `depth` slots, each with its own streams, pinned block and pinned result.
class CudaCovStream : public CovStream {
 public:
  CudaCovStream(CudaCovPlan& plan, int depth) : plan_(plan) {
    for (int i = 0; i < depth; ++i) {
      slots_.push_back(plan.make_slot(plan.pieces(), true));
      slots_.back().host = PinnedBuffer(plan.bytes());
      slots_.back().result = PinnedBuffer(4096 * 8);
    }
  }
  int depth() const override { return static_cast<int>(slots_.size()); }
  float* buffer(int i) override { return slots_.at(i).host.as<float>(); }
  void submit(int i) override {
    DeviceGuard g(plan_.ordinal());
    plan_.enqueue_block(slots_.at(i), buffer(i));
  }
  void wait(int i, CovMoments& out) override {
    DeviceGuard g(plan_.ordinal());
    slots_.at(i).stream->synchronize();
    plan_.result_to_moments(slots_.at(i).result.get(), out);
  }

 private:
  CudaCovPlan& plan_;
  std::vector<Slot> slots_;
};

std::unique_ptr<CovStream> CudaCovPlan::stream(int depth) {
  return std::make_unique<CudaCovStream>(*this, depth);
}

CovKernel onepass_kernel() {
  CovKernel k;
  k.name = "cuda.onepass";
  k.summary =
      "one pass: pilot shift, all pairs in float registers per thread, double warp/block merge; "
      "pinned streams";
  k.rung = 1;
  k.sample_types = {DType::f32};
  k.params.params = {
      param("BPS", 0, {0, 1, 2, 4, 8}, 0, 64, "blocks per SM (0: as many as fit at once)"),
      param("PIECES", 4, {1, 2, 4, 8}, 1, 64, "streaming: copy/compute pieces per block")};
  k.max_channels = kMaxChannels;
  // The default up to the radar's 10 channels, where it and cuda.onepass32 take 0.082-0.083 ms
  // (H100, session 13); past them cuda.onepass32 (16 channels: 0.110 against 0.171 ms).
  k.preference = 10;
  k.max_default_lanes = 10;
  k.can_implement = [](const Device&, const CovDesc& d, const Params&) -> std::string {
    return d.batch == 1 ? ""
                        : "cuda.onepass takes one block (batch " + std::to_string(d.batch) + ")";
  };
  k.make_plan = [](const Device& dev, const CovDesc& d,
                   const Params& p) -> std::unique_ptr<CovPlan> {
    if (d.channels > kMaxChannels)
      throw Unsupported("cuda.onepass keeps all pairs in registers: at most " +
                        std::to_string(kMaxChannels) + " channels (got " +
                        std::to_string(d.channels) + "); use cuda.herk");
    return std::make_unique<CudaCovPlan>(dev, d, p);
  };
  return k;
}

const Register registered{onepass_kernel()};

}  // namespace

namespace {
// One plain read of `count4` float4s (block sums to `out`).
__global__ void cov_readpass(const float4* __restrict__ x, long long count4, float* out) {
  float s = 0;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count4;
       i += step) {
    const float4 v = __ldg(&x[i]);
    s += (v.x + v.y) + (v.z + v.w);
  }
  if (s == 12345.678f) out[blockIdx.x] = s;  // keeps the loads; practically never stores
}
}  // namespace

double pinned_copy_floor_ms(DeviceBuffer& dst, std::size_t bytes, cudaStream_t stream) {
  PinnedBuffer h(bytes);
  std::memset(h.get(), 0, bytes);
  dst.upload_async(h.get(), bytes, stream);  // warm-up
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    EventTimer e;
    e.start(stream);
    dst.upload_async(h.get(), bytes, stream);
    e.stop(stream);
    t.push_back(e.ms());
  }
  return quantile(t, 0.5);
}

namespace {
// One thread (WARP false) or one warp per value; see launch_cov_merge. (One thread looping over
// cuda.onepass32's 1,056 partials per value had cost ~80 us of a 0.19 ms call.)
template <bool WARP>
__global__ void cov_merge(const double* __restrict__ partial, int groups, int w, long long count,
                          double* __restrict__ merged) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long i = WARP ? t / 32 : t;
  if (i >= count) return;
  const int lane = WARP ? static_cast<int>(t % 32) : 0, step = WARP ? 32 : 1;
  const long long b = i / w, v = i % w;
  const double* part = partial + b * groups * w + v;
  double s = 0;
  for (int g = lane; g < groups; g += step) s += part[static_cast<long long>(g) * w];
  if constexpr (WARP) {
    for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane != 0) return;
  }
  merged[i] = s;
}
}  // namespace

void launch_cov_merge(const double* partial, int groups, int w, long long batches, double* merged,
                      cudaStream_t stream) {
  const long long values = batches * w;
  if (groups > 64)
    cov_merge<true><<<unsigned((values * 32 + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        partial, groups, w, values, merged);
  else
    cov_merge<false><<<unsigned((values + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        partial, groups, w, values, merged);
  KAFEL_CUDA_CHECK_LAUNCH("cov_merge");
}

void launch_cov_readpass(const float* x, long long count, float* sink, int blocks,
                         cudaStream_t stream) {
  cov_readpass<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(x), count / 4,
                                                sink);
  KAFEL_CUDA_CHECK_LAUNCH("cov_readpass");
}

double time_cov_readpass(int ordinal, const void* x, std::size_t bytes, DeviceBuffer& sink,
                         cudaStream_t stream) {
  DeviceGuard g(ordinal);  // another plan may have switched the current device
  const int blocks = device_props(ordinal).sm_count * 16;
  if (sink.bytes() < std::size_t(blocks) * sizeof(float))
    sink = DeviceBuffer(std::size_t(blocks) * sizeof(float), "read-floor sink");
  EventTimer t;
  t.start(stream);
  launch_cov_readpass(static_cast<const float*>(x), static_cast<long long>(bytes / 16 * 4),
                      sink.as<float>(), blocks, stream);
  t.stop(stream);
  return t.ms();
}
}  // namespace kafel::cuda
