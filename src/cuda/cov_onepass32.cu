// cuda.onepass32 / cuda.onepass64: one pass over up to 32 / 64 real lanes, where one thread
// cannot hold all lane pairs: warps (roles) share each sample's pairs (four for 528 pairs; up to
// 16 lanes one warp holds all 136; 64 lanes: sixteen roles over two blocks that read the same
// samples). Samples staged by cp.async, float sums flushed to float64 by a warp reduce-scatter.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/cov_backend.hpp"
#include "core/registry.hpp"
#include "cuda/cov_floor.hpp"
#include "cuda/cov_herk_tc.cuh"
#include "cuda/cov_pack.hpp"
#include "cuda/runtime.hpp"

namespace kafel::cuda {

namespace {

constexpr int kMaxLanes = 32, kMaxLanes64 = 64;
// Ring depth: three stages in flight while one is summed. Eight measured no faster (H100: 16
// lanes x 4M samples, DRAM at 80 % of its peak; the radar block 0.078-0.080 ms either way, 1.33x
// its read: what is left there is the fixed cost of launch, prologue, flush and merge).
constexpr int kStages = 4;
constexpr int kThreads = 256;

// One resident block of 8 warps per SM, warp w in role w % ROLES of sample group w / ROLES; each
// SM sub-partition (w % 4) then runs one role's code. (Two blocks of 4 warps mixed the roles on
// the sub-partitions, and 4 roles' unrolled code missed the instruction cache: H100, 5 of 7.3
// cycles per instruction stalled.) LANES real lanes per block: the shape's first, the rest zero.
// SETS > 1: the pairs take SETS * ROLES roles, more registers than one SM has for a group of
// samples (64 lanes: 2144 sums per sample); block x then runs role set x % SETS of sample range
// x / SETS, and the SETS blocks of a range, launched side by side, read its samples at about the
// same time (from DRAM once, then from L2).
template <int LANES, int ROLES, int PER_THREAD, int SETS = 1>
struct Shape {
  static constexpr int lanes = LANES, roles = ROLES, per_thread = PER_THREAD, sets = SETS;
  static constexpr int groups = kThreads / 32 / ROLES;
  static constexpr int stage = 32 * PER_THREAD * groups;  // samples per ring stage
  static constexpr int stage_floats = LANES * stage;
  static constexpr int pairs = LANES * (LANES + 1) / 2;
  static constexpr int w = LANES + pairs;  // doubles per partial: lane sums, then packed pairs
};
using Wide = Shape<32, 4, 2>;       // 17..32 lanes: four roles, 2 samples per thread per stage
using Narrow = Shape<16, 1, 1>;     // up to 16 lanes: one role, 1 sample per thread per stage
using Wide64 = Shape<64, 8, 2, 2>;  // 33..64 lanes: 2 x 8 roles, 2 samples per thread per stage
static_assert(Wide::stage_floats == Narrow::stage_floats, "one ring size");
static_assert(Wide::stage_floats == Wide64::stage_floats, "one ring size");

// What one warp sums for every sample: lane pairs (a, b), rows a in [R0, R1), columns b in
// [C0, C1) (on a diagonal block only b <= a, and the rows' lane sums too), in a partial of
// LANES lanes. The four roles of 32 lanes cover the lower triangle once: two 16 x 16 triangles
// (136 pairs + 16 sums each) and two 8 x 16 rectangles (128 pairs), so the warps do nearly
// equal work per sample; 16 lanes are one triangle.
// A role moved by `rows` / `cols` lanes at run time: one code body for the 64-lane shape's
// twelve rectangles and one for its four triangles (sixteen bodies missed the instruction
// cache: H200, 14 of 22.7 cycles per instruction stalled on it, 9x slower).
struct Shift {
  int rows = 0, cols = 0;
};
template <int LANES, int R0, int R1, int C0, int C1>
struct Role {
  static constexpr bool diagonal = R0 == C0;
  static constexpr int rows = R1 - R0, cols = C1 - C0;
  static constexpr int pairs = diagonal ? rows * (rows + 1) / 2 : rows * cols;
  static constexpr int values = pairs + (diagonal ? rows : 0);
  static constexpr int padded = (values + 31) / 32 * 32;  // whole lanes of the reduce-scatter
  static constexpr int inputs = diagonal ? rows : cols + rows;
  // The lane behind input i: the columns, then (off the diagonal) the rows.
  __host__ __device__ static constexpr int lane(int i) {
    return diagonal ? R0 + i : i < cols ? C0 + i : R0 + i - cols;
  }
  __device__ static int lane(int i, Shift sh) {
    return lane(i) + (!diagonal && i < cols ? sh.cols : sh.rows);
  }
  // Where value t goes in a partial: pairs at LANES + a(a+1)/2 + b, lane sums at the lane.
  __device__ static int slot(int t, Shift sh) {
    if (t >= pairs) return R0 + sh.rows + t - pairs;
    int a = 0, b = 0;
    if (diagonal) {
      while ((a + 1) * (a + 2) / 2 <= t) ++a;
      b = t - a * (a + 1) / 2;
      a += R0;
      b += R0;
    } else {
      a = R0 + t / cols;
      b = C0 + t % cols;
    }
    a += sh.rows;
    b += sh.cols;
    return LANES + a * (a + 1) / 2 + b;
  }
};
using Role0 = Role<32, 0, 16, 0, 16>;
using Role1 = Role<32, 16, 32, 16, 32>;
using Role2 = Role<32, 16, 24, 0, 16>;
using Role3 = Role<32, 24, 32, 0, 16>;
static_assert(Role0::pairs + Role1::pairs + Role2::pairs + Role3::pairs == Wide::pairs);
using RoleAll16 = Role<16, 0, 16, 0, 16>;
static_assert(RoleAll16::pairs == Narrow::pairs);

// 64 lanes in row and column blocks of 16: four 16 x 16 triangles and the six squares below
// them, each as two 8 x 16 rectangles. Set 0 (roles 0-7) takes the triangles of blocks 0 and 1
// and the rectangles of row blocks 1 and 2, set 1 (roles 8-15) the rest; within a set, warps w
// and w + 4 (one SM sub-partition) run a triangle and a rectangle or two rectangles.
struct Bounds {
  int r0, r1, c0, c1;
};
__host__ __device__ constexpr Bounds role64(int i) {
  constexpr Bounds kRoles[16] = {
      {0, 16, 0, 16},   {16, 32, 16, 32}, {16, 24, 0, 16},  {24, 32, 0, 16},
      {32, 40, 0, 16},  {40, 48, 0, 16},  {32, 40, 16, 32}, {40, 48, 16, 32},
      {32, 48, 32, 48}, {48, 64, 48, 64}, {48, 56, 0, 16},  {56, 64, 0, 16},
      {48, 56, 16, 32}, {56, 64, 16, 32}, {48, 56, 32, 48}, {56, 64, 32, 48}};
  return kRoles[i];
}
// Role i as one of two bodies and its shift: the triangle of lanes 0-15 or the rectangle of rows
// 16-23 x columns 0-15, moved.
using Triangle64 = Role<64, 0, 16, 0, 16>;
using Rectangle64 = Role<64, 16, 24, 0, 16>;
__host__ __device__ constexpr bool triangle64(int i) {
  return role64(i).r0 == role64(i).c0;
}
__host__ __device__ constexpr Shift shift64(int i) {
  return triangle64(i) ? Shift{role64(i).r0, role64(i).c0} : Shift{role64(i).r0 - 16, role64(i).c0};
}
constexpr int pairs64() {
  int sum = 0;
  for (int i = 0; i < 16; ++i) {
    const Bounds b = role64(i);
    if (b.r1 - b.r0 != (triangle64(i) ? 16 : 8) || b.c1 - b.c0 != 16) return -1;
    sum += triangle64(i) ? Triangle64::pairs : Rectangle64::pairs;
  }
  return sum;
}
static_assert(pairs64() == Wide64::pairs);

struct Onepass32Args {
  const float* x = nullptr;  // channel c of batch b at x + (b * channels + c) * pitch
  long long pitch = 0;       // floats per channel row: whole stages
  int channels = 0;
  long long n = 0;
  long long chunks = 0;  // stages per row
  long long batches = 1;
  int flush = 32;             // stages summed in float before the warp adds them in float64
  float* pilot = nullptr;     // batch x lanes (the shape's: 16 or 32)
  double* partial = nullptr;  // batch x gridDim.x x groups x w
};

// Lane k, sample s of a ring stage: channel rows of S::stage * COMPS floats (complex: re, im).
template <class S, int COMPS>
__device__ __forceinline__ const float* stage_at(const float* st, int k, int s) {
  return st + (k / COMPS) * (S::stage * COMPS) + s * COMPS + k % COMPS;
}

// Chunk `chunk` of every channel row into stage `st`: 16-byte pieces, all threads. A thread
// always copies the same piece of rows r0, r0 + rows_per_pass, ... (a few instructions a piece).
template <class S, int COMPS>
__device__ __forceinline__ void copy_chunk(const Onepass32Args& a, const float* xb, long long chunk,
                                           float* st) {
  constexpr int row = S::stage * COMPS, per_row = row / 4, rows_per_pass = kThreads / per_row;
  static_assert(kThreads % per_row == 0);
  const int r0 = threadIdx.x / per_row, piece = (threadIdx.x % per_row) * 4;
  const float* src = xb + r0 * a.pitch + chunk * row + piece;
  float* dst = st + r0 * row + piece;
#pragma unroll 1
  for (int r = r0; r < a.channels; r += rows_per_pass) {
    herk_tc::cp_async16(dst, src, true);
    src += rows_per_pass * a.pitch;
    dst += rows_per_pass * row;
  }
}

// A shift as floats into a stage: rows of whole channels (shifts are multiples of 8 lanes).
template <class S, int COMPS>
__device__ __forceinline__ int stage_offset(int lanes) {
  return lanes / COMPS * (S::stage * COMPS);
}

// One sample of the role's pairs (and lane sums) into the float sums v; the role's rows and
// columns start `rows` / `cols` floats further into the stage (stage_offset of its shift).
template <class S, class R, int COMPS>
__device__ __forceinline__ void accumulate(const float* st, int s, int rows, int cols,
                                           const float (&p)[R::inputs], float (&v)[R::padded]) {
  float y[R::inputs];
#pragma unroll
  for (int i = 0; i < R::inputs; i += COMPS) {
    const float* base = st + (!R::diagonal && i < R::cols ? cols : rows);
    const float* at = stage_at<S, COMPS>(base, R::lane(i), s);
    if constexpr (COMPS == 2) {
      const float2 t = *reinterpret_cast<const float2*>(at);
      y[i] = t.x - p[i];
      y[i + 1] = t.y - p[i + 1];
    } else {
      y[i] = *at - p[i];
    }
  }
  if constexpr (R::diagonal) {
    int t = 0;
#pragma unroll
    for (int a = 0; a < R::rows; ++a)
#pragma unroll
      for (int b = 0; b <= a; ++b, ++t) v[t] = fmaf(y[a], y[b], v[t]);
#pragma unroll
    for (int a = 0; a < R::rows; ++a) v[R::pairs + a] += y[a];
  } else {
#pragma unroll
    for (int a = 0; a < R::rows; ++a)
#pragma unroll
      for (int b = 0; b < R::cols; ++b)
        v[a * R::cols + b] = fmaf(y[R::cols + a], y[b], v[a * R::cols + b]);
  }
}

// Recursive halving across the warp: afterwards v[0, N/32) of lane l holds the warp's totals of
// values l * N/32 + j (each lane keeps one half and adds its partner's copy of that half).
template <int M, int O, int N>
__device__ __forceinline__ void halve(float (&v)[N], int lane) {
  const bool upper = lane & O;
#pragma unroll
  for (int i = 0; i < M / 2; ++i) {
    const float lo = v[i], hi = v[i + M / 2];
    v[i] = (upper ? hi : lo) + __shfl_xor_sync(0xffffffffu, upper ? lo : hi, O);
  }
  if constexpr (O > 1) halve<M / 2, O / 2>(v, lane);
}

// The warp's float sums into the lanes' float64 totals; the float sums restart from zero.
template <int N>
__device__ __forceinline__ void flush(float (&v)[N], double (&d)[N / 32], int lane) {
  halve<N, 16>(v, lane);
#pragma unroll
  for (int j = 0; j < N / 32; ++j) d[j] += v[j];
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = 0.0f;
}

// One warp's part of a block in one batch: its role's sums over its group's samples of chunks
// [c0, c1), the ring shared with the other warps (every warp runs the same loop, so the block
// barriers match).
template <class S, class R, int COMPS>
__device__ __forceinline__ void sum_chunks(const Onepass32Args& a, const float* xb, float* ring,
                                           const float* sp, Shift sh, long long c0, long long c1,
                                           double* out) {
  const int lane = threadIdx.x & 31, group = threadIdx.x / (32 * S::roles);
  const int rows = stage_offset<S, COMPS>(sh.rows), cols = stage_offset<S, COMPS>(sh.cols);
  float p[R::inputs], v[R::padded];
  double d[R::padded / 32];
#pragma unroll
  for (int i = 0; i < R::inputs; ++i) p[i] = sp[R::lane(i, sh)];
#pragma unroll
  for (int i = 0; i < R::padded; ++i) v[i] = 0.0f;
#pragma unroll
  for (int j = 0; j < R::padded / 32; ++j) d[j] = 0.0;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (c0 + s < c1) copy_chunk<S, COMPS>(a, xb, c0 + s, ring + s * S::stage_floats);
    herk_tc::cp_commit();
  }
  int summed = 0;
  for (long long c = c0; c < c1; ++c) {
    herk_tc::cp_wait<kStages - 2>();
    __syncthreads();  // chunk c landed for every thread; chunk c - 1's stage is free again
    const long long next = c + kStages - 1;
    if (next < c1)
      copy_chunk<S, COMPS>(a, xb, next, ring + ((next - c0) % kStages) * S::stage_floats);
    herk_tc::cp_commit();
    const float* st = ring + ((c - c0) % kStages) * S::stage_floats;
    const long long first = c * S::stage;
#pragma unroll 1
    for (int j = 0; j < S::per_thread; ++j) {
      const int s = (group * S::per_thread + j) * 32 + lane;
      if (first + s < a.n)  // rows are padded past n
        accumulate<S, R, COMPS>(st, s, rows, cols, p, v);
    }
    if (++summed == a.flush) {
      flush(v, d, lane);
      summed = 0;
    }
  }
  herk_tc::cp_wait<0>();
  flush(v, d, lane);
#pragma unroll
  for (int j = 0; j < R::padded / 32; ++j) {
    const int t = lane * (R::padded / 32) + j;
    if (t < R::values) out[R::slot(t, sh)] = d[j];
  }
}

// The pilot every one-pass kernel shifts by (the first kPilotSamples samples summed in order in
// float, then divided), for lane tid; 0 past the shape's lanes. Every block finds the same one.
template <int COMPS>
__device__ __forceinline__ float lane_pilot(const Onepass32Args& a, const float* xb, int tid) {
  if (tid >= a.channels * COMPS) return 0.0f;
  return herk_tc::row_pilot<COMPS>(xb + (tid / COMPS) * a.pitch + tid % COMPS, a.n);
}

// One warp's role in every batch of its grid row: batches blockIdx.y, + gridDim.y, ...; chunks
// [chunks*r/gr, chunks*(r+1)/gr) of each (range r = x / sets of gr = gx / sets), written to
// partial (b * gx + x) * groups + group. With role sets the block's partial is zeroed first: its
// warps write only their set's values.
template <class S, class R, int COMPS>
__device__ __forceinline__ void run_role(const Onepass32Args& a, float* ring, float* sp,
                                         Shift sh = {}) {
  const long long gx = gridDim.x, gr = gx / S::sets, r = blockIdx.x / S::sets;
  const long long c0 = a.chunks * r / gr, c1 = a.chunks * (r + 1) / gr;
  const int tid = threadIdx.x, group = tid / (32 * S::roles);
  for (long long b = blockIdx.y; b < a.batches; b += gridDim.y) {
    const float* xb = a.x + b * a.channels * a.pitch;
    double* part = a.partial + (b * gx + blockIdx.x) * S::groups * S::w;
    if constexpr (S::sets > 1)
      for (int i = tid; i < S::groups * S::w; i += kThreads) part[i] = 0.0;
    __syncthreads();  // the previous batch's pilots are no longer read
    if (tid < S::lanes) {
      sp[tid] = lane_pilot<COMPS>(a, xb, tid);
      if (blockIdx.x == 0) a.pilot[b * S::lanes + tid] = sp[tid];
    }
    __syncthreads();
    sum_chunks<S, R, COMPS>(a, xb, ring, sp, sh, c0, c1, part + group * S::w);
  }
}

// Role `role` of the 64-lane shape: a triangle or a rectangle body, shifted.
template <class S, int COMPS>
__device__ __forceinline__ void run_role64(int role, const Onepass32Args& a, float* ring,
                                           float* sp) {
  const Shift sh = shift64(role);
  if (role % 8 < 2)  // roles 0, 1, 8, 9: the triangles
    run_role<S, Triangle64, COMPS>(a, ring, sp, sh);
  else
    run_role<S, Rectangle64, COMPS>(a, ring, sp, sh);
}
static_assert(triangle64(0) && triangle64(1) && triangle64(8) && triangle64(9) && !triangle64(2));

// Warp w takes role w % S::roles (of the block's set) of sample group w / S::roles in every
// batch of the block's grid row.
template <class S, int COMPS>
__global__ void __launch_bounds__(kThreads, 1) cov_onepass32(Onepass32Args a) {
  extern __shared__ float4 ring4[];
  float* ring = reinterpret_cast<float*>(ring4);
  __shared__ float sp[S::lanes];
  // Rows past the shape's channels are never copied: zero in every stage.
  for (int i = threadIdx.x; i < kStages * S::stage_floats; i += kThreads) ring[i] = 0.0f;
  if constexpr (S::sets > 1) {
    const int role = threadIdx.x / 32 % S::roles + S::roles * int(blockIdx.x % S::sets);
    run_role64<S, COMPS>(role, a, ring, sp);
  } else if constexpr (S::roles == 1) {
    run_role<S, RoleAll16, COMPS>(a, ring, sp);
  } else {
    switch (threadIdx.x / 32 % S::roles) {
      case 0:
        run_role<S, Role0, COMPS>(a, ring, sp);
        break;
      case 1:
        run_role<S, Role1, COMPS>(a, ring, sp);
        break;
      case 2:
        run_role<S, Role2, COMPS>(a, ring, sp);
        break;
      default:
        run_role<S, Role3, COMPS>(a, ring, sp);
    }
  }
}

constexpr std::size_t kRingBytes = std::size_t(kStages) * Wide::stage_floats * sizeof(float);

using KernelFn = void (*)(Onepass32Args);

// The launch geometry of a shape and its kernel for the sample type.
struct Geometry {
  int lanes = 0, groups = 0, stage = 0, w = 0, sets = 1;
  KernelFn kernel = nullptr;
};
template <class S>
Geometry geometry(bool complex) {
  return {S::lanes, S::groups, S::stage,
          S::w,     S::sets,   complex ? &cov_onepass32<S, 2> : &cov_onepass32<S, 1>};
}
// cuda.onepass64 runs its shape at any lane count (the bench then measures that shape).
Geometry geometry_for(const CovDesc& d, int max_lanes) {
  if (max_lanes == kMaxLanes64) return geometry<Wide64>(d.complex());
  return d.lanes() <= Narrow::lanes ? geometry<Narrow>(d.complex()) : geometry<Wide>(d.complex());
}

// What one block in flight needs on the device besides its samples: partials, merged sums and
// pilots (a plan has one set; a stream one per slot).
struct Sums {
  DeviceBuffer partial, merged, pilot;
};

class Onepass32Plan : public CovPlan {
 public:
  Onepass32Plan(const Device& dev, const CovDesc& d, const Params& p, int max_lanes)
      : ordinal_(ordinal_of(dev)),
        guard_(ordinal_),
        desc_(d),
        flush_(int(p.at("FLUSH"))),
        g_(geometry_for(d, max_lanes)) {
    const int comps = d.complex() ? 2 : 1;
    chunks_ = (d.samples + g_.stage - 1) / g_.stage;
    pitch_ = chunks_ * g_.stage * comps;
    // Grid columns: `blocks_` sample ranges of g_.sets blocks each.
    const std::int64_t blocks =
        std::max<std::int64_t>(1, device_props(ordinal_).sm_count * p.at("BPS") / g_.sets);
    // A grid of about `blocks`: rows of batches (each row takes every rows-th batch), and blocks
    // along the samples where there are fewer batches than that.
    rows_ = int(std::min<std::int64_t>({d.batch, blocks, 65535}));
    blocks_ = int(std::clamp<std::int64_t>(blocks / d.batch, 1, chunks_));
    sums_ = make_sums();
    KAFEL_CUDA_CHECK(
        cudaFuncSetAttribute(g_.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kRingBytes));
  }

