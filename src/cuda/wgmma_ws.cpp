// Rung 14, cuda.wgmma_ws: warp specialisation on Hopper. A producer warpgroup (40 registers)
// issues every TMA copy into a ring of slots; two consumer warpgroups (232 registers, raised
// with setmaxnreg) run wgmma on their halves of the tile and hand slots back through empty
// barriers. Options: persistent CTAs over a grouped tile order, clusters of 2 sharing B by TMA
// multicast, 128 x 128 tiles taken whole by the consumers in turn (ping-pong), skinny tiles for
// outputs at most 64 columns wide or rows tall, split-K, and a C tile staged in shared memory and
// written by TMA stores. The fixed lines after it are the ladder's steps, tested and measured as
// such.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "cuda/wgmma_rung.hpp"

namespace kafel::cuda {
namespace {

// 128 x 128 tiles taken whole by the consumers in turn: the ladder step, and the default for
// small outputs.
const Params kPingPong{{"BM", 128}, {"BN", 128}, {"PERSISTENT", 1}, {"STAGES", 5}, {"CSTORE", 1}};

// Whether 256 x 128 tiles cover m x n better than 128 x 256 ones: less padded area, or as
// much with the wide tiles' last column at most half full. Split 16-bit shapes of that kind ran
// 11-13 % faster in tall tiles on an H200 (session 18, bf16: 384^2 x 65536 0.0615 -> 0.0544 ms,
// 640^2 x 32768 0.068 -> 0.060, 896^2 x 16384 0.061 -> 0.053; 384^2 x 16384 equal), not where
// the wide tiles pad less (640 x 1024 x 16384: 0.045 against 0.052).
bool tall_tiles_fit_better(std::int64_t m, std::int64_t n) {
  auto up = [](std::int64_t x, std::int64_t t) { return (x + t - 1) / t * t; };
  const std::int64_t wide = up(m, 128) * up(n, 256), tall = up(m, 256) * up(n, 128);
  return tall < wide || (tall == wide && n % 256 != 0 && n % 256 <= 128);
}

// Outputs at most 64 columns wide stream A through 128 x 64 tiles, outputs at most 64 rows tall
// (and wider) B through 64 x 128 tiles whose consumers take 64 columns each: a 128-wide tile
// would double the tensor work per byte streamed, which for fp8 is as long as the stream. 8
// slots of 24 KiB keep the loads in flight; C is staged in one round. Fewer tiles than half the
// SMs split k to fill them once. H200, session 19, against the 128 x 128 ping-pong tiles:
// 16384 x 64 x 16384 bf16 0.1575 -> 0.1325 ms, e4m3 0.0999 -> 0.0710 (0.98-0.99x cuBLAS(Lt));
// 64 x 16384 x 16384 bf16 0.1815 -> 0.1307, e4m3 0.0983 -> 0.0700 (0.96-1.10x); 6 slots or
// direct stores within 1 %; 64-column tiles at n = 96-128 read A twice, 1.2-1.5x slower.
Params choose_skinny(const Device& dev, const GemmDesc& d) {
  const bool few_columns = d.n <= 64;
  Params p{{"BM", few_columns ? 128 : 64},
           {"BN", few_columns ? 64 : 128},
           {"PERSISTENT", 1},
           {"STAGES", 8},
           {"CSTORE", 1}};
  const std::int64_t sms = dev.compute_units > 0 ? dev.compute_units : 132;
  const std::int64_t tiles = few_columns ? (d.m + 127) / 128 : (d.n + 127) / 128;
  const std::int64_t bk = 128 / static_cast<std::int64_t>(dtype_size(d.types.a));
  const std::int64_t k_tiles = (d.k + bk - 1) / bk;
  if (tiles > 0 && 2 * tiles <= sms) {
    const std::int64_t splits =
        fill_splits(dev, tiles, k_tiles, 4, sm90::split_slice_bytes(d.m + 16, d.n + 16));
    if (splits >= 2) p["SPLITK"] = splits;
  }
  return p;
}

// The stream-K tail for a persistent configuration: when the tiles fill less than half of the
// grid's last round (one CTA per SM, clusters of p's size) after at most 8 whole rounds, and a
// tile takes at least 32 k-tiles, that round's tiles are split along k over the whole grid. H200,
// session 28 (docs/cuda.md, TAIL): 5120^3 0.89-0.92x -> 0.97-1.01x cuBLAS(Lt) for every role,
// 3072^3 bf16 / f16 / tf32 0.74 / 0.76 / 0.92x -> 0.84 / 0.85 / 1.12x; with 16-24 k-tiles a tile
// (3072^3 e4m3, 3072 x 3072 x 1024 bf16) the partial sums and their reduction cost what the tail
// saves, or more; after 24 rounds (10240^3) it saves at most 3 %, within the run-to-run spread
// (bf16 -1 %, i8 / e4m3 +2 %), so it is left off there.
bool tail_pays(const Device& dev, const GemmDesc& d, const Params& p, std::int64_t k_tiles) {
  const sm90::Options o = wgmma_options(p, 1);
  if (!o.persistent || o.splits > 1 || k_tiles < 32) return false;
  const std::int64_t sms = dev.compute_units > 0 ? dev.compute_units : 132;
  const std::int64_t cluster = o.cluster;
  const std::int64_t units =
      ((d.m + o.bm - 1) / o.bm + cluster - 1) / cluster * ((d.n + o.bn - 1) / o.bn);
  const std::int64_t fit = sms / cluster, rest = units % fit;
  return units >= fit && units / fit <= 8 && rest > 0 && 2 * rest < fit;
}

// Measured on an H100 (docs/cuda.md, Hopper; session 10 swept persistence, clusters and the
// group height on every role): persistent with the TMA-store epilogue and groups of 16 tile rows
// at k <= 2048, where the epilogue weighs most (8192 x 8192 x 1024: bf16 0.96x cuBLAS against
// 0.94x in clusters and 0.90x with groups of 8; tf32 1.03x, i8 1.05x, e4m3 1.05x); above it,
// persistent clusters of 2 sharing B with 4 slots and C stored by TMA in two rounds (4096^3 /
// 8192^3: i8 0.97 / 1.16x against 0.89 / 1.11x for one CTA per tile, f16 0.98 / 1.03x against
// 0.93 / 1.01x; persistent CTAs without clusters ran 0.79-0.95x with groups of 8).
// Outputs of 65-128 columns take 256 x 128 tiles (a 128 x 256 tile would compute half zeros
// at n = 128); narrower ones with a K-major A, choose_skinny. Fewer tiles than half the SMs (small
// C): 128 x 128 tiles (ping-pong) without a split where they fill 90 % of the SMs, or a quarter
// with k at most 32 k-tiles (session 9: 1024^3 bf16 11 vs 22 us split 4 ways, i8 10 vs 19; 16384 x
// 64 x 16384 bf16 0.191 vs 0.201 ms, i8 0.104 vs 0.111, before the skinny tiles); otherwise split-K
// into as many k ranges as fill the SMs once, each at least 4 k-tiles, the partial sums within 1/8
// of the device's memory and stored by TMA. Split 128 x 256 tiles of 16-bit inputs pair CTAs in
// clusters sharing B (session 9: 1024 x 1024 x 16384 0.065 -> 0.061 ms), not 256 x 128 tiles (4096
// x 64 x 16384) or 2-tile outputs (256 x 256 x 65536), where that measured slower; i8 splits paired
// 128 x 128 ping-pong tiles.
Params choose(const Device& dev, const GemmDesc& d) {
  if ((d.n <= 64 || d.m <= 64) && (dtype_size(d.types.a) != 2 || d.op_a == Op::N))
    return choose_skinny(dev, d);
  const bool narrow = d.n <= 128;
  const std::int64_t bm = narrow ? 256 : 128, bn = narrow ? 128 : 256;
  Params p{{"BM", bm}, {"BN", bn}};
  const std::int64_t sms = dev.compute_units > 0 ? dev.compute_units : 132;
  const std::int64_t tiles = ((d.m + bm - 1) / bm) * ((d.n + bn - 1) / bn);
  const std::int64_t bk = 128 / static_cast<std::int64_t>(dtype_size(d.types.a));
  const std::int64_t k_tiles = (d.k + bk - 1) / bk;
  const bool sixteen_bit = dtype_size(d.types.a) == 2;
  if (tiles > 0 && 2 * tiles <= sms) {
    const std::int64_t pp_tiles = ((d.m + 127) / 128) * ((d.n + 127) / 128);
    if (10 * pp_tiles >= 9 * sms || (k_tiles <= 32 && 4 * pp_tiles >= sms)) return kPingPong;
    // i8 splits 128 x 128 ping-pong tiles, paired in clusters, 6 slots (session 10, kafel tune:
    // 256 x 256 x 65536 1.19x and 1024 x 1024 x 16384 1.08x the split 128 x 256 tiles).
    const bool i8_pingpong = d.types.a == DType::i8 && !narrow;
    // Split 16-bit tall tiles run without clusters (pairs of them were 2-60 % slower, except at
    // 384^2 x 65536, session 18).
    const bool tall = sixteen_bit && !narrow && tall_tiles_fit_better(d.m, d.n);
    // CTAs per range: clusters of 2 pair tiles down m, so an odd tile row count takes one CTA
    // more per column (640 x 640 bf16: 15 tiles but 18 CTAs; ranges for 15 made two waves of
    // 144 CTAs, 0.104 ms against 0.047 for cuBLAS, session 16).
    const bool paired = i8_pingpong || (sixteen_bit && !narrow && !tall && tiles >= 8);
    std::int64_t tile_m = bm, tile_n = bn;
    if (i8_pingpong) {
      tile_m = tile_n = 128;
    } else if (tall) {
      tile_m = 256;
      tile_n = 128;
    }
    const std::int64_t rows = (d.m + tile_m - 1) / tile_m, cols = (d.n + tile_n - 1) / tile_n;
    const std::int64_t units = (paired ? (rows + 1) / 2 * 2 : rows) * cols;
    // The plan pads m and n by up to 16 (see workspace_of).
    std::int64_t splits =
        fill_splits(dev, units, k_tiles, 4, sm90::split_slice_bytes(d.m + 16, d.n + 16));
    // Bandwidth-bound (flops per operand byte below the device's peak over its bandwidth):
    // ranges of at least 4096 k (8192 for i8's ping-pong pairs), but at least enough for half
    // the SMs. H100, session 16, ranges swept at 256^2, 384^2 and 512^2 x 65536 for bf16, tf32,
    // e4m3 (128 x 256 tiles) and i8: the fastest counts were 33 / 16 / 11-16 whatever the type
    // (i8: 16 / 8 / 8), within 3 % of this rule's at every point; the former rule (half the SMs
    // alone) ran 8-25 % slower at 384^2 and 512^2 (bf16 512^2: 8 ranges 0.090 ms, 16 0.072).
    const double intensity =
        2.0 * double(d.m) * double(d.n) / (double(d.m + d.n) * double(dtype_size(d.types.a)));
    const double peak = dev.peak_gflops(d.types), bandwidth = dev.bandwidth_gbs;
    if (peak > 0 && bandwidth > 0 && intensity < peak / bandwidth) {
      const std::int64_t by_length = d.k / (i8_pingpong ? 8192 : 4096);
      const std::int64_t half_sms = std::max<std::int64_t>(2, sms / (2 * units));
      splits = std::min(splits, std::max(by_length, half_sms));
    }
    if (splits >= 2 && i8_pingpong)
      return {{"BM", 128},   {"BN", 128},   {"PERSISTENT", 1}, {"CLUSTER", 2},
              {"STAGES", 6}, {"CSTORE", 2}, {"GROUP", 16},     {"SPLITK", splits}};
    if (splits >= 2) {
      p = {{"BM", tile_m}, {"BN", tile_n}, {"SPLITK", splits}, {"STAGES", 4}, {"CSTORE", 2}};
      if (paired) p["CLUSTER"] = 2;
      return p;
    }
  }
  // 16-bit inputs with an f32 C at k <= 1024: 4 slots and C in two TMA rounds (session 11, five
  // processes each, median x cuBLAS at 8192 x 8192 x 1024: bf16->f32 0.95 -> 1.01x, f16->f32
  // 0.96 -> 1.00x; at k = 2048 the 3-slot form stays ahead, 1.00 vs 0.96x; a 16-bit C: equal).
  if (d.k <= 1024 && sixteen_bit && dtype_size(d.types.c) == 4)
    p.insert({{"PERSISTENT", 1}, {"STAGES", 4}, {"CSTORE", 2}, {"GROUP", 16}});
  else if (d.k <= 2048)
    p.insert({{"PERSISTENT", 1}, {"STAGES", 3}, {"CSTORE", 1}, {"GROUP", 16}});
  else if (!narrow)
    p.insert({{"PERSISTENT", 1}, {"CLUSTER", 2}, {"STAGES", 4}, {"CSTORE", 2}});
  else
    p.insert({{"STAGES", 4}, {"CSTORE", 2}});
  if (tail_pays(dev, d, p, k_tiles)) p["TAIL"] = 1;
  return p;
}

// The default for bf16 and f16 (measured at 0.92-0.99x cuBLAS), tf32 (0.97-1.00x, against 0.47x
// for mma.sync) and i8 (0.93-1.11x cuBLASLt, against 0.56x) on an H100. fp8 (0.94-1.07x
// cuBLASLt) has no other kernel of ours, so it is its default at any preference.
int preference(const Device&, const GemmDesc& d) {
  const DType a = d.types.a;
  const bool measured = a == DType::bf16 || a == DType::f16 || a == DType::i8 ||
                        (a == DType::f32 && d.types.compute == Compute::tf32);
  return measured ? 40 : 1;
}

GemmKernel tunable() {
  GemmKernel k = wgmma_kernel("cuda.wgmma_ws",
                              "warp-specialised wgmma: TMA producer + 2 consumer warpgroups "
                              "(setmaxnreg), persistent / cluster-2 multicast / TMA-store options",
                              14, wgmma_params(), 1, true);
  k.heuristic = choose;
  k.preference = preference;
  return k;
}

// One ladder step with fixed parameters (not tunable, never the default).
GemmKernel step(const char* suffix, const char* summary, Params fixed) {
  ParamSpace space = wgmma_params();
  for (auto& d : space.params) {
    const auto it = fixed.find(d.name);
    if (it != fixed.end()) d.default_value = it->second;
    d.candidates.clear();
  }
  return wgmma_kernel(std::string("cuda.wgmma_ws.") + suffix, summary, 14, std::move(space), 1,
                      true);
}

std::vector<GemmKernel> kernels() {
  return {
      tunable(),
      step("persistent", "cuda.wgmma_ws, persistent CTAs, 4 slots, TMA-store epilogue",
           {{"PERSISTENT", 1}, {"STAGES", 4}, {"CSTORE", 2}}),
      step("cluster2", "cuda.wgmma_ws, persistent clusters of 2 sharing B by TMA multicast",
           {{"PERSISTENT", 1}, {"CLUSTER", 2}, {"STAGES", 4}, {"CSTORE", 2}}),
      step("pingpong",
           "cuda.wgmma_ws, persistent, 128 x 128 tiles taken whole by the two consumer "
           "warpgroups in turn (one's epilogue under the other's multiplies), 5 slots, TMA store",
           kPingPong),
      step("m256n128", "cuda.wgmma_ws with 256 x 128 tiles, persistent, clusters of 2",
           {{"BM", 256},
            {"BN", 128},
            {"PERSISTENT", 1},
            {"CLUSTER", 2},
            {"STAGES", 4},
            {"CSTORE", 2}}),
  };
}

const Register registered{kernels()};

}  // namespace
}  // namespace kafel::cuda
