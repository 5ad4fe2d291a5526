// cuda.herk_i8 (Hopper): complex int8 samples on the integer tensor cores, as radio-astronomy
// correlators do — lanes de-interleaved into int8 planes, the lower lane tiles by the i8 wgmma
// GEMM (exact int32 per sample range), the ranges added in int64. Exact at any sample count.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cov_backend.hpp"
#include "core/registry.hpp"
#include "cuda/cov_floor.hpp"
#include "cuda/cov_pack.hpp"
#include "cuda/runtime.hpp"
#include "cuda/wgmma.hpp"
#include "kafel/error.hpp"

namespace kafel::cuda {

namespace {

constexpr int kThreads = 256, kPerThread = 4;  // samples per thread of the planes pass
constexpr long long kSpan = static_cast<long long>(kThreads) * kPerThread;
// Samples per GEMM range at most: 2^16 products of at most 2^14 (-128 * -128) stay below 2^31.
constexpr long long kRangeSamples = 65536;
// Samples per GEMM launch at most: kMaxSplits ranges of kRangeSamples.
constexpr long long kSegment = kRangeSamples * sm90::kMaxSplits;
constexpr int kTile = 128;  // the GEMM's square lower tiles

// One batch's ci8 samples: lane k (re / im of channel k / 2), sample s at
// x[(k/2)*cstep + s*sstep + k%2] (int8 components).
struct Planes {
  const std::int8_t* x = nullptr;
  long long cstep = 0, sstep = 0;
  long long n = 0, ld = 0;             // samples; plane row pitch (bytes, a multiple of 16)
  std::int8_t* planes = nullptr;       // 2C rows of ld bytes
  unsigned long long* sums = nullptr;  // per lane, int64 two's complement, zeroed before
};

// Grid (spans, channels): kPerThread consecutive samples of one channel per thread into the re
// and im planes (one 4-byte store each), and the lanes' sums (one atomic per lane and block).
__global__ void __launch_bounds__(kThreads) i8_planes(const Planes p) {
  __shared__ long long part[kThreads / 32][2];
  const int c = blockIdx.y;
  const long long s0 = (static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x) * kPerThread;
  const std::int8_t* row = p.x + c * p.cstep;
  char4 re = {0, 0, 0, 0}, im = {0, 0, 0, 0};
  int sr = 0, si = 0;
  auto at = [&](int j, signed char& r, signed char& i) {
    if (s0 + j < p.n) {
      const char2 v = *reinterpret_cast<const char2*>(row + (s0 + j) * p.sstep);
      r = v.x;
      i = v.y;
      sr += v.x;
      si += v.y;
    }
  };
  at(0, re.x, im.x);
  at(1, re.y, im.y);
  at(2, re.z, im.z);
  at(3, re.w, im.w);
  if (s0 < p.ld) {  // rows are padded to ld with zeros (the GEMM reads k = n only)
    *reinterpret_cast<char4*>(p.planes + (2LL * c) * p.ld + s0) = re;
    *reinterpret_cast<char4*>(p.planes + (2LL * c + 1) * p.ld + s0) = im;
  }
  long long t[2] = {sr, si};
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    for (int o = 16; o > 0; o /= 2) t[k] += __shfl_xor_sync(0xffffffffu, t[k], o);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32][k] = t[k];
  }
  __syncthreads();
  if (threadIdx.x < 2) {
    long long s = 0;
    for (int w = 0; w < kThreads / 32; ++w) s += part[w][threadIdx.x];
    atomicAdd(p.sums + 2 * c + threadIdx.x, static_cast<unsigned long long>(s));
  }
}

// q[i(i+1)/2 + j] += the ranges' int32 sums at (i, j), j <= i < lanes, in int64 (one thread per
// entry; ranges apart by `slice` elements, rows `ld` apart).
__global__ void i8_add_ranges(const int* __restrict__ partial, long long ld, long long slice,
                              int ranges, int lanes, long long* __restrict__ q) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long entries = static_cast<long long>(lanes) * (lanes + 1) / 2;
  if (t >= entries) return;
  int i = static_cast<int>((sqrt(8.0 * static_cast<double>(t) + 1.0) - 1.0) * 0.5);
  while (static_cast<long long>(i + 1) * (i + 2) / 2 <= t) ++i;
  while (static_cast<long long>(i) * (i + 1) / 2 > t) --i;
  const long long j = t - static_cast<long long>(i) * (i + 1) / 2;
  const int* p = partial + i * ld + j;
  long long s = 0;
  for (int r = 0; r < ranges; ++r) s += p[r * slice];
  q[t] += s;
}

