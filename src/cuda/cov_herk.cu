// Covariance rung cuda.herk: the tiled SYRK/HERK kernel of ocl.herk on CUDA (lower 64x64 lane
// tiles, shared-memory chunks, f32/cf32/ci8/ci16, batches); the default past cuda.onepass.
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <vector>

#include "core/cov_backend.hpp"
#include "core/registry.hpp"
#include "cuda/cov_floor.hpp"
#include "cuda/cov_herk.hpp"
#include "cuda/cov_pack.hpp"
#include "cuda/runtime.hpp"
#include "cuda/wgmma.hpp"

namespace kafel::cuda {

namespace {

constexpr int kTile = kHerkTile, kThreads = 256, kChunk = 16;
constexpr int kLoads = kTile * kChunk / kThreads;  // load slots per thread and panel
constexpr int kLd = kTile + 4;                     // shared row stride (float4-aligned)
constexpr std::int64_t kMinRange = 1024;
// cuda.herk_h3 is the default from this many real lanes on: past four rows of 128-lane tiles,
// where cuda.herk_tc's f16 split re-reads and re-splits each panel in every tile of its row and
// column (H100, session 35, same call: 384 f32 x 262,144 0.413 against 0.550 ms, cf32 256 x
// 262,144 0.746 against 0.784; 640 f32 x 131,072 0.638 against 0.566, 1024 x 65,536 0.743
// against 0.556; 256 f32 x 262,144 0.208-0.212 against 0.345 in the call before).
constexpr std::int64_t kH3Lanes = 513;

// The split GEMM's configuration, for its shared-memory check.
sm90::Options h3_options() {
  sm90::Options o;
  o.bm = sm90::kSplitShape[0];
  o.bn = sm90::kSplitShape[1];
  o.stages = 3;
  return o;
}

// Element types per sample type: input component, shared value, chunk sum, wide sum.
template <int MODE>
struct Types;
template <>
struct Types<0> {  // f32
  using In = float;
  using Val = float;
  using Acc = float;
  using Wide = double;
  static constexpr int comps = 1;
};
template <>
struct Types<1> {  // cf32
  using In = float;
  using Val = float;
  using Acc = float;
  using Wide = double;
  static constexpr int comps = 2;
};
template <>
struct Types<2> {  // ci8: |products| <= 2^14, FLUSH*KC <= 512 of them fit an int
  using In = signed char;
  using Val = int;
  using Acc = int;
  using Wide = long long;
  static constexpr int comps = 2;
};
template <>
struct Types<3> {  // ci16: products reach 2^30, two would overflow an int
  using In = short;
  using Val = int;
  using Acc = long long;
  using Wide = long long;
  static constexpr int comps = 2;
};

// Lane and chunk sample of load slot e (0 .. T*KC): lane-contiguous slots for interleaved
// data, sample-contiguous (per channel) for planar; the same lane for a thread's slot u in
// every chunk, which the diagonal tiles' lane sums rely on.
__device__ __forceinline__ int slot_lane(int e, bool planar, int comps) {
  if (!planar) return e % kTile;
  const int w = e % (comps * kChunk);
  return (e / (comps * kChunk)) * comps + w % comps;
}
__device__ __forceinline__ int slot_sample(int e, bool planar, int comps) {
  return planar ? (e % (comps * kChunk)) / comps : e / kTile;
}

// The pilot of every lane of every batch: the float mean of the first min(N, 32) samples,
// summed in order (as the host's lane_pilot); 0 for integer samples.
template <int MODE>
__global__ void cov_herk_pilot(const typename Types<MODE>::In* x, long long cstep, long long sstep,
                               long long bstep, int lanes, long long n, int batches, float* pilot) {
  constexpr int C = Types<MODE>::comps;
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= lanes * batches) return;
  if (MODE >= 2) {
    pilot[g] = 0.0f;
    return;
  }
  const int b = g / lanes, k = g % lanes;
  const long long count = n < kPilotSamples ? n : kPilotSamples;
  const long long base = b * bstep + (k / C) * cstep + k % C;
  float s = 0.0f;
  for (long long i = 0; i < count; ++i) s += static_cast<float>(x[base + i * sstep]);
  pilot[g] = __fdiv_rn(s, static_cast<float>(count));
}

// One block per (lower tile, sample range) and batch (grid y). Output per block: the tile's
// co-moment sums row-major (lower entries valid on diagonal tiles), then on diagonal tiles the
// T lane sums, at partial[((b*tiles + tile)*splits + split) * (T*T + T)].
template <int MODE>
__global__ void __launch_bounds__(kThreads)
    cov_herk(const typename Types<MODE>::In* __restrict__ x, long long cstep, long long sstep,
             long long bstep, int lanes, long long n, long long range, int tiles, int splits,
             int flush, int planar_flag, const float* __restrict__ pilot,
             typename Types<MODE>::Wide* __restrict__ partial) {
  using Val = typename Types<MODE>::Val;
  using Acc = typename Types<MODE>::Acc;
  using Wide = typename Types<MODE>::Wide;
  constexpr int C = Types<MODE>::comps;
  constexpr bool kShift = MODE <= 1;
  __shared__ __align__(16) Val As[kChunk * kLd];
  __shared__ __align__(16) Val Bs[kChunk * kLd];
  __shared__ Wide red[kThreads * kLoads];
  const bool planar = planar_flag != 0;
  const int lid = threadIdx.x;
  const int tile = blockIdx.x % tiles, split = blockIdx.x / tiles;
  const int b = blockIdx.y;
  int ti, tj;
  herk_tile_of(tile, ti, tj);
  const bool diag = ti == tj;
  // This thread's 4x4 micro-tile; on diagonal tiles only the 136 lower ones (threads 0..135).
  int ty = lid / 16, tx = lid % 16;
  bool active = true;
  if (diag) {
    active = lid < 136;
    herk_tile_of(active ? lid : 0, ty, tx);
  }
  const long long n0 = split * range;
  const long long n1 = min(n, n0 + range);
  const int chunks = static_cast<int>((n1 - n0 + kChunk - 1) / kChunk);
  const typename Types<MODE>::In* xb = x + b * bstep;
  const float* pb = pilot + static_cast<long long>(b) * lanes;

  int lane_a[kLoads], lane_b[kLoads], kk[kLoads];
  Val ra[kLoads], rb[kLoads];
  Acc ssum[kLoads];
  Wide wsum[kLoads];
#pragma unroll
  for (int u = 0; u < kLoads; ++u) {
    const int e = lid + u * kThreads;
    lane_a[u] = ti * kTile + slot_lane(e, planar, C);
    lane_b[u] = tj * kTile + slot_lane(e, planar, C);
    kk[u] = slot_sample(e, planar, C);
    ssum[u] = 0;
    wsum[u] = 0;
  }
  Acc acc[4][4];
  Wide wacc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      acc[i][j] = 0;
      wacc[i][j] = 0;
    }