  void load(const CovArgs& a, int slots) override {
    DeviceGuard g(ordinal_);
    std::vector<char> packed;
    pack_padded_planar(a, pitch_, packed);
    x_ = upload_slots(packed.data(), bytes(), slots);
  }

  double run(int slot) override {
    DeviceGuard g(ordinal_);
    EventTimer t;
    t.start(stream_);
    enqueue(x_.at(slot).as<float>(), sums_, stream_);
    t.stop(stream_);
    return t.ms();
  }

  // The kernel over padded samples at x, then the merge, into `sums`, on `st`.
  void enqueue(const float* x, const Sums& sums, cudaStream_t st) const {
    Onepass32Args a;
    a.x = x;
    a.pitch = pitch_;
    a.channels = int(desc_.channels);
    a.n = desc_.samples;
    a.chunks = chunks_;
    a.flush = flush_;
    a.pilot = sums.pilot.as<float>();
    a.partial = sums.partial.as<double>();
    a.batches = desc_.batch;
    const dim3 grid{unsigned(blocks_ * g_.sets), unsigned(rows_), 1u};
    g_.kernel<<<grid, kThreads, kRingBytes, st>>>(a);
    KAFEL_CUDA_CHECK_LAUNCH("cov_onepass32");
    launch_cov_merge(sums.partial.as<double>(), partials(), g_.w, desc_.batch,
                     sums.merged.as<double>(), st);
  }

