// AMX tile code: the bf16 -> f32 (tdpbf16ps) and i8 x i8 -> i32 (tdpbssd) micro-kernels of
// cpu.packed and their peak-probe loops; compiled with -mamx-*, run only when cpu_has_amx().
#include "cpu/peak_loops.hpp"
#include "cpu/ukernel.hpp"

#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AMX_INT8__) && defined(__AVX512F__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace kafel::cpu {
namespace {

// Palette 1 with all eight tiles 16 rows x 64 bytes: accumulators 0-3 (16 x 16 f32 / i32),
// A tiles 4-5 (16 rows x 64 bytes of k), B tiles 6-7 (16 pair / quad rows x 16 columns).
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};
static_assert(sizeof(TileConfig) == 64);
const TileConfig kConfig;

constexpr int kMr = 32, kNr = 32;
constexpr std::int64_t kStepBytes = 2048;  // one k step of a 32-row A panel or 32-column B panel

// Accumulator tile C += A tile x B tile in the instruction of the element type. A macro: GCC's
// tile intrinsics are macros themselves that paste their literal tile numbers into the asm.
#define KAFEL_TILE_DOT(int8, c, a, b) \
  do {                                \
    if constexpr (int8)               \
      _tile_dpbssd(c, a, b);          \
    else                              \
      _tile_dpbf16ps(c, a, b);        \
  } while (0)

// C[32 x 32] += the product of the packed panels (ukernel.hpp's contract) in tiles 0-3,
// which `start` configured for this thread: per k step of 64 bytes, two A tiles (rows 0-15,
// 16-31, 64 bytes apart) and two B tiles (columns 0-15, 16-31 of the pair / quad rows, 128
// bytes apart) feed the four accumulators.
template <bool kInt8>
void multiply(std::int64_t kc, const void* a, const void* b) {
  constexpr std::int64_t kstep = kInt8 ? 64 : 32;
  const std::int64_t steps = (kc + kstep - 1) / kstep;
  const char* ap = static_cast<const char*>(a);
  const char* bp = static_cast<const char*>(b);
  for (std::int64_t s = 0; s < steps; ++s, ap += kStepBytes, bp += kStepBytes) {
    _tile_loadd(6, bp, 128);
    _tile_loadd(7, bp + 64, 128);
    _tile_loadd(4, ap, 64);
    KAFEL_TILE_DOT(kInt8, 0, 4, 6);
    KAFEL_TILE_DOT(kInt8, 1, 4, 7);
    _tile_loadd(5, ap + 1024, 64);
    KAFEL_TILE_DOT(kInt8, 2, 5, 6);
    KAFEL_TILE_DOT(kInt8, 3, 5, 7);
  }
}

// Tiles 0-3 to a 32 x 32 block of 4-byte values, rows `ld` bytes apart.
void store_acc(void* p, std::int64_t ld) {
  char* c = static_cast<char*>(p);
  _tile_stored(0, c, ld);
  _tile_stored(1, c + 64, ld);
  _tile_stored(2, c + 16 * ld, ld);
  _tile_stored(3, c + 16 * ld + 64, ld);
}
void zero_acc() {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
}

// Starts the lines of a 32 x 32 C tile (rows `ldc` elements apart) on their way into L1.
template <class T>
void prefetch_c(const T* c, std::int64_t ldc) {
  for (int i = 0; i < kMr; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
  }
}

// The product goes to zeroed tiles; with alpha == 1 and beta == 0 they are stored into C as
// they are. Otherwise C, prefetched when the call began (loading it into the tiles first
// stalled every call on memory: a 4096^2 f32 C is far larger than the caches), is merged in
// AVX-512 from a buffer: C = alpha * product + beta * C.
void ukernel_bf16(std::int64_t kc, const std::uint16_t* a, const std::uint16_t* b, float* c,
                  std::int64_t ldc, float alpha, float beta, Prefetch) {
  const bool plain = alpha == 1.f && beta == 0.f;
  if (!plain && beta != 0.f) prefetch_c(c, ldc);
  zero_acc();
  multiply<false>(kc, a, b);
  if (plain) return store_acc(c, ldc * std::int64_t(sizeof(float)));
  alignas(64) float acc[kMr * kNr];
  store_acc(acc, kNr * 4);
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int i = 0; i < kMr; ++i)
    for (int v = 0; v < kNr; v += 16) {
      float* ci = c + i * ldc + v;
      const __m512 x = _mm512_load_ps(acc + i * kNr + v);
      const __m512 y = alpha == 1.f ? x : _mm512_mul_ps(x, va);
      _mm512_storeu_ps(ci, beta == 0.f   ? y
                           : beta == 1.f ? _mm512_add_ps(_mm512_loadu_ps(ci), y)
                                         : _mm512_fmadd_ps(_mm512_loadu_ps(ci), vb, y));
    }
}