  auto load = [&](int lane, int k, int c) -> Val {
    const long long s = n0 + static_cast<long long>(c) * kChunk + k;
    if (lane >= lanes || s >= n1) return Val(0);
    Val v = static_cast<Val>(xb[(lane / C) * cstep + lane % C + s * sstep]);
    if (kShift) v -= static_cast<Val>(pb[lane]);
    return v;
  };
#pragma unroll
  for (int u = 0; u < kLoads; ++u) {
    ra[u] = load(lane_a[u], kk[u], 0);
    rb[u] = diag ? Val(0) : load(lane_b[u], kk[u], 0);
  }
  for (int c = 0; c < chunks; ++c) {
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int e = lid + u * kThreads;
      const int at = slot_sample(e, planar, C) * kLd + slot_lane(e, planar, C);
      As[at] = ra[u];
      if (!diag) Bs[at] = rb[u];
      if (diag) ssum[u] += static_cast<Acc>(ra[u]);
    }
    __syncthreads();
    if (c + 1 < chunks)
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        ra[u] = load(lane_a[u], kk[u], c + 1);
        if (!diag) rb[u] = load(lane_b[u], kk[u], c + 1);
      }
    const Val* Bp = diag ? As : Bs;
    if (active) {
#pragma unroll 4
      for (int k = 0; k < kChunk; ++k) {
        Val av[4], bw[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          av[i] = As[k * kLd + 4 * ty + i];
          bw[i] = Bp[k * kLd + 4 * tx + i];
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j)
            acc[i][j] += static_cast<Acc>(av[i]) * static_cast<Acc>(bw[j]);
      }
    }
    if ((c + 1) % flush == 0 || c + 1 == chunks) {
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          wacc[i][j] += static_cast<Wide>(acc[i][j]);
          acc[i][j] = 0;
        }
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        wsum[u] += static_cast<Wide>(ssum[u]);
        ssum[u] = 0;
      }
    }
  }

  constexpr int W = kTile * kTile + kTile;
  Wide* out = partial + (static_cast<long long>(b * tiles + tile) * splits + split) * W;
  if (active)
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) out[(4 * ty + i) * kTile + 4 * tx + j] = wacc[i][j];
  if (diag) {  // lane sums: every slot of every thread, added per lane in a fixed order
#pragma unroll
    for (int u = 0; u < kLoads; ++u) red[lid * kLoads + u] = wsum[u];
    __syncthreads();
    if (lid < kTile) {
      Wide s = 0;
      for (int e = 0; e < kThreads * kLoads; ++e)
        if (slot_lane(e, planar, C) == lid) s += red[(e % kThreads) * kLoads + e / kThreads];
      out[kTile * kTile + lid] = s;
    }
  }
}

// The tensor-core kernel's lane tile: TILE=64 (mma.sync, sm_80+) or 128 (wgmma, sm_90a), or
// auto: 128 past 64 lanes where the GPU has wgmma.
int herk_tc_tile(const Device& dev, const CovDesc& d, const Params& p) {
  const std::int64_t v = p.count("TILE") ? p.at("TILE") : 0;
  if (v != 0) return v == 1 ? 64 : 128;
  const bool wide = dev.caps.has(Cap::wgmma_sm90a) && dev.local_memory >= herk_wg_shared_bytes();
  return d.lanes() > 64 && wide ? 128 : 64;
}