  Sums make_sums() const {
    const CovDesc& d = desc_;
    return {DeviceBuffer(std::size_t(d.batch * partials() * g_.w) * 8, "covariance partials"),
            DeviceBuffer(std::size_t(d.batch * g_.w) * 8, "covariance sums"),
            DeviceBuffer(std::size_t(d.batch * g_.lanes) * 4, "covariance pilot")};
  }

  std::unique_ptr<CovStream> stream(int depth) override;
  // Partials per batch: one per sample group of every block.
  std::int64_t partials() const { return std::int64_t(blocks_) * g_.sets * g_.groups; }

  // The tight host block at `host` (planar) into the padded rows of x: one 2D copy on `st`.
  void upload_async(const float* host, const DeviceBuffer& x, cudaStream_t st) const {
    const std::size_t row = std::size_t(desc_.samples) * (desc_.complex() ? 2 : 1) * 4;
    KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(x.get(), std::size_t(pitch_) * 4, host, row, row,
                                       std::size_t(desc_.batch * desc_.channels),
                                       cudaMemcpyHostToDevice, st));
  }

  std::size_t result_bytes() const {
    return std::size_t(desc_.batch) * (std::size_t(g_.w) * 8 + std::size_t(g_.lanes) * 4);
  }
  std::size_t bytes() const { return std::size_t(desc_.batch * desc_.channels * pitch_) * 4; }
  int ordinal() const { return ordinal_; }

