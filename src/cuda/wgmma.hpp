// Host interface of the Hopper (sm_90a) GEMM kernels in wgmma_sm90a.cu: what a rung passes in,
// the configurations compiled, and their shared-memory needs. Plain C++ (no device code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace kafel::cuda::sm90 {

// Storage of A and B (both the same), as wgmma reads it. tf32 reads f32 storage; tf32x3 reads
// each operand as two tf32 parts (big, then small: Problem::a_part, b_part) for 3xtf32; f16x3
// likewise two f16 parts (the covariance's scaled split, cov_herk_h3.cu).
enum class Input { bf16, f16, tf32, e4m3, e5m2, i8, tf32x3, f16x3 };
// Storage of C.
enum class CKind : int { f32 = 0, bf16 = 1, f16 = 2, i32 = 3 };

// One GEMM on device memory, row-major as kafel's plans hold it: op(A) m x k, op(B) k x n.
// a_t: A is stored k x m (op T); b_t: B is stored n x k (op T). Leading dimensions in elements;
// every operand row starts 16-byte aligned (TMA reads and writes whole 16-byte rows).
struct Problem {
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  long long lda = 0;
  bool a_t = false;
  const void* b = nullptr;
  long long ldb = 0;
  bool b_t = false;
  void* c = nullptr;
  long long ldc = 0;
  CKind c_kind = CKind::f32;
  double alpha = 1, beta = 0;
  // tf32x3 and f16x3 only: A (m x k) holds its big part in rows [0, m) and its small part from row
  // a_part >= m on (B, n x k: from row b_part >= n); each part's rows past m (n) are never stored.
  int a_part = 0, b_part = 0;
  // Only the tiles that meet C's lower triangle (m == n, square tiles, no clusters); the rest of
  // C is left as it was, or undefined with split-K.
  bool lower = false;
  // Split-K scratch (Options::splits > 1): split_workspace_bytes() of it.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  // false: with split-K, leave each range's raw sums in the workspace (range s at
  // s * split_slice_bytes(m, n), rows partial_ld(n) elements apart, only the tiles computed;
  // split_ranges() of them) for the caller to add, and leave C alone.
  bool reduce_splits = true;
};

// How to run it. kernel 0: one CTA per tile, both warpgroups compute, one thread refills the
// ring (gemm_tma_wgmma); 1: warp-specialised (producer warpgroup + 2 consumer warpgroups).
// persistent: a CTA per SM (or the most clusters that fit) loops over tiles; otherwise one
// CTA per tile. cluster 2: CTA pairs share the B tile through TMA multicast. group: unit rows
// per group of the tile order. c_rounds: C with beta = 0 leaves through shared memory and TMA
// stores, 16-bit C in 1 or 2 rounds (2 halves the staging buffer), 32-bit C in twice as many
// through the same buffer; 0: direct stores.
struct Options {
  int kernel = 1;
  int bm = 128, bn = 256, stages = 4;
  bool persistent = false;
  int cluster = 1;
  int group = 8;
  int c_rounds = 0;
  // Split-K: k-tiles in this many ranges, each unit one tile and one range; the raw partial
  // sums are added in range order by a second kernel (the same bits from run to run).
  int splits = 1;
  // Stream-K tail (persistent, no split): when the tiles leave the grid's last round part-filled,
  // the whole rounds run as usual and the remaining tiles are split along k over every CTA of
  // the grid (as many ranges as fit), their raw sums kept in the workspace and added in range
  // order by a second kernel (the same bits from run to run on one device).
  bool tail = false;
};

// Tile shapes (BM x BN) compiled for the warp-specialised kernel: the two consumer warpgroups
// share a 128 x 256, 256 x 128 or skinny tile (128 x 64 for outputs at most 64 columns wide,
// 64 x 128 with 64 columns each for outputs at most 64 rows tall), or take 128 x 128 tiles
// whole and in turn (ping-pong: persistent only). The skinny tiles need a K-major A, no
// clusters and at most one C staging round. The one-CTA-per-tile kernel has 128 x 256 only,
// and tf32x3 (three accumulators per consumer) 128 x 128 shared by both consumers only.
inline constexpr int kShapes[][2] = {{128, 256}, {256, 128}, {128, 128}, {128, 64}, {64, 128}};
inline constexpr int kSplitShape[2] = {128, 128};
inline bool pingpong(const Options& o) {
  return o.bm == 128 && o.bn == 128;
}
inline bool skinny(const Options& o) {
  return (o.bm == 128 && o.bn == 64) || (o.bm == 64 && o.bn == 128);
}
// Whether BM x BN is one of kShapes, and their list for messages ("128 x 256, ...").
inline bool compiled_tile(int bm, int bn) {
  for (const auto& sh : kShapes)
    if (sh[0] == bm && sh[1] == bn) return true;
  return false;
}
inline std::string compiled_tiles() {
  std::string list;
  for (const auto& sh : kShapes)
    list += (list.empty() ? "" : ", ") + std::to_string(sh[0]) + " x " + std::to_string(sh[1]);
  return list;
}
// The most split-K ranges a problem may take.
inline constexpr int kMaxSplits = 256;
// The stream-K tail's ranges are at least this many k-tiles long (shorter ones would spend
// more on filling the ring than they share out).
inline constexpr int kTailLeastKTiles = 4;

// "" when `o` names a compiled configuration for `in` and problems of this layout, else why
// not (shape, kernel, cluster size, stages, K-major-only inputs).
std::string check_options(Input in, bool a_t, bool b_t, const Options& o);
// Dynamic shared memory `o` needs (bytes), for comparison with the device's opt-in limit;
// c_rounds counts only where it applies (beta = 0).
std::size_t smem_bytes(Input in, const Options& o, bool staged_c);
// True when the C staging path applies to this problem under `o`.
bool stages_c(const Problem& p, const Options& o);

// Elements per row of the split-K partial sums: n rounded up to 4 (rows 16-byte aligned, as TMA
// stores need).
inline long long partial_ld(long long n) {
  return (n + 3) / 4 * 4;
}
// Rows per split of the partial sums: m rounded up to the tallest tile, so that a tile stored by
// TMA never reaches into the next split's rows.
inline long long partial_rows(long long m) {
  return (m + 255) / 256 * 256;
}
// Bytes of one split's partial sums of an m x n output.
inline std::size_t split_slice_bytes(long long m, long long n) {
  return std::size_t(partial_rows(m)) * std::size_t(partial_ld(n)) * 4;
}

// Bytes of split-K workspace enough for an m x n x k problem of `in` under `o`, and for any
// smaller one (0 without a split); with the stream-K tail, enough for a device of `sms` SMs
// (the tail's tiles times its ranges are at most one per SM).
std::size_t split_workspace_bytes(Input in, long long m, long long n, long long k, const Options& o,
                                  int sms = 0);

// The ranges a problem of `k` reduction steps runs in when asked for `splits` (fewer when the
// k-tiles do not fill them all; 1 without a split), and the k-tile length of `in` in elements.
int split_ranges(Input in, long long k, int splits);
int k_tile(Input in);

// Enqueues the GEMM on `stream`; "" on success, else the reason (configuration not compiled,
// a tensor map the driver refused, a CUDA error).
std::string launch_gemm(Input in, const Problem& p, const Options& o, cudaStream_t stream);

}  // namespace kafel::cuda::sm90