// Whether a one-tile (at most 64 lanes) tensor-core launch runs on wgmma: MMA=wgmma, or auto
// where the GPU has it; MMA=sync keeps mma.sync (every sm_80+ GPU).
bool herk_tc_wg64(const Device& dev, const Params& p) {
  const std::int64_t v = p.count("MMA") ? p.at("MMA") : 0;
  if (v == 1) return false;
  return v == 2 || (dev.caps.has(Cap::wgmma_sm90a) && dev.local_memory >= herk_wg64_shared_bytes());
}

// Whether the 128-lane tiles split into scaled f16 parts: SPLIT=f16, or auto; SPLIT=tf32 keeps
// the tf32 parts.
bool herk_tc_f16(const Params& p) {
  return !(p.count("SPLIT") && p.at("SPLIT") == 1);
}

int mode_of(DType t) {
  return t == DType::c64 ? 1 : t == DType::ci8 ? 2 : t == DType::ci16 ? 3 : 0;
}

class CudaHerkPlan : public CovPlan {
 public:
  // Engines: SIMT tiles (cuda.herk), tf32 tensor-core tiles (cuda.herk_tc) or the f16-split
  // GEMM (cuda.herk_h3).
  enum class Engine { simt, tc, h3 };

  CudaHerkPlan(const Device& dev, const CovDesc& d, const Params& p, Engine engine)
      : ordinal_(ordinal_of(dev)),
        guard_(ordinal_),
        desc_(d),
        flush_(p.count("FLUSH") ? int(p.at("FLUSH")) : 16),
        tensor_cores_(engine == Engine::tc),
        h3_(engine == Engine::h3),
        tile_(tensor_cores_ ? herk_tc_tile(dev, d, p) : kTile),
        w_(herk_partial(tile_)) {
    if (h3_) {
      plan_h3(p);
      return;
    }
    const std::int64_t chunk = tensor_cores_ ? kHerkTcChunk : kChunk;
    pitch_ = (d.samples + chunk - 1) / chunk * chunk * (d.complex() ? 2 : 1);
    const std::int64_t rows = tile_rows();
    tiles_ = rows * (rows + 1) / 2;
    wg64_ = tensor_cores_ && herk_tc_halves(tile_, tiles_) && herk_tc_wg64(dev, p);
    f16_ = tensor_cores_ && herk_tc_f16_shape(tile_) && herk_tc_f16(p);
    if (f16_) {
      scale_ = DeviceBuffer(std::size_t(d.batch * d.lanes()) * 4, "covariance lane scales");
      redo_ = DeviceBuffer(sizeof(int), "covariance redo flag");
      KAFEL_CUDA_CHECK(cudaMemset(redo_.as<int>(), 0, sizeof(int)));  // no run's epoch
    }
    const std::int64_t resident =
        tensor_cores_
            ? herk_tc_resident_blocks(ordinal_, tile_, d.complex() ? 2 : 1, int(tiles_), wg64_)
            : p.at("BPS");
    const std::int64_t slots = std::int64_t(device_props(ordinal_).sm_count) * resident;
    const std::int64_t most = std::max<std::int64_t>(1, d.samples / kMinRange);
    splits_ = splits_for(tiles_ * d.batch, slots, most);
    range_ = range_of(splits_, chunk);
    splits_ = (d.samples + range_ - 1) / range_;
    dsplits_ = splits_;
    drange_ = range_;
    if (tensor_cores_ && tile_ == 128) weigh_diagonal_tiles(rows, slots, most, chunk);
    pstride_ = std::max(splits_, dsplits_);
    partial_ =
        DeviceBuffer(std::size_t(d.batch * tiles_ * pstride_ * w_) * 8, "covariance tile partials");
    pilot_ = DeviceBuffer(std::size_t(d.batch * d.lanes()) * 4, "covariance pilot");
  }

  void load(const CovArgs& a, int slots) override {
    DeviceGuard g(ordinal_);
    std::vector<char> packed;
    // The tensor-core kernel copies whole chunks per row: rows padded so they never leave one.
    if (tensor_cores_) pack_padded_planar(a, pitch_, packed);
    const void* src = tensor_cores_ ? packed.data() : tight_samples(a, packed);
    x_ = upload_slots(src, bytes(), slots);
  }

  double run(int slot) override {
    DeviceGuard g(ordinal_);
    last_slot_ = slot;
    const DeviceBuffer& x = x_.at(slot);
    CovArgs tight_args{desc_, nullptr, 0, 0};
    LaneAddressing at = lane_addressing(tight_args);
    if (tensor_cores_) {
      const int comps = desc_.complex() ? 2 : 1;
      at.channel_step = pitch_;
      at.sample_step = comps;
      at.batch_step = pitch_ * desc_.channels;
    }
    EventTimer t;
    t.start(stream_);
    switch (mode_of(desc_.type)) {
      case 1:
        launch<1>(x, at);
        break;
      case 2:
        launch<2>(x, at);
        break;
      case 3:
        launch<3>(x, at);
        break;
      default:
        launch<0>(x, at);
    }
    t.stop(stream_);
    return t.ms();
  }