  void fetch(CovMoments& out) override {
    DeviceGuard g(ordinal_);
    stream_.synchronize();
    std::vector<double> merged(std::size_t(desc_.batch * g_.w));
    std::vector<float> pilot(std::size_t(desc_.batch * g_.lanes));
    sums_.merged.download(merged.data(), merged.size() * 8);
    sums_.pilot.download(pilot.data(), pilot.size() * 4);
    to_moments(merged.data(), pilot.data(), out);
  }

  // Merged sums and pilots of every batch -> moments.
  void to_moments(const double* merged, const float* pilot, CovMoments& out) const {
    const std::int64_t nb = desc_.batch;
    const int lanes = g_.lanes;
    out.reset(desc_);
    std::vector<double> p(lanes);
    for (std::int64_t b = 0; b < nb; ++b) {
      for (int k = 0; k < lanes; ++k) p[k] = pilot[b * lanes + k];
      const double* m = merged + b * g_.w;
      // Packed rows are the same for any lane count: the shape's lanes come first.
      moments_from_lanes(desc_, b, p.data(), m, m + lanes, out);
    }
  }

  std::string timer() const override { return "cuda-events"; }

  double copy_floor_ms() override {
    DeviceGuard g(ordinal_);
    // The tight block, as the stream's pinned buffers hold it.
    return pinned_copy_floor_ms(x_.at(0), std::size_t(desc_.min_bytes()), stream_);
  }

