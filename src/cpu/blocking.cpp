// Derives KC/MC/NC from cache sizes: the BLIS analytical recipe (an A micro-panel in half of
// L1, a B block in half of L2, the shared A block in a quarter of L3), with fallbacks.
#include "cpu/blocking.hpp"

#include <algorithm>

#include "cpu/ukernel.hpp"

namespace kafel::cpu {

namespace {

// Used when the OS does not say (values of a typical current x86 core).
constexpr std::int64_t kDefaultL1 = 32 * 1024, kDefaultL2 = 1024 * 1024,
                       kDefaultL3 = 8 * 1024 * 1024;
// The shared A block never takes more than this, whatever L3 claims (VMs report the host's).
// Every MC block packs all of B again, so MC should cover m when it can: with 4 MB, f32 2048^2
// ran as two MC blocks (2046 rows + 2) and packed B twice; 8 MB measured +3 % there (Zen 3).
constexpr std::int64_t kMaxABlockBytes = 8 * 1024 * 1024;

std::int64_t round_up(std::int64_t v, std::int64_t to) {
  return (v + to - 1) / to * to;
}
std::int64_t round_down(std::int64_t v, std::int64_t to) {
  return std::max(to, v / to * to);
}

}  // namespace

Blocking blocking_for(Isa isa, Format f, const CacheSizes& caches, std::int64_t kc, std::int64_t mc,
                      std::int64_t nc) {
  const TileShape tile = tile_shape(isa, f);
  const std::int64_t es = format_bytes(f);  // bytes per packed value (per k step and row)
  const std::int64_t l1 = caches.l1d > 0 ? caches.l1d : kDefaultL1;
  const std::int64_t l2 = caches.l2 > 0 ? caches.l2 : kDefaultL2;
  const std::int64_t l3 = caches.l3 > 0 ? caches.l3 : kDefaultL3;
  Blocking b;
  b.mr = tile.mr;
  b.nr = tile.nr;
  // At most 1024 k (f32 / f64) or 2 KB of a row of A (1024 bf16, 2048 i8) per panel, within
  // half of L1: longer micro-kernel calls leave the C tile's read and write, the stage
  // boundaries and the packing passes a smaller share. Zen 5 (48 KiB L1d), same process,
  // alternating: f32 KC 1024 vs 512 +1-2 % at 1024^3, +2.5 % at 4096^3, even at 2048^3; the
  // narrow formats do 2-4x the work per byte (2048^3: i8 +26 %, bf16 +12 % over 512).
  const std::int64_t kc_max = std::max<std::int64_t>(1024, 2048 / es);
  b.kc =
      kc > 0 ? kc : std::clamp<std::int64_t>(round_down(l1 / 2 / (tile.mr * es), 16), 64, kc_max);
  // AMX: 4 KB of a row per panel (2048 bf16, 4096 i8), whatever L1 holds. A tile product is so
  // fast that C's read and write per KC block bind long before the panels leave L1 for L2
  // (Xeon with AMX, 4096^3 bf16, GFLOP/s by KC: 384 1070, 1024 1420, 2048 1890, 4096 1540;
  // i8 at 4096 bytes 4000 against 3440 at 2048, docs/cpu.md).
  if (format_is_amx(f) && kc <= 0) b.kc = 4096 / es;
  // AVX-512 f64: at least 512 k per panel, what the rule gives on a 48 KiB L1 (Zen 5, the
  // Xeons). On a Zen 4's 32 KiB it gives 336, so C was read and written half again as often:
  // same process, alternating, three rounds, 512 against 336 ran 1024^3 0.90-1.01x the time,
  // 2048^3 0.97-0.98x, 4096^3 0.89-1.01x (docs/BENCHMARKS.md, session 32). The AVX2 kernels
  // on the same machine were mixed at 4096^3 (0.97-1.11x) and keep the rule.
  if (isa == Isa::avx512 && f == Format::f64 && kc <= 0) b.kc = std::max<std::int64_t>(b.kc, 512);
  b.nc = nc > 0 ? round_up(nc, tile.nr) : round_down(l2 / 2 / (b.kc * es), tile.nr);
  const std::int64_t a_bytes = std::min(l3 / 4, kMaxABlockBytes);
  b.mc = mc > 0 ? round_up(mc, tile.mr) : round_down(a_bytes / (b.kc * es), tile.mr);
  return b;
}

Prefetch prefetch_for(Isa isa, Format f) {
  (void)f;
  Prefetch pf;
  // An A panel is read from L3 on the first of its nc / nr calls; 64 k steps ahead (into L2)
  // brings the next panel in while this one is multiplied. Zen 5: +5 % for the kernel
  // alone on a large A block, f64 2048^3 GEMM 242.8 -> 247.4 GFLOP/s.
  if (isa == Isa::avx512) pf.a = 64;
  return pf;
}

}  // namespace kafel::cpu