  void fetch(CovMoments& out) override {
    DeviceGuard g(ordinal_);
    stream_.synchronize();
    const std::int64_t k = desc_.lanes();
    std::vector<float> pilot(std::size_t(desc_.batch * k));
    pilot_.download(pilot.data(), pilot.size() * 4);
    if (h3_) {
      // The scales from the first samples did not hold for this block: from now on this plan
      // finds exact peaks (a pass more), and this block is computed again with them.
      int redo = 0;
      redo_.download(&redo, sizeof redo);
      if (redo && !h3_exact_) {
        h3_exact_ = true;
        run(last_slot_);
        stream_.synchronize();
        pilot_.download(pilot.data(), pilot.size() * 4);
      }
      merge_h3(pilot, out);
      return;
    }
    if (f16_) {
      // A lane's scale from its first samples did not hold in this block: from now on this
      // plan splits into tf32 parts, and this block is computed again so.
      int redo = 0;
      redo_.download(&redo, sizeof redo);
      if (redo == epoch_) {
        f16_ = false;
        run(last_slot_);
        stream_.synchronize();
        pilot_.download(pilot.data(), pilot.size() * 4);
      }
    }
    std::vector<char> raw(std::size_t(desc_.batch * tiles_ * pstride_ * w_) * 8);
    partial_.download(raw.data(), raw.size());
    std::vector<float> scale;
    if (f16_) {
      scale.resize(pilot.size());
      scale_.download(scale.data(), scale.size() * 4);
    }
    out.reset(desc_);
    if (desc_.integer())
      merge(reinterpret_cast<const long long*>(raw.data()), pilot, scale, out);
    else
      merge(reinterpret_cast<const double*>(raw.data()), pilot, scale, out);
  }

  std::string timer() const override { return "cuda-events"; }
  std::string tensor_peak() const override { return f16_ ? "f16" : ""; }

  // The block's own bytes, not the tensor-core layout's padding.
  double read_floor_ms(int slot) override {
    return time_cov_readpass(ordinal_, x_.at(slot).get(), std::size_t(desc_.min_bytes()), sink_,
                             stream_);
  }

  // Samples per range when n is cut into `splits`: whole chunks.
  std::int64_t range_of(std::int64_t splits, std::int64_t chunk) const {
    return ((desc_.samples + splits - 1) / splits + chunk - 1) / chunk * chunk;
  }

  // The 128-lane tensor-core kernel's diagonal tiles cost a part of an off-diagonal one per
  // sample (they skip the upper quarter and split one panel, not two). When every block
  // fits in one wave, the wave lasts as long as its slowest block: cut the off-diagonal tiles'
  // samples into more ranges than the diagonal tiles' so both finish together, if that beats
  // equal ranges by 3 %. (256 x 262144 f32, one off-diagonal and two diagonal tiles: 44 ranges
  // each left the diagonal blocks idle a quarter of the wave.)
  void weigh_diagonal_tiles(std::int64_t rows, std::int64_t slots, std::int64_t most,
                            std::int64_t chunk) {
    // A diagonal tile's time per sample against an off-diagonal one's. tf32: H100, 55 vs 75 ns
    // per sample (2026-11-24). f16: a diagonal item of 64 samples of one panel takes about what
    // an off-diagonal one of 32 samples of two panels does (H100, session 35: 256 f32 x 262,144
    // 0.251-0.254 ms with 0.73, 0.208-0.212 with 0.55).
    const double diagonal_cost = f16_ ? 0.55 : 0.73;
    const std::int64_t off = tiles_ - rows, per_batch = slots / desc_.batch;
    if (off == 0 || tiles_ * splits_ * desc_.batch > slots) return;
    double best = double(range_) * 0.97;  // equal ranges: the off-diagonal blocks set the time
    for (std::int64_t so = 1; so <= std::min(most, per_batch / off); ++so) {
      const std::int64_t sd = std::min(most, (per_batch - off * so) / rows);
      if (sd < 1) break;
      const std::int64_t ro = range_of(so, chunk), rd = range_of(sd, chunk);
      const double time = std::max(double(ro), diagonal_cost * double(rd));
      if (time < best) {
        best = time;
        range_ = ro;
        drange_ = rd;
      }
    }
    splits_ = (desc_.samples + range_ - 1) / range_;
    dsplits_ = (desc_.samples + drange_ - 1) / drange_;
  }

