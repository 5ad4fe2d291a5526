// Covariance rung cuda.herk_tc on 64-lane tiles: cuda.herk's lower-tile SYRK/HERK on tensor
// cores, every product as three tf32 mma.sync (float accuracy), sm_80 and later.
#include <cstdint>

#include "cuda/cov_herk.hpp"
#include "cuda/cov_herk_tc.cuh"
#include "cuda/mma.cuh"
#include "cuda/runtime.hpp"

namespace kafel::cuda {

namespace {

using namespace herk_tc;

constexpr int T = 64, kThreads = 2 * T;
constexpr int kSteps = kChunk / 8;  // m16n8k8 steps per chunk
// Floats per lane row of a split plane: 4 of padding put the 8 rows of an ldmatrix (and the
// rows of 8 threads' 16-byte accesses) on 8 different groups of 4 banks.
constexpr int kPlaneRow = kChunk + 4;
constexpr int kPlane = T * kPlaneRow;
// Four warps of 32 x 32 lanes.
constexpr int WM = 32, WN = 32, kWarpsN = T / WN, MT = WM / 16, NT = WN / 8;
// Shared memory: the cp.async ring of raw chunks, then the planes, big and small of each panel.
// Where every tile is diagonal (at most 64 lanes) a chunk is one panel and three planes suffice
// (big, and w's two parts: herk_tc_halves): 59 instead of 84 KB, so three blocks fit on an SM
// instead of two once the registers are capped at 168; four (128 registers, 260 bytes of
// spills) ran slower. H200, 64 x 1M f32: 0.175-0.179 ms (session 21's lower triangle in three
// products: 0.184-0.188). Two plane sets, chunk c + 1 split while chunk c's products run (three
// stages, 79 KB, two blocks per SM) ran 0.187-0.190 (docs/BENCHMARKS.md, session 24).
template <bool DIAG>
struct Layout {
  static constexpr int kStages = DIAG ? 4 : 3;
  static constexpr int kBlocksPerSm = DIAG ? 3 : 1;             // __launch_bounds__' minimum
  static constexpr int kStage = (DIAG ? 1 : 2) * kRawPanel<T>;  // floats per ring stage
  static constexpr int kRing = kStages * kStage;
  static constexpr std::size_t kBytes =
      std::size_t(kRing + (DIAG ? 3 : 4) * kPlane) * sizeof(float);
};

// A warp's B fragments of one k step from the plane at `plane` (its k step's byte address):
// ldmatrix x4 at off[j] gives n tiles 2j and 2j + 1.
__device__ __forceinline__ void load_b(std::uint32_t plane, const std::uint32_t (&off)[NT / 2],
                                       std::uint32_t (&b)[NT][2]) {
#pragma unroll
  for (int j = 0; j < NT / 2; ++j) {
    std::uint32_t r[4];
    tc::ldsm4(plane + off[j], r);
    b[2 * j][0] = r[0], b[2 * j][1] = r[1], b[2 * j + 1][0] = r[2], b[2 * j + 1][1] = r[3];
  }
}

// Puts the float sums into the block's partial (put_partial) and zeroes them.
__device__ __forceinline__ void flush_tile(double* out, float (&sum)[MT][NT][4], bool add) {
  const int warp = threadIdx.x / 32, g = (threadIdx.x % 32) / 4, t = threadIdx.x % 4;
  const int wm = warp / kWarpsN, wn = warp % kWarpsN;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = wm * WM + i * 16 + g + (e / 2) * 8;
        const int col = wn * WN + j * 8 + 2 * t + e % 2;
        put_partial(out + row * T + col, sum[i][j][e], add);
        sum[i][j][e] = 0.0f;
      }
}

// Grid (tiles * splits, batches), 128 threads: four warps of 32 x 32 lanes over a 64 x 64 lower
// tile. Samples arrive planar with rows padded to whole chunks (the plan lays them out so)
// through a Layout::kStages-deep ring of cp.async copies; per chunk the split pass turns them once
// into tf32 big and small planes (pilots subtracted, complex lanes apart), and the warps then feed
// the tensor cores from those with ldmatrix. On diagonal tiles the warp wholly above the
// diagonal skips the products. DIAG: every tile is diagonal (Layout<true>), and the warps sum
// the whole square F = big * w^T of herk_tc_halves instead, two products each.
template <int COMPS, bool DIAG>
__global__ void __launch_bounds__(kThreads, Layout<DIAG>::kBlocksPerSm)
    cov_herk_tc(const HerkLaunch l) {
  extern __shared__ __align__(16) float smem[];
  __shared__ float pilots[2 * T];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const Work w = work_of<T>(l);
  const int wm = warp / kWarpsN, wn = warp % kWarpsN;
  // Warps wholly above the diagonal, or wholly in the zero lanes past the last, add nothing.
  const int rows = l.lanes - w.ti * T, cols = l.lanes - w.tj * T;
  const bool multiplies =
      (DIAG || !w.diag || wn * WN < (wm + 1) * WM) && wm * WM < rows && wn * WN < cols;
  using L = Layout<DIAG>;
  auto issue = [&](int c) { fetch_chunk<T, COMPS>(l, w, c, smem + (c % L::kStages) * L::kStage); };
#pragma unroll
  for (int c = 0; c < L::kStages - 1; ++c) issue(c);
  lane_pilots<T, COMPS>(l, w, pilots);  // read after the loop's first barrier

  // ldmatrix row addresses (bytes into a plane, k step 0): lane L gives row L % 8 of matrix
  // L / 8; A's matrices are (rows +0, k +0), (+8, +0), (+0, +4), (+8, +4) = a0..a3, B's
  // (n +0, k +0), (+0, +4), (+8, +0), (+8, +4) = b[j][0], b[j][1], b[j+1][0], b[j+1][1].
  float* planes = smem + L::kRing;
  const std::uint32_t plane_a = tc::smem_addr(planes);
  const std::uint32_t plane_b = tc::smem_addr(planes + (w.diag ? 0 : 2 * kPlane));
  constexpr std::uint32_t kSmall = kPlane * sizeof(float);  // big plane -> small plane
  const int mrow = lane % 8, mat = lane / 8;
  std::uint32_t off_a[MT], off_b[NT / 2];
#pragma unroll
  for (int i = 0; i < MT; ++i)
    off_a[i] = ((wm * WM + i * 16 + mrow + 8 * (mat & 1)) * kPlaneRow + 4 * (mat >> 1)) * 4;
#pragma unroll
  for (int j = 0; j < NT / 2; ++j)
    off_b[j] = ((wn * WN + j * 16 + mrow + 8 * (mat >> 1)) * kPlaneRow + 4 * (mat & 1)) * 4;

  float acc[MT][NT][4], sum[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = sum[i][j][e] = 0.0f;
  float lsum[COMPS];
#pragma unroll
  for (int k = 0; k < COMPS; ++k) lsum[k] = 0.0f;
  double* out = l.partial + w.part * herk_partial(T);

  for (int c = 0; c < w.chunks; ++c) {
    cp_wait<L::kStages - 2>();
    __syncthreads();  // chunk c has landed for every thread; the planes are free again
    issue(c + L::kStages - 1);
    const float* raw = smem + (c % L::kStages) * L::kStage;
    const int valid = c == w.chunks - 1 ? w.tail : kChunk;
    split_tile_chunk<T, COMPS, false, DIAG>(w.diag, raw, planes, 2 * kPlane, kPlane, pilots, valid,
                                            lsum);
    __syncthreads();  // the planes of chunk c are complete
    if (multiplies) {
#pragma unroll
      for (int k = 0; k < kSteps; ++k) {
        std::uint32_t ab[MT][4], as[MT][4], bb[NT][2], bs[NT][2];
        if constexpr (DIAG) {
          // big * (w's big part + w's small part): bb and bs from the planes after big's.
#pragma unroll
          for (int i = 0; i < MT; ++i) tc::ldsm4(plane_a + off_a[i] + 32 * k, ab[i]);
          load_b(plane_a + kSmall + 32 * k, off_b, bb);
          load_b(plane_a + 2 * kSmall + 32 * k, off_b, bs);
#pragma unroll
          for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j) tc::mma_tf32(acc[i][j], ab[i], bs[j]);
        } else {
#pragma unroll
          for (int i = 0; i < MT; ++i) {
            tc::ldsm4(plane_a + off_a[i] + 32 * k, ab[i]);
            tc::ldsm4(plane_a + kSmall + off_a[i] + 32 * k, as[i]);
          }
          load_b(plane_b + 32 * k, off_b, bb);
          load_b(plane_b + kSmall + 32 * k, off_b, bs);
          // Small products first, each pass over every tile, so the products into one
          // accumulator stand MT * NT instructions apart.
#pragma unroll
          for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j) tc::mma_tf32(acc[i][j], as[i], bb[j]);
#pragma unroll
          for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j) tc::mma_tf32(acc[i][j], ab[i], bs[j]);
        }
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int j = 0; j < NT; ++j) tc::mma_tf32(acc[i][j], ab[i], bb[j]);
      }
      // The tensor cores add into their float accumulator rounding toward zero, a bias of about
      // 2^-25 per accumulation (measured: 4.7e-6 relative after 16 chunks); one chunk's 8-12, then
      // a round-to-nearest float addition, keeps it near 3e-7.
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            sum[i][j][e] += acc[i][j][e];
            acc[i][j][e] = 0.0f;
          }
    }
    if ((c + 1) % l.flush == 0 || c + 1 == w.chunks) {
      // Warps that do not multiply own entries the merge does not read.
      const bool add = c + 1 > l.flush;
      if (multiplies) flush_tile(out, sum, add);
      if (w.diag) flush_lanes<T, COMPS>(out, lsum, add);
    }
  }
  cp_wait<0>();
}

}  // namespace