sm90::Options i8_options(int splits) {
  sm90::Options o;
  o.kernel = 1;
  o.bm = o.bn = kTile;  // square tiles for the lower triangle: the persistent ping-pong shape
  o.persistent = true;
  o.stages = 4;
  o.splits = splits;
  return o;
}

// Ranges for `samples` (at most kSegment): at least enough that none is longer than
// kRangeSamples, and enough that the lower tiles' units fill the SMs once.
int i8_splits(long long lanes, long long samples, int sms) {
  const long long rows = (lanes + kTile - 1) / kTile, tiles = rows * (rows + 1) / 2;
  const long long k_tiles =
      (samples + sm90::k_tile(sm90::Input::i8) - 1) / sm90::k_tile(sm90::Input::i8);
  const long long least = (samples + kRangeSamples - 1) / kRangeSamples;
  const long long fill = (sms + tiles - 1) / tiles;
  return static_cast<int>(
      std::clamp<long long>(std::max(least, std::min(fill, k_tiles / 4)), 1, sm90::kMaxSplits));
}

class HerkI8Plan : public CovPlan {
 public:
  HerkI8Plan(const Device& dev, const CovDesc& d)
      : ordinal_(ordinal_of(dev)), guard_(ordinal_), desc_(d), lanes_(int(d.lanes())) {
    ld_ = (d.samples + 15) / 16 * 16;
    const long long seg = std::min<long long>(d.samples, kSegment);
    splits_ = i8_splits(lanes_, seg, device_props(ordinal_).sm_count);
    const std::size_t ws = std::max(
        sm90::split_workspace_bytes(sm90::Input::i8, lanes_, lanes_, seg, i8_options(splits_)),
        sm90::split_slice_bytes(lanes_, lanes_));  // one range: C goes there
    workspace_ = DeviceBuffer(ws, "covariance int32 range sums");
    planes_ = DeviceBuffer(std::size_t(lanes_) * ld_, "covariance int8 planes");
    q_ = DeviceBuffer(std::size_t(d.batch * pairs()) * 8, "covariance int64 products");
    sums_ = DeviceBuffer(std::size_t(d.batch * lanes_) * 8, "covariance int64 lane sums");
  }

  void load(const CovArgs& a, int slots) override {
    DeviceGuard g(ordinal_);
    std::vector<char> packed;
    const void* src = tight_samples(a, packed);
    x_ = upload_slots(src, bytes(), slots);
  }

  double run(int slot) override {
    DeviceGuard g(ordinal_);
    const LaneAddressing at = lane_addressing(CovArgs{desc_, nullptr, 0, 0});
    EventTimer t;
    t.start(stream_);
    KAFEL_CUDA_CHECK(cudaMemsetAsync(q_.get(), 0, q_.bytes(), stream_));
    KAFEL_CUDA_CHECK(cudaMemsetAsync(sums_.get(), 0, sums_.bytes(), stream_));
    for (std::int64_t b = 0; b < desc_.batch; ++b) {
      Planes p;
      p.x = x_.at(slot).as<std::int8_t>() + b * at.batch_step;
      p.cstep = at.channel_step;
      p.sstep = at.sample_step;
      p.n = desc_.samples;
      p.ld = ld_;
      p.planes = planes_.as<std::int8_t>();
      p.sums = reinterpret_cast<unsigned long long*>(sums_.as<long long>() + b * lanes_);
      const dim3 grid{unsigned((ld_ + kSpan - 1) / kSpan), unsigned(desc_.channels), 1u};
      i8_planes<<<grid, kThreads, 0, stream_>>>(p);
      KAFEL_CUDA_CHECK_LAUNCH("i8_planes");
      for (long long s0 = 0; s0 < desc_.samples; s0 += kSegment)
        products(s0, std::min(kSegment, desc_.samples - s0), q_.as<long long>() + b * pairs());
    }
    t.stop(stream_);
    return t.ms();
  }

  void fetch(CovMoments& out) override {
    DeviceGuard g(ordinal_);
    stream_.synchronize();
    std::vector<long long> q(std::size_t(desc_.batch * pairs())), sums(desc_.batch * lanes_);
    q_.download(q.data(), q.size() * 8);
    sums_.download(sums.data(), sums.size() * 8);
    out.reset(desc_);
    // Integer samples need no shift: pilot 0, the sums exact (|sum| < 2^53 below 2^39 samples).
    std::vector<double> pilot(lanes_, 0.0), s(lanes_), packed(pairs());
    for (std::int64_t b = 0; b < desc_.batch; ++b) {
      for (int k = 0; k < lanes_; ++k) s[k] = double(sums[b * lanes_ + k]);
      for (long long t = 0; t < pairs(); ++t) packed[t] = double(q[b * pairs() + t]);
      moments_from_lanes(desc_, b, pilot.data(), s.data(), packed.data(), out);
    }
  }