  double read_floor_ms(int slot) override {
    return time_cov_readpass(ordinal_, x_.at(slot).get(), bytes(), sink_, stream_);
  }

 private:
  int ordinal_;
  DeviceGuard guard_;
  CovDesc desc_;
  int flush_ = 32, blocks_ = 1, rows_ = 1;
  Geometry g_;
  std::int64_t chunks_ = 0, pitch_ = 0;
  Stream stream_;
  Sums sums_;
  DeviceBuffer sink_;
  std::vector<DeviceBuffer> x_;
};

// Planar blocks in flight, `depth` slots each with a pinned host block, device samples and sums,
// a pinned result and a stream: copy (one 2D copy into the padded rows), kernel, merge and the
// small download of the sums queue on the slot's stream.
class Onepass32Stream : public CovStream {
 public:
  Onepass32Stream(Onepass32Plan& plan, const CovDesc& d, int depth) : plan_(plan) {
    for (int i = 0; i < std::max(1, depth); ++i) {
      Slot s{PinnedBuffer(std::size_t(d.min_bytes())), PinnedBuffer(plan.result_bytes()),
             DeviceBuffer(plan.bytes(), "covariance samples"), plan.make_sums(),
             std::make_unique<Stream>()};
      slots_.push_back(std::move(s));
    }
  }
  int depth() const override { return static_cast<int>(slots_.size()); }
  float* buffer(int i) override { return slots_.at(i).host.as<float>(); }
  void submit(int i) override {
    DeviceGuard g(plan_.ordinal());
    Slot& s = slots_.at(i);
    plan_.upload_async(s.host.as<float>(), s.x, *s.stream);
    plan_.enqueue(s.x.as<float>(), s.sums, *s.stream);
    const std::size_t merged = s.sums.merged.bytes();
    KAFEL_CUDA_CHECK(cudaMemcpyAsync(s.result.get(), s.sums.merged.get(), merged,
                                     cudaMemcpyDeviceToHost, *s.stream));
    KAFEL_CUDA_CHECK(cudaMemcpyAsync(s.result.as<char>() + merged, s.sums.pilot.get(),
                                     s.sums.pilot.bytes(), cudaMemcpyDeviceToHost, *s.stream));
  }
  void wait(int i, CovMoments& out) override {
    DeviceGuard g(plan_.ordinal());
    Slot& s = slots_.at(i);
    s.stream->synchronize();
    plan_.to_moments(s.result.as<double>(),
                     reinterpret_cast<const float*>(s.result.as<char>() + s.sums.merged.bytes()),
                     out);
  }