std::size_t herk_tc_shared_bytes(int tile) {
  if (tile == 128) return herk_wg_shared_bytes();
  return Layout<false>::kBytes + 2 * T * sizeof(float);
}

namespace {
// The kernel of a launch: the diagonal-only layout where there is one tile (herk_tc_halves).
Kernel kernel_of(int comps, bool diagonal_only) {
  Kernel k = cov_herk_tc<1, false>;
  if (diagonal_only)
    k = comps == 2 ? Kernel(cov_herk_tc<2, true>) : Kernel(cov_herk_tc<1, true>);
  else if (comps == 2)
    k = cov_herk_tc<2, false>;
  return k;
}
std::size_t bytes_of(bool diagonal_only) {
  return diagonal_only ? Layout<true>::kBytes : Layout<false>::kBytes;
}
}  // namespace

int herk_tc_resident_blocks(int ordinal, int tile, int comps, int tiles, bool wg64) {
  if (tile == 128) return herk_wg_resident_blocks(ordinal, comps);
  if (wg64) return herk_wg64_resident_blocks(ordinal, comps);
  const bool diagonal_only = herk_tc_halves(tile, tiles);
  return resident_blocks(kernel_of(comps, diagonal_only), kThreads, bytes_of(diagonal_only),
                         ordinal);
}

void launch_herk_tc(const HerkLaunch& l, cudaStream_t stream) {
  if (l.tile == 128) {
    launch_herk_wg(l, stream);
    return;
  }
  if (l.wg64) {
    launch_herk_wg64(l, stream);
    return;
  }
  const bool diagonal_only = herk_tc_halves(l.tile, l.tiles);
  launch_kernel(kernel_of(l.comps, diagonal_only), kThreads, bytes_of(diagonal_only), l, stream,
                "cov_herk_tc");
}

}  // namespace kafel::cuda