// Integer C wraps modulo 2^32 like every integer path (uint32 lanes, mullo keeps the low half;
// tdpbssd adds without saturation).
void ukernel_i8(std::int64_t kc, const std::int8_t* a, const std::int8_t* b, std::uint32_t* c,
                std::int64_t ldc, std::uint32_t alpha, std::uint32_t beta, Prefetch) {
  const bool plain = alpha == 1 && beta == 0;
  if (!plain && beta != 0) prefetch_c(c, ldc);
  zero_acc();
  multiply<true>(kc, a, b);
  if (plain) return store_acc(c, ldc * std::int64_t(sizeof(std::uint32_t)));
  alignas(64) std::uint32_t acc[kMr * kNr];
  store_acc(acc, kNr * 4);
  const __m512i va = _mm512_set1_epi32(int(alpha)), vb = _mm512_set1_epi32(int(beta));
  for (int i = 0; i < kMr; ++i)
    for (int v = 0; v < kNr; v += 16) {
      std::uint32_t* ci = c + i * ldc + v;
      const __m512i x = _mm512_load_si512(acc + i * kNr + v);
      const __m512i y = alpha == 1 ? x : _mm512_mullo_epi32(x, va);
      _mm512_storeu_si512(
          ci, beta == 0   ? y
              : beta == 1 ? _mm512_add_epi32(_mm512_loadu_si512(ci), y)
                          : _mm512_add_epi32(_mm512_mullo_epi32(_mm512_loadu_si512(ci), vb), y));
    }
}

// The configuration is per thread; loading it on every call cost ~10 % of a 2048-deep call.
void configure() {
  _tile_loadconfig(&kConfig);
}

// Leaves the tile state unused, so the OS need not save 8 KB of it at every context switch.
void release() {
  _tile_release();
}

// Four independent accumulators, each tile product 16 x 16 x (32 bf16 | 64 i8) multiply-adds;
// operands of small normal values (no flushed subnormals, no overflow over any run).
template <bool kInt8>
double tile_loop(std::int64_t iters, double* sink) {
  alignas(64) std::uint8_t src[1024];  // per thread: the probe runs one loop per core at once
  for (int i = 0; i < 1024; i += 2) {  // i8: 1; bf16: 2^-7 (0x3c00, little-endian)
    src[i] = kInt8 ? 1 : 0x00;
    src[i + 1] = kInt8 ? 1 : 0x3c;
  }
  _tile_loadconfig(&kConfig);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, src, 64);
  _tile_loadd(5, src, 64);
  _tile_loadd(6, src, 64);
  _tile_loadd(7, src, 64);
  for (std::int64_t i = 0; i < iters; ++i) {
    KAFEL_TILE_DOT(kInt8, 0, 4, 6);
    KAFEL_TILE_DOT(kInt8, 1, 4, 7);
    KAFEL_TILE_DOT(kInt8, 2, 5, 6);
    KAFEL_TILE_DOT(kInt8, 3, 5, 7);
  }
  alignas(64) float out[4][256];
  _tile_stored(0, out[0], 64);
  _tile_stored(1, out[1], 64);
  _tile_stored(2, out[2], 64);
  _tile_stored(3, out[3], 64);
  _tile_release();
  double s = 0;
  for (int t = 0; t < 4; ++t) {
    std::uint32_t bits;
    std::memcpy(&bits, &out[t][0], 4);
    s += double(bits);
  }
  *sink = s;
  return double(iters) * 4 * 16 * 16 * (kInt8 ? 64 : 32) * 2;
}

#undef KAFEL_TILE_DOT

}  // namespace

PeakLoop peak_loop_amx_bf16() {
  return &tile_loop<false>;
}
PeakLoop peak_loop_amx_i8() {
  return &tile_loop<true>;
}

Ukernel<std::uint16_t, float> ukernel_amx_bf16() {
  return {kMr, kNr, &ukernel_bf16, nullptr, &configure, &release};
}
Ukernel<std::int8_t, std::uint32_t> ukernel_amx_i8() {
  return {kMr, kNr, &ukernel_i8, nullptr, &configure, &release};
}

}  // namespace kafel::cpu

#else

namespace kafel::cpu {
PeakLoop peak_loop_amx_bf16() {
  return nullptr;
}
PeakLoop peak_loop_amx_i8() {
  return nullptr;
}
Ukernel<std::uint16_t, float> ukernel_amx_bf16() {
  return {};
}
Ukernel<std::int8_t, std::uint32_t> ukernel_amx_i8() {
  return {};
}
}  // namespace kafel::cpu

#endif