  // Sample ranges per tile: the count whose whole waves of `slots` resident blocks finish
  // soonest (time ~ waves / splits), the fewest on ties; a last wave a third full costs as
  // much as a full one.
  static std::int64_t splits_for(std::int64_t blocks, std::int64_t slots, std::int64_t most) {
    std::int64_t best = 1;
    double best_time = 0.0;
    for (std::int64_t s = 1; s <= std::min<std::int64_t>(most, 4 * slots); ++s) {
      const double time = double((blocks * s + slots - 1) / slots) / double(s);
      if (s == 1 || time < best_time * (1.0 - 1e-9)) {
        best = s;
        best_time = time;
      }
    }
    return best;
  }

 private:
  template <int MODE>
  void launch(const DeviceBuffer& x, const LaneAddressing& at) {
    using In = typename Types<MODE>::In;
    const int lanes = static_cast<int>(desc_.lanes()), nb = static_cast<int>(desc_.batch);
    auto pilots = [&] {
      cov_herk_pilot<MODE><<<(lanes * nb + kThreads - 1) / kThreads, kThreads, 0, stream_>>>(
          x.as<In>(), at.channel_step, at.sample_step, at.batch_step, lanes, desc_.samples, nb,
          pilot_.as<float>());
      KAFEL_CUDA_CHECK_LAUNCH("cov_herk_pilot");
    };
    if constexpr (MODE <= 1) {
      if (h3_) {
        pilots();
        launch_h3(x, at);
        return;
      }
      // The tensor-core kernels find their pilots and store their first flushes themselves.
      if (tensor_cores_) {
        HerkLaunch l;
        l.x = x.as<float>();
        l.cstep = at.channel_step;
        l.bstep = at.batch_step;
        l.tile = tile_;
        l.lanes = lanes;
        l.comps = MODE == 1 ? 2 : 1;
        l.batches = nb;
        l.n = desc_.samples;
        l.tiles = static_cast<int>(tiles_);
        l.rows = static_cast<int>(tile_rows());
        l.splits = static_cast<int>(splits_);
        l.dsplits = static_cast<int>(dsplits_);
        l.pstride = static_cast<int>(pstride_);
        l.flush = flush_;
        l.wg64 = wg64_;
        l.pilot = pilot_.as<float>();
        if (f16_) {
          l.f16 = true;
          l.scale = scale_.as<float>();
          l.redo = redo_.as<int>();
          epoch_ = epoch_ == INT_MAX ? 1 : epoch_ + 1;
          l.epoch = epoch_;
        }
        l.partial = partial_.as<double>();
        launch_herk_tc(l, stream_);
        return;
      }
    }
    pilots();
    const dim3 grid(static_cast<unsigned>(tiles_ * splits_), static_cast<unsigned>(nb));
    cov_herk<MODE><<<grid, kThreads, 0, stream_>>>(
        x.as<In>(), at.channel_step, at.sample_step, at.batch_step, lanes, desc_.samples, range_,
        static_cast<int>(tiles_), static_cast<int>(splits_), flush_,
        desc_.layout == SampleLayout::Planar ? 1 : 0, pilot_.as<float>(),
        partial_.as<typename Types<MODE>::Wide>());
    KAFEL_CUDA_CHECK_LAUNCH("cov_herk");
  }

  // cuda.herk_h3's buffers: f16 planes of one batch, the scaled products of every batch, the
  // lane peaks and sums, and the split-K workspace.
  void plan_h3(const Params& p) {
    const std::int64_t lanes = desc_.lanes(), nb = desc_.batch;
    ld_ = h3_ld(desc_.samples);
    const std::int64_t asked = p.count("SPLITK") ? p.at("SPLITK") : 0;
    h3_splits_ = asked > 0 ? int(asked)
                           : h3_splits(int(lanes), desc_.samples, device_props(ordinal_).sm_count);
    planes_ = DeviceBuffer(std::size_t(2 * lanes * ld_) * 2, "covariance f16 planes");
    c_ = DeviceBuffer(std::size_t(nb * lanes * lanes) * 4, "covariance products");
    peak_ = DeviceBuffer(std::size_t(nb * lanes) * 4, "covariance lane peaks");
    sums_ = DeviceBuffer(std::size_t(nb * lanes) * 8, "covariance lane sums");
    pilot_ = DeviceBuffer(std::size_t(nb * lanes) * 4, "covariance pilot");
    const std::size_t ws = h3_workspace_bytes(int(lanes), desc_.samples, h3_splits_);
    if (ws) workspace_ = DeviceBuffer(ws, "covariance split-K workspace");
    redo_ = DeviceBuffer(sizeof(int), "covariance redo flag");
  }

