// The sm_90a translation unit of the Hopper GEMM kernels: instantiates them for each input
// type, layout and tile shape kafel uses, and implements the host interface of wgmma.hpp.
#include <algorithm>
#include <string>

#include "cuda/wgmma.hpp"
#include "cuda/wgmma_gemm_sm90a.cuh"

namespace kafel::cuda::sm90 {
namespace {

// wgmma reads MN-major shared tiles (transposed operands) for 16-bit inputs only.
bool transposable(Input in) {
  return in == Input::bf16 || in == Input::f16;
}

template <class Tag, bool A_MN, bool B_MN>
std::string by_shape(const Problem& p, const Options& o, cudaStream_t s) {
  if (o.bm == 128 && o.bn == 256) {
    using C = Cfg<Tag, 128, 256, A_MN, B_MN>;
    if constexpr (Elem<Tag>::mn_major)  // the one-CTA-per-tile rung: 16-bit inputs only
      if (o.kernel == 0) return launch_config<C, 0>(p, o, s);
    return launch_config<C, 1>(p, o, s);
  }
  if (o.bm == 128 && o.bn == 128)
    return launch_config<Cfg<Tag, 128, 128, A_MN, B_MN, false, true>, 1>(p, o, s);
  return launch_config<Cfg<Tag, 256, 128, A_MN, B_MN>, 1>(p, o, s);
}

template <class Tag>
std::string by_layout(const Problem& p, const Options& o, cudaStream_t s) {
  if constexpr (Elem<Tag>::mn_major) {
    if (p.a_t)
      return p.b_t ? by_shape<Tag, true, false>(p, o, s) : by_shape<Tag, true, true>(p, o, s);
    return p.b_t ? by_shape<Tag, false, false>(p, o, s) : by_shape<Tag, false, true>(p, o, s);
  } else {
    return by_shape<Tag, false, false>(p, o, s);  // check_options admitted K-major only
  }
}

}  // namespace

std::string check_options(Input in, bool a_t, bool b_t, const Options& o) {
  if (o.kernel != 0 && o.kernel != 1) return "kernel must be 0 or 1";
  if (o.splits < 1 || o.splits > kMaxSplits)
    return "splits must be 1.." + std::to_string(kMaxSplits);
  if (in == Input::tf32x3 || in == Input::f16x3) {
    if (o.kernel != 1 || o.bm != kSplitShape[0] || o.bn != kSplitShape[1] || o.cluster != 1)
      return "split operands are compiled for the warp-specialised kernel with 128 x 128 tiles, "
             "without clusters";
    if (a_t || !b_t) return "split operands must be K-major (A with op N, B with op T)";
    if (o.stages < 2 || o.stages > 8) return "stages must be 2..8";
    if (o.tail) return "split operands have no stream-K tail";
    return "";
  }
  if (!compiled_tile(o.bm, o.bn))
    return "tile " + std::to_string(o.bm) + " x " + std::to_string(o.bn) + " is not compiled (" +
           compiled_tiles() + ")";
  if (skinny(o)) {
    const std::string tile = std::to_string(o.bm) + " x " + std::to_string(o.bn) + " tile";
    if (o.kernel != 1) return "the " + tile + " is compiled for the warp-specialised kernel only";
    if (a_t) return "the " + tile + " is compiled for a K-major A only (A with op N)";
    if (o.cluster != 1) return "the " + tile + " runs without clusters";
    if (o.c_rounds > 1) return "the " + tile + " stages C in one round (CSTORE 0 or 1)";
  }
  if (pingpong(o) && (o.kernel != 1 || !o.persistent))
    return "the 128 x 128 ping-pong tile needs the persistent warp-specialised kernel (one "
           "tile per CTA would leave a consumer warpgroup idle)";
  if (o.kernel == 0 && (o.bm != 128 || o.bn != 256 || !transposable(in)))
    return "the one-CTA-per-tile kernel is compiled for 128 x 256 tiles of 16-bit inputs only";
  if (o.stages < 2 || o.stages > 8) return "stages must be 2..8";
  if (o.cluster != 1 && o.cluster != 2) return "cluster must be 1 or 2";
  if (o.c_rounds < 0 || o.c_rounds > 2) return "c_rounds must be 0, 1 or 2";
  if (o.kernel == 0 && o.splits != 1) return "the one-CTA-per-tile kernel has no split-K";
  if (o.tail && (o.kernel != 1 || !o.persistent || o.splits != 1))
    return "the stream-K tail needs the persistent warp-specialised kernel without SPLITK";
  if (!transposable(in) && (a_t || !b_t))
    return "8-bit and tf32 inputs need K-major operands (A with op N, B with op T)";
  return "";
}

bool stages_c(const Problem& p, const Options& o) {
  // Split-K partial sums are staged whatever beta is (it applies when they are added).
  return o.kernel == 1 && o.c_rounds > 0 && (p.beta == 0 || o.splits > 1);
}

int k_tile(Input in) {
  return in == Input::bf16 || in == Input::f16 || in == Input::f16x3 ? 64
         : in == Input::tf32 || in == Input::tf32x3                  ? 32
                                                                     : 128;
}

int split_ranges(Input in, long long k, int splits) {
  const long long k_tiles = (k + k_tile(in) - 1) / k_tile(in);
  if (splits <= 1 || k_tiles <= 1) return 1;
  const long long per = (k_tiles + splits - 1) / splits;  // as the launch splits them
  return static_cast<int>((k_tiles + per - 1) / per);
}

std::size_t split_workspace_bytes(Input in, long long m, long long n, long long k, const Options& o,
                                  int sms) {
  const long long k_tiles = (k + k_tile(in) - 1) / k_tile(in);
  if (o.tail && o.splits <= 1) {
    if (k_tiles < 2 * kTailLeastKTiles) return 0;  // the launch leaves the tail whole
    // Tail units x ranges <= the grid's clusters, so their tiles <= the units' tiles and <= SMs;
    // each a whole BM x BN tile of 32-bit sums.
    const long long unit_rows = ((m + o.bm - 1) / o.bm + o.cluster - 1) / o.cluster;
    const long long tiles = unit_rows * o.cluster * ((n + o.bn - 1) / o.bn);
    const long long most = std::min<long long>(tiles, sms > 0 ? sms : 264);
    return std::size_t(most) * std::size_t(o.bm) * std::size_t(o.bn) * 4;
  }
  // At most min(splits, k-tiles) ranges: an upper bound that grows with m, n and k.
  const long long ranges = o.kernel == 0 ? 1 : std::min<long long>(o.splits, k_tiles);
  if (ranges <= 1) return 0;
  return std::size_t(ranges) * split_slice_bytes(m, n);
}

std::size_t smem_bytes(Input in, const Options& o, bool staged_c) {
  // Every input's k-tile is one 128-byte row per tile row (two for split operands).
  const bool split = in == Input::tf32x3 || in == Input::f16x3;
  const std::size_t parts = split ? 2 : 1;
  const std::size_t stage = std::size_t(o.bm + o.bn) * 128 * parts + 16;
  // A 16-bit staging buffer per consumer: half a tile each, or a whole one in ping-pong.
  const std::size_t tiles = pingpong(o) && !split ? 2 : 1;
  const std::size_t c =
      staged_c && o.c_rounds > 0 ? tiles * o.bm * o.bn * 2 / std::size_t(o.c_rounds) : 0;
  return 1024 + std::size_t(o.stages) * stage + c;
}

std::string launch_gemm(Input in, const Problem& p, const Options& o, cudaStream_t stream) {
  const std::string bad = check_options(in, p.a_t, p.b_t, o);
  if (!bad.empty()) return bad;
  if (skinny(o)) return launch_skinny(in, p, o, stream);
  switch (in) {
    case Input::bf16:
      return by_layout<Bf16>(p, o, stream);
    case Input::f16:
      return by_layout<F16>(p, o, stream);
    case Input::tf32:
      return by_layout<Tf32>(p, o, stream);
    case Input::e4m3:
      return by_layout<E4m3>(p, o, stream);
    case Input::e5m2:
      return by_layout<E5m2>(p, o, stream);
    case Input::i8:
      return by_layout<S8>(p, o, stream);
    case Input::tf32x3:
      return launch_config<Cfg<Tf32, 128, 128, false, false, true>, 1>(p, o, stream);
    case Input::f16x3:
      return launch_config<Cfg<F16, 128, 128, false, false, true>, 1>(p, o, stream);
  }
  return "unknown input type";
}

}  // namespace kafel::cuda::sm90