  std::string timer() const override { return "cuda-events"; }

  double read_floor_ms(int slot) override {
    return time_cov_readpass(ordinal_, x_.at(slot).get(), bytes(), sink_, stream_);
  }

 private:
  long long pairs() const { return static_cast<long long>(lanes_) * (lanes_ + 1) / 2; }
  std::size_t bytes() const { return std::size_t(desc_.min_bytes()); }

  // Samples [s0, s0 + len) of the planes: their lower lane products in ranges of int32, added
  // into q in int64.
  void products(long long s0, long long len, long long* q) {
    const int splits = std::min(splits_, i8_splits(lanes_, len, device_props(ordinal_).sm_count));
    const int ranges = sm90::split_ranges(sm90::Input::i8, len, splits);
    sm90::Problem p;
    p.m = p.n = lanes_;
    p.k = static_cast<int>(len);
    p.a = p.b = planes_.as<std::int8_t>() + s0;
    p.lda = p.ldb = ld_;
    p.b_t = true;
    p.c_kind = sm90::CKind::i32;
    p.lower = true;
    p.reduce_splits = false;
    // One range: C itself, laid out like a range of the workspace.
    p.c = workspace_.get();
    p.ldc = sm90::partial_ld(lanes_);
    p.workspace = workspace_.get();
    p.workspace_bytes = workspace_.bytes();
    if (std::string err = sm90::launch_gemm(sm90::Input::i8, p, i8_options(splits), stream_);
        !err.empty())
      throw DeviceError("cuda.herk_i8 (" + desc_.shape() + "): " + err);
    const long long slice = sm90::partial_rows(lanes_) * sm90::partial_ld(lanes_);
    i8_add_ranges<<<unsigned((pairs() + kThreads - 1) / kThreads), kThreads, 0, stream_>>>(
        workspace_.as<int>(), sm90::partial_ld(lanes_), slice, ranges, lanes_, q);
    KAFEL_CUDA_CHECK_LAUNCH("i8_add_ranges");
  }

  int ordinal_;
  DeviceGuard guard_;
  CovDesc desc_;
  int lanes_ = 0, splits_ = 1;
  long long ld_ = 0;
  Stream stream_;
  DeviceBuffer workspace_, planes_, q_, sums_, sink_;
  std::vector<DeviceBuffer> x_;
};

CovKernel herk_i8_kernel() {
  CovKernel k;
  k.name = "cuda.herk_i8";
  k.summary =
      "complex int8 on the integer tensor cores (Hopper): lanes de-interleaved into int8 planes, "
      "the lower 128-lane tiles by the i8 wgmma GEMM in exact int32 ranges of at most 65,536 "
      "samples, the ranges added in int64; exact; ci8, batches, sm_90a";
  k.rung = 4;
  k.sample_types = {DType::ci8};
  k.tensor_peak = "i8";
  k.preference = 7;  // above cuda.herk (5) for ci8 where the GPU has wgmma
  // From 16 channels (H100, session 13: 32 x 1M 0.130 ms against cuda.herk's 0.680); batches
  // run a planes pass, a GEMM and a range sum each (1024 x 64 x 4096: 14.4 ms against 8.6).
  k.min_default_lanes = 32;
  k.min_default_batch_samples = 65536;
  k.can_implement = [](const Device& dev, const CovDesc& d, const Params&) -> std::string {
    if (!dev.caps.has(Cap::wgmma_sm90a))
      return "cuda.herk_i8 needs wgmma (compute capability 9.0, sm_90a code)";
    const std::size_t smem = sm90::smem_bytes(sm90::Input::i8, i8_options(1), false);
    if (dev.local_memory < smem)
      return "cuda.herk_i8 needs " + std::to_string(smem / 1024) +
             " KiB of shared memory per block (" + dev.id + " has " +
             std::to_string(dev.local_memory / 1024) + ")";
    if (d.lanes() > 65535) return "cuda.herk_i8 takes at most 65535 lanes (got " + d.shape() + ")";
    return "";
  };
  k.make_plan = [](const Device& dev, const CovDesc& d, const Params&) -> std::unique_ptr<CovPlan> {
    return std::make_unique<HerkI8Plan>(dev, d);
  };
  return k;
}

const Register registered{herk_i8_kernel()};

}  // namespace
}  // namespace kafel::cuda