  void launch_h3(const DeviceBuffer& x, const LaneAddressing& at) {
    const std::int64_t lanes = desc_.lanes(), nb = desc_.batch;
    KAFEL_CUDA_CHECK(
        cudaMemsetAsync(peak_.as<unsigned>(), 0, std::size_t(nb * lanes) * 4, stream_));
    KAFEL_CUDA_CHECK(cudaMemsetAsync(sums_.as<double>(), 0, std::size_t(nb * lanes) * 8, stream_));
    KAFEL_CUDA_CHECK(cudaMemsetAsync(redo_.as<int>(), 0, sizeof(int), stream_));
    for (std::int64_t b = 0; b < nb; ++b) {
      H3Launch l;
      l.x = x.as<float>() + b * at.batch_step;
      l.cstep = at.channel_step;
      l.sstep = at.sample_step;
      l.lanes = int(lanes);
      l.comps = desc_.complex() ? 2 : 1;
      l.n = desc_.samples;
      l.pilot = pilot_.as<float>() + b * lanes;
      l.peak = peak_.as<unsigned>() + b * lanes;
      l.exact = h3_exact_;
      l.redo = redo_.as<int>();
      l.sums = sums_.as<double>() + b * lanes;
      l.planes = planes_.as<void>();
      l.ld = ld_;
      l.c = c_.as<float>() + b * lanes * lanes;
      l.workspace = workspace_.empty() ? nullptr : workspace_.as<void>();
      l.workspace_bytes = workspace_.bytes();
      l.splits = h3_splits_;
      launch_herk_h3(l, stream_);
    }
  }

  // Scaled products / (scale_i scale_j) in float64, lane sums as summed: moments per batch.
  void merge_h3(const std::vector<float>& pilot, CovMoments& out) const {
    const std::int64_t k = desc_.lanes(), nb = desc_.batch;
    std::vector<unsigned> peak(std::size_t(nb * k));
    std::vector<double> sums(std::size_t(nb * k));
    std::vector<float> c(std::size_t(nb * k * k));
    peak_.download(peak.data(), peak.size() * 4);
    sums_.download(sums.data(), sums.size() * 8);
    c_.download(c.data(), c.size() * 4);
    out.reset(desc_);
    std::vector<double> p(k), scale(k), packed(std::size_t(k * (k + 1) / 2));
    for (std::int64_t b = 0; b < nb; ++b) {
      for (std::int64_t i = 0; i < k; ++i) {
        p[i] = pilot[b * k + i];
        scale[i] = h3_scale(peak[b * k + i]);
      }
      const float* cb = c.data() + b * k * k;
      for (std::int64_t i = 0; i < k; ++i)
        for (std::int64_t j = 0; j <= i; ++j)
          packed[i * (i + 1) / 2 + j] = double(cb[i * k + j]) / (scale[i] * scale[j]);
      moments_from_lanes(desc_, b, p.data(), sums.data() + b * k, packed.data(), out);
    }
  }

  // Sums the sample ranges of every tile in order (float64 or exact int64), then lanes ->
  // moments (the same layout as ocl.herk's partials; herk_tc_halves: F + F^T). `scale`: the
  // f16 split's lane scales (empty otherwise), by which its sums are divided.
  template <class Wide>
  void merge(const Wide* part, const std::vector<float>& pilot, const std::vector<float>& scale,
             CovMoments& out) const {
    const std::int64_t k = desc_.lanes();
    std::vector<double> p(k), sum(k), packed(std::size_t(k * (k + 1) / 2));
    const bool halves = tensor_cores_ && herk_tc_halves(tile_, tiles_);
    for (std::int64_t b = 0; b < desc_.batch; ++b) {
      const std::int64_t T = tile_;
      auto ranges_sum = [&](std::int64_t t, std::int64_t at, bool diagonal) {
        Wide s = 0;
        for (std::int64_t sp = 0; sp < (diagonal ? dsplits_ : splits_); ++sp)
          s += part[((b * tiles_ + t) * pstride_ + sp) * w_ + at];
        return static_cast<double>(s);
      };
      auto tile_sum = [&](std::int64_t t, std::int64_t at, bool diagonal) {
        if (!halves || at >= T * T) return ranges_sum(t, at, diagonal);
        return ranges_sum(t, at, diagonal) + ranges_sum(t, at % T * T + at / T, diagonal);
      };
      for (std::int64_t i = 0; i < k; ++i) {
        const std::int64_t ti = i / T;
        const double si = scale.empty() ? 1.0 : double(scale[b * k + i]);
        p[i] = pilot[b * k + i];
        sum[i] = tile_sum(ti * (ti + 1) / 2 + ti, T * T + i % T, true) / si;
        for (std::int64_t j = 0; j <= i; ++j) {
          const std::int64_t tj = j / T;
          const double sj = scale.empty() ? 1.0 : double(scale[b * k + j]);
          packed[i * (i + 1) / 2 + j] =
              tile_sum(ti * (ti + 1) / 2 + tj, (i % T) * T + j % T, ti == tj) / (si * sj);
        }
      }
      moments_from_lanes(desc_, b, p.data(), sum.data(), packed.data(), out);
    }
  }

  std::int64_t tile_rows() const { return (desc_.lanes() + tile_ - 1) / tile_; }

  std::size_t bytes() const {
    if (tensor_cores_) return std::size_t(desc_.batch * desc_.channels * pitch_) * sizeof(float);
    return std::size_t(desc_.min_bytes());
  }