 private:
  struct Slot {
    PinnedBuffer host, result;
    DeviceBuffer x;
    Sums sums;
    std::unique_ptr<Stream> stream;
  };
  Onepass32Plan& plan_;
  std::vector<Slot> slots_;
};

// Interleaved blocks take the framework's synchronous stream (their transpose is on the host).
std::unique_ptr<CovStream> Onepass32Plan::stream(int depth) {
  if (desc_.layout != SampleLayout::Planar) return nullptr;
  return std::make_unique<Onepass32Stream>(*this, desc_, depth);
}

// cuda.onepass32 (max_lanes 32) or cuda.onepass64 (64): the same plan and kernel template.
CovKernel onepass_kernel(int max_lanes) {
  CovKernel k;
  const bool wide = max_lanes == kMaxLanes64;
  k.name = wide ? "cuda.onepass64" : "cuda.onepass32";
  k.summary =
      wide ? "one pass over up to 64 real lanes (64 real or 32 complex channels): sixteen warps "
             "in two blocks that read the same samples share each sample's 2080 lane pairs, "
             "stages by cp.async, float sums flushed to float64 by a warp reduce-scatter; f32 "
             "and cf32, batches"
           : "one pass over up to 32 real lanes (32 real or 16 complex channels): four warps "
             "share each sample's 528 lane pairs (one warp all 136 up to 16 lanes), stages by "
             "cp.async, float sums flushed to float64 by a warp reduce-scatter; f32 and cf32, "
             "batches";
  k.rung = 2;
  k.sample_types = {DType::f32, DType::c64};
  k.params.params = {
      param("FLUSH", 32, {8, 16, 32}, 1, 64,
            "stages per float sum (each thread adds 2 samples per stage past 16 lanes, 1 up to "
            "16) before the warp adds it in float64"),
      param("BPS", 1, {1, 2, 4}, 1, 8,
            "blocks per SM in the grid (one is resident: ~240 registers per thread)")};
  // Real lanes are what bounds it; complex channels count two (can_implement).
  k.max_channels = max_lanes;
  // Above the tiled kernels (cuda.herk_tc 6, cuda.herk_h3 7) within its lanes, below
  // cuda.onepass (10), which keeps real single blocks of up to 10 channels (docs/BENCHMARKS.md);
  // cuda.onepass64 from 33 lanes, where cuda.onepass32 stops, up to 65,536 samples: on the
  // H200 (docs/BENCHMARKS.md, session 25) it ran 64 f32 x 65,536 in 0.035 ms against
  // cuda.herk_tc's (one tile on wgmma, samples in registers) 0.043, and slower past it (131,072:
  // 0.048-0.051 / 0.042-0.046; 262,144: 0.073 / 0.052; 1M: 0.226 / 0.140): its 16 roles issue twice
  // the FMAs' instructions (pilots, loads, flushes) where the tensor kernel's fixed cost fades.
  // (Against the mma.sync tile, session 24, the two were even at 262,144.)
  k.preference = 8;
  if (wide) {
    k.min_default_lanes = kMaxLanes + 1;
    k.max_default_samples = 65536;
  }
  k.can_implement = [max_lanes, name = k.name](const Device& dev, const CovDesc& d,
                                               const Params&) -> std::string {
    if (dev.local_memory < kRingBytes + 1024)
      return name + " needs " + std::to_string(kRingBytes / 1024 + 1) +
             " KiB of shared memory per block (" + dev.id + " has " +
             std::to_string(dev.local_memory / 1024) + ")";
    if (d.lanes() > max_lanes)
      return name + " sums at most " + std::to_string(max_lanes) + " real lanes (" +
             std::to_string(max_lanes) + " real or " + std::to_string(max_lanes / 2) +
             " complex channels; got " + d.shape() + ")";
    return "";
  };
  k.make_plan = [max_lanes](const Device& dev, const CovDesc& d,
                            const Params& p) -> std::unique_ptr<CovPlan> {
    return std::make_unique<Onepass32Plan>(dev, d, p, max_lanes);
  };
  return k;
}

const Register registered{onepass_kernel(kMaxLanes)};
const Register registered64{onepass_kernel(kMaxLanes64)};

}  // namespace
}  // namespace kafel::cuda