  int ordinal_;
  DeviceGuard guard_;
  CovDesc desc_;
  int flush_ = 32;
  bool tensor_cores_ = false;
  bool h3_ = false;
  int tile_ = kTile;   // lane tile edge
  bool wg64_ = false;  // one 64-lane tile on wgmma (MMA)
  bool f16_ = false;   // the 128-lane tiles' scaled f16 split (SPLIT; tf32 after a redo)
  int epoch_ = 0;      // the f16 split's run count, which a redo flag names
  DeviceBuffer scale_;
  std::int64_t w_ = 0;      // doubles per partial
  std::int64_t pitch_ = 0;  // floats per channel row of the tensor-core kernel's layout
  // Ranges of off-diagonal tiles (splits_ of range_ samples; every tile of the SIMT kernel) and
  // of diagonal tiles (dsplits_ of drange_), partials pstride_ apart per tile. The tensor-core
  // kernel takes only the counts: its ranges are strided chunks of about as many samples.
  std::int64_t tiles_ = 1, splits_ = 1, range_ = 0, dsplits_ = 1, drange_ = 0, pstride_ = 1;
  Stream stream_;
  DeviceBuffer partial_, pilot_, sink_;
  std::vector<DeviceBuffer> x_;
  int last_slot_ = 0;
  // cuda.herk_h3
  std::int64_t ld_ = 0;
  int h3_splits_ = 1;
  bool h3_exact_ = false;  // exact peaks (after a block the first samples' scales did not fit)
  DeviceBuffer planes_, c_, peak_, sums_, workspace_, redo_;
};

CovKernel herk_kernel() {
  CovKernel k;
  k.name = "cuda.herk";
  k.summary =
      "tiled SYRK/HERK: lower 64x64 lane tiles, 16-sample chunks read once into shared memory, "
      "4x4 micro-tiles in float (int), float64 (int64) merge; any channels, complex, batches";
  k.rung = 2;
  k.sample_types = {DType::f32, DType::c64, DType::ci8, DType::ci16};
  k.params.params = {
      param("FLUSH", 32, {8, 16, 32}, 1, 32,
            "16-sample chunks per float sum before it is added in float64 (<= 512 products)"),
      param("BPS", 4, {2, 4, 8}, 1, 64,
            "blocks resident per SM that the sample ranges fill in whole waves")};
  // Below cuda.onepass, which wins wherever it can (f32, few channels, one block); verified on
  // an H100 for f32, cf32 and ci8 at 10..1024 channels (docs/BENCHMARKS.md, 2026-11-23).
  k.preference = 5;
  k.can_implement = [](const Device&, const CovDesc& d, const Params&) -> std::string {
    const std::int64_t rows = (d.lanes() + kTile - 1) / kTile;
    if (d.batch > 65535)
      return "cuda.herk launches one grid row per batch: at most 65535 (got " +
             std::to_string(d.batch) + ")";
    if (double(d.batch) * double(rows * (rows + 1) / 2) > 2147483647.0)
      return "cuda.herk: " + d.shape() + " has too many tiles for one launch";
    return "";
  };
  k.make_plan = [](const Device& dev, const CovDesc& d,
                   const Params& p) -> std::unique_ptr<CovPlan> {
    return std::make_unique<CudaHerkPlan>(dev, d, p, CudaHerkPlan::Engine::simt);
  };
  return k;
}

CovKernel herk_tc_kernel() {
  CovKernel k = herk_kernel();
  k.name = "cuda.herk_tc";
  k.summary =
      "cuda.herk on tensor cores: lower 64x64 (mma.sync) or 128x128 (wgmma, sm_90a) lane tiles, "
      "32-sample chunks split once into tf32 big and small planes in shared memory, each product "
      "as three tf32 MMAs (float accuracy; one 64-lane tile: the square big * (v - big/2)^T in "
      "two, summed with its transpose; 128-lane tiles: lanes scaled into f16 parts, three "
      "products at f16's rate), float64 merge; f32 and cf32, sm_80+";
  k.rung = 3;
  k.sample_types = {DType::f32, DType::c64};
  k.tensor_peak = "tf32";
  k.products = 3;
  k.params.params = {
      param("FLUSH", 64, {8, 16, 32, 64}, 1, 64,
            "32-sample chunks per float sum before it is added in float64 (64: 64 float additions "
            "of 32-sample products; H100, session 13: 64 cf32 x 1M 0.43 ms at 16, 0.40 at 32; "
            "H200, session 22, three calls: 64 cf32 x 1M 0.397-0.401 ms at 32, 0.386-0.395 at 64, "
            "f32 even, "
            "the error 2.8e-7 at each)"),
      choice("TILE", 0, {"auto", "64", "128"}, true,
             "lane tile: 64 (mma.sync, sm_80+), 128 (wgmma, sm_90a); auto: 128 past 64 lanes "
             "where the GPU has wgmma"),
      choice("MMA", 0, {"auto", "sync", "wgmma"}, true,
             "one 64-lane tile (at most 64 real lanes): mma.sync from split planes (sm_80+), or "
             "wgmma with the big parts in registers (sm_90a; H200, 64 f32 x 1M: 0.137-0.141 "
             "against 0.175 ms); auto: wgmma where the GPU has it"),
      choice("SPLIT", 0, {"auto", "tf32", "f16"}, true,
             "the 128-lane tiles' parts (past 64 real lanes): tf32, or f16 of each lane scaled "
             "by a power of two (three products at twice the rate; tf32 again where a scale does "
             "not hold); auto: f16")};
  // Above cuda.herk where the GPU has mma.sync (the float types); cuda.onepass stays first.
  k.preference = 6;
  const auto base = k.can_implement;
  k.can_implement = [base](const Device& dev, const CovDesc& d, const Params& p) -> std::string {
    if (!dev.caps.has(Cap::mma_sm80))
      return "cuda.herk_tc needs tensor cores with mma.sync (compute capability 8.0 or later)";
    const int tile = p.count("TILE") && p.at("TILE") == 2 ? 128 : 64;
    if (tile == 128 && !dev.caps.has(Cap::wgmma_sm90a))
      return "cuda.herk_tc with 128-lane tiles needs wgmma (compute capability 9.0, sm_90a code)";
    if (p.count("MMA") && p.at("MMA") == 2) {
      if (!dev.caps.has(Cap::wgmma_sm90a))
        return "cuda.herk_tc MMA=wgmma needs wgmma (compute capability 9.0, sm_90a code)";
      if (tile == 128 || d.lanes() > 64)
        return "cuda.herk_tc MMA=wgmma is the one-tile kernel of at most 64 real lanes (" +
               d.shape() + " has " + std::to_string(d.lanes()) +
               (tile == 128 ? ", TILE=128)" : ")");
    }
    if (p.count("SPLIT") && p.at("SPLIT") == 2 &&
        !(dev.caps.has(Cap::wgmma_sm90a) &&
          (tile == 128 || (d.lanes() > 64 && !(p.count("TILE") && p.at("TILE") == 1)))))
      return "cuda.herk_tc SPLIT=f16 is for the 128-lane wgmma tiles (sm_90a; more than 64 "
             "real lanes, or any with TILE=128; " +
             d.shape() + " has " + std::to_string(d.lanes()) + ")";
    if (dev.local_memory < herk_tc_shared_bytes(tile))
      return "cuda.herk_tc with " + std::to_string(tile) + "-lane tiles needs " +
             std::to_string(herk_tc_shared_bytes(tile) / 1024) +
             " KiB of shared memory per block (" + dev.id + " has " +
             std::to_string(dev.local_memory / 1024) + ")";
    return base(dev, d, p);
  };
  k.make_plan = [](const Device& dev, const CovDesc& d,
                   const Params& p) -> std::unique_ptr<CovPlan> {
    return std::make_unique<CudaHerkPlan>(dev, d, p, CudaHerkPlan::Engine::tc);
  };
  return k;
}

CovKernel herk_h3_kernel() {
  CovKernel k;
  k.name = "cuda.herk_h3";
  k.summary =
      "f16-split covariance on Hopper: lanes scaled by powers of two and split into f16 big and "
      "small planes, the lower lane tiles by the split-operand wgmma GEMM (three products, a "
      "fresh accumulator per 64 samples, split-K ranges); f32 and cf32, sm_90a";
  k.rung = 4;
  k.sample_types = {DType::f32, DType::c64};
  k.tensor_peak = "f16";
  k.products = 3;
  k.params.params = {param("SPLITK", 0, {0, 8, 16, 32}, 0, 256,
                           "sample ranges (split-K; 0: ranges of at most 8192 samples that fill "
                           "the SMs once)")};
  // Above cuda.herk_tc from kH3Lanes real lanes on (docs/BENCHMARKS.md, sessions 12 and 35).
  k.preference = 7;
  k.min_default_lanes = kH3Lanes;
  k.can_implement = [](const Device& dev, const CovDesc& d, const Params&) -> std::string {
    if (!dev.caps.has(Cap::wgmma_sm90a))
      return "cuda.herk_h3 needs wgmma (compute capability 9.0, sm_90a code)";
    if (dev.local_memory < sm90::smem_bytes(sm90::Input::f16x3, h3_options(), false))
      return "cuda.herk_h3 needs " +
             std::to_string(sm90::smem_bytes(sm90::Input::f16x3, h3_options(), false) / 1024) +
             " KiB of shared memory per block (" + dev.id + " has " +
             std::to_string(dev.local_memory / 1024) + ")";
    if (d.samples > 2147483647 || d.lanes() > 65535)
      return "cuda.herk_h3 takes at most 2^31 - 1 samples and 65535 lanes (got " + d.shape() + ")";
    return "";
  };
  k.make_plan = [](const Device& dev, const CovDesc& d,
                   const Params& p) -> std::unique_ptr<CovPlan> {
    return std::make_unique<CudaHerkPlan>(dev, d, p, CudaHerkPlan::Engine::h3);
  };
  return k;
}

const Register registered{herk_kernel()};
const Register registered_tc{herk_tc_kernel()};
const Register registered_h3{herk_h3_kernel()};

}  // namespace
}  // namespace kafel::cuda
