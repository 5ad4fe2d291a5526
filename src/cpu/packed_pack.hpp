// Packing of A and B into the panel formats the micro-kernels read (see ukernel.hpp), with the
// conversion from the storage type (f16, bf16, fp8, int8, int32) to the packed type on the way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "cpu/element.hpp"
#include "cpu/ukernel.hpp"
#include "kafel/types.hpp"

namespace kafel::cpu {

constexpr int kMaxPackRows = 32;  // largest MR of the tile table (ukernel.hpp)

// Packed value type P and compute type T of each format.
template <Format F>
struct FormatTypes;
template <>
struct FormatTypes<Format::f32> {
  using P = float;
  using T = float;
};
template <>
struct FormatTypes<Format::f64> {
  using P = double;
  using T = double;
};
template <>
struct FormatTypes<Format::u32> {
  using P = std::uint32_t;
  using T = std::uint32_t;
};
template <>
struct FormatTypes<Format::bf16x2> {
  using P = std::uint16_t;
  using T = float;
};
template <>
struct FormatTypes<Format::i16x2> {
  using P = std::int16_t;
  using T = std::uint32_t;
};
template <>
struct FormatTypes<Format::u8s8x4> {
  using P = std::uint8_t;
  using T = std::uint32_t;
};
template <>
struct FormatTypes<Format::amx_bf16> {
  using P = std::uint16_t;
  using T = float;
};
template <>
struct FormatTypes<Format::amx_i8> {
  using P = std::int8_t;
  using T = std::uint32_t;
};

// The micro-kernel of format F in a set.
template <Format F>
const auto& pick_ukernel(const UkernelSet& s) {
  if constexpr (F == Format::f32) return s.f32;
  if constexpr (F == Format::f64) return s.f64;
  if constexpr (F == Format::u32) return s.u32;
  if constexpr (F == Format::bf16x2) return s.bf16x2;
  if constexpr (F == Format::i16x2) return s.i16x2;
  if constexpr (F == Format::u8s8x4) return s.u8s8x4;
  if constexpr (F == Format::amx_bf16) return s.amx_bf16;
  if constexpr (F == Format::amx_i8) return s.amx_i8;
}

// Packing of storage D into format F. Panels: A rows [i0, i0+rows) x depth [p0, p0+kc) of
// op(A) (A is m x k with lda, or k x m when `trans`); B depth [p0, p0+kc) x columns [j0,
// j0+cols) of op(B) (k x n with ldb, or n x k when `trans`). Rows / columns / k past the
// matrix are zero.
template <DType D, Format F>
struct Pack {
  using S = typename Storage<D>::T;
  using P = typename FormatTypes<F>::P;
  static constexpr int G = format_group(F);
  static constexpr int K = format_kstep(F);  // k values a panel is padded to
  static constexpr bool kCorrected = F == Format::u8s8x4;
  static constexpr bool kTiles = format_is_amx(F);

  // Groups of a panel, k padded to whole steps of K.
  static std::int64_t groups(std::int64_t kc) { return (kc + K - 1) / K * (K / G); }
  // Elements of P in one packed panel (B: with the int32 corrections of u8s8x4).
  static std::int64_t a_panel(int mr, std::int64_t kc) { return groups(kc) * mr * G; }
  static std::int64_t b_panel(int nr, std::int64_t kc) {
    return groups(kc) * nr * G + (kCorrected ? nr * std::int64_t(sizeof(std::int32_t)) : 0);
  }

  static P to_a(S v) {
    if constexpr (F == Format::bf16x2 || F == Format::amx_bf16) return v;  // bf16 bits as is
    if constexpr (F == Format::amx_i8) return v;                           // int8 as is
    if constexpr (F == Format::i16x2) return static_cast<std::int16_t>(v);
    if constexpr (F == Format::u8s8x4) return static_cast<std::uint8_t>(std::int32_t(v) + 128);
    if constexpr (format_group(F) == 1) return load<P, D>(v);
  }
  static P to_b(S v) {
    if constexpr (F == Format::u8s8x4) return static_cast<std::uint8_t>(v);  // int8 bits
    return to_a(v);
  }

  // bf16 pairs and i8 quads: a group of one row of A (or one column of B) is one 32-bit word
  // holding the stored bits (i8 A: each byte + 128, an xor with 0x80), so packing moves words.
  static constexpr bool kWordGroups = (F == Format::bf16x2 || F == Format::u8s8x4 || kTiles) &&
                                      sizeof(S) == sizeof(P) && G * sizeof(S) == 4;

  static void a(const S* a, std::int64_t lda, bool trans, std::int64_t i0, int rows,
                std::int64_t p0, std::int64_t kc, int mr, P* dst) {
    if constexpr (kTiles) {
      tile_a(a, lda, trans, i0, rows, p0, kc, mr, dst);
    } else {
      if constexpr (G == 1)
        plain_a(a, lda, trans, i0, rows, p0, kc, mr, dst);
      else if constexpr (kWordGroups)
        if (!trans) return word_a(a, lda, i0, rows, p0, kc, mr, dst);
      if constexpr (G > 1) grouped_a(a, lda, trans, i0, rows, p0, kc, mr, dst);
    }
  }

  // All NR-column panels of columns [j0, j0 + ncols) (each b_panel(nr, kc) long).
  static void b_block(const S* b, std::int64_t ldb, bool trans, std::int64_t p0, std::int64_t kc,
                      std::int64_t j0, std::int64_t ncols, int nr, P* dst) {
    if constexpr (G == 1) {
      if (!trans) return plain_b_rows(b, ldb, p0, kc, j0, ncols, nr, dst);
    } else if constexpr (kWordGroups) {
      if (!trans) return word_b_rows(b, ldb, p0, kc, j0, ncols, nr, dst);
    }
    for (std::int64_t jr = 0; jr < ncols; jr += nr) {
      const int cols = int(std::min<std::int64_t>(nr, ncols - jr));
      P* d = dst + jr / nr * b_panel(nr, kc);
      if constexpr (G == 1)
        plain_b_trans(b, ldb, p0, kc, j0 + jr, cols, nr, d);
      else
        grouped_b(b, ldb, trans, p0, kc, j0 + jr, cols, nr, d);
    }
  }

 private:
  static void plain_a(const S* a, std::int64_t lda, bool trans, std::int64_t i0, int rows,
                      std::int64_t p0, std::int64_t kc, int mr, P* dst) {
    if (trans) {
      for (std::int64_t p = 0; p < kc; ++p) {
        const S* src = a + (p0 + p) * lda + i0;
        P* d = dst + p * mr;
        for (int r = 0; r < rows; ++r) d[r] = to_a(src[r]);
        for (int r = rows; r < mr; ++r) d[r] = P(0);
      }
      return;
    }
    if constexpr (kTransposable)
      if (rows == mr && mr % 2 == 0) return transpose_rows(a + i0 * lda + p0, lda, kc, mr, dst);
    // Row-major A: walk the MR rows side by side so every write is contiguous; the MR source
    // streams are sequential, which the prefetchers follow.
    const S* src[kMaxPackRows];
    for (int r = 0; r < rows; ++r) src[r] = a + (i0 + r) * lda + p0;
    for (std::int64_t p = 0; p < kc; ++p) {
      P* d = dst + p * mr;
      for (int r = 0; r < rows; ++r) d[r] = to_a(src[r][p]);
      for (int r = rows; r < mr; ++r) d[r] = P(0);
    }
  }

  // Row-major A panels that transpose_rows packs: f32 / f64 as they are, bf16 widened to f32
  // on the way (a shift into the top half; plain_a's scalar loop cost bf16 -> f32 GEMMs ~10 %
  // of their time at 2048^3 where bf16 runs on the f32 FMA).
  static constexpr bool kTransposable =
      (std::is_same_v<S, P> && (std::is_same_v<P, float> || std::is_same_v<P, double>)) ||
      (D == DType::bf16 && std::is_same_v<P, float>);

#if defined(__SSE2__)
  // Four consecutive values of a row as floats.
  static __m128 load4(const S* p) {
    if constexpr (std::is_same_v<S, float>) {
      return _mm_loadu_ps(p);
    } else {  // bf16: each 16-bit value becomes the top half of its float
      const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
      return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), x));
    }
  }
#endif

  // A full panel of row-major A (kTransposable): MR rows of kc values into kc groups of MR,
  // transposed in SSE registers (x86-64's baseline, so every ISA shares it): f64 two rows x
  // two k at a time, f32 four x four (and a pair of rows). The tail of k goes scalar.
  static void transpose_rows(const S* a, std::int64_t lda, std::int64_t kc, int mr, P* dst) {
    std::int64_t p = 0;
#if defined(__SSE2__)
    if constexpr (std::is_same_v<P, double>) {
      for (; p + 2 <= kc; p += 2)
        for (int r = 0; r < mr; r += 2) {
          const __m128d x = _mm_loadu_pd(a + r * lda + p), y = _mm_loadu_pd(a + (r + 1) * lda + p);
          _mm_storeu_pd(dst + p * mr + r, _mm_unpacklo_pd(x, y));
          _mm_storeu_pd(dst + (p + 1) * mr + r, _mm_unpackhi_pd(x, y));
        }
    } else {
      for (; p + 4 <= kc; p += 4) {
        int r = 0;
        for (; r + 4 <= mr; r += 4) {
          __m128 x0 = load4(a + r * lda + p), x1 = load4(a + (r + 1) * lda + p);
          __m128 x2 = load4(a + (r + 2) * lda + p), x3 = load4(a + (r + 3) * lda + p);
          _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
          _mm_storeu_ps(dst + p * mr + r, x0);
          _mm_storeu_ps(dst + (p + 1) * mr + r, x1);
          _mm_storeu_ps(dst + (p + 2) * mr + r, x2);
          _mm_storeu_ps(dst + (p + 3) * mr + r, x3);
        }
        if (r < mr) {  // mr % 4 == 2: the last two rows as (x[k], y[k]) pairs
          const __m128 x = load4(a + r * lda + p), y = load4(a + (r + 1) * lda + p);
          const __m128 lo = _mm_unpacklo_ps(x, y), hi = _mm_unpackhi_ps(x, y);
          _mm_storel_pi(reinterpret_cast<__m64*>(dst + p * mr + r), lo);
          _mm_storeh_pi(reinterpret_cast<__m64*>(dst + (p + 1) * mr + r), lo);
          _mm_storel_pi(reinterpret_cast<__m64*>(dst + (p + 2) * mr + r), hi);
          _mm_storeh_pi(reinterpret_cast<__m64*>(dst + (p + 3) * mr + r), hi);
        }
      }
    }
#endif
    for (; p < kc; ++p)
      for (int r = 0; r < mr; ++r) dst[p * mr + r] = to_a(a[r * lda + p]);
  }

  // Row-major B: each row of the block is read once, contiguously, and its NR-wide pieces go
  // to their panels (panel by panel, every row would be a separate cache line and page).
  static void plain_b_rows(const S* b, std::int64_t ldb, std::int64_t p0, std::int64_t kc,
                           std::int64_t j0, std::int64_t ncols, int nr, P* dst) {
    const std::int64_t panel = b_panel(nr, kc), full = ncols / nr * nr;
    const std::int64_t row_bytes = ncols * std::int64_t(sizeof(S));
    for (std::int64_t p = 0; p < kc; ++p) {
      const S* src = b + (p0 + p) * ldb + j0;
#if defined(__SSE2__)
      // Every row starts on another page, where the hardware prefetchers stop: fetch the row
      // kRowsAhead below while this one is copied (measured: the copy was waiting on loads).
      if (p + kRowsAhead < kc) {
        const char* ahead = reinterpret_cast<const char*>(src + kRowsAhead * ldb);
        for (std::int64_t x = 0; x < row_bytes; x += 64) _mm_prefetch(ahead + x, _MM_HINT_T0);
      }
#endif
      P* d = dst + p * nr;
      for (std::int64_t jr = 0; jr < full; jr += nr, d += panel)
        for (int j = 0; j < nr; ++j) d[j] = to_b(src[jr + j]);
      if (full < ncols) {
        const int cols = int(ncols - full);
        for (int j = 0; j < cols; ++j) d[j] = to_b(src[full + j]);
        for (int j = cols; j < nr; ++j) d[j] = P(0);
      }
    }
  }

  // Transposed B: read each column of op(B) in short contiguous runs, so both the reads and
  // the writes stay within a few cache lines at a time.
  static void plain_b_trans(const S* b, std::int64_t ldb, std::int64_t p0, std::int64_t kc,
                            std::int64_t j0, int cols, int nr, P* dst) {
    constexpr std::int64_t kRun = 16;
    for (std::int64_t q = 0; q < kc; q += kRun) {
      const std::int64_t run = std::min(kRun, kc - q);
      for (int j = 0; j < cols; ++j) {
        const S* src = b + (j0 + j) * ldb + p0 + q;
        for (std::int64_t p = 0; p < run; ++p) dst[(q + p) * nr + j] = to_b(src[p]);
      }
      for (std::int64_t p = 0; p < run; ++p)
        for (int j = cols; j < nr; ++j) dst[(q + p) * nr + j] = P(0);
    }
  }

  // Row-major A in word groups: the panel is a transpose of 32-bit words (the scalar loop
  // below, a division and a branch per byte, took a fifth of an i8 2048^3 GEMM).
  static void word_a(const S* a, std::int64_t lda, std::int64_t i0, int rows, std::int64_t p0,
                     std::int64_t kc, int mr, P* dst) {
    constexpr std::uint32_t flip = kCorrected ? 0x80808080u : 0u;
    const std::int64_t full = kc / G;
    const S* src[kMaxPackRows];
    for (int r = 0; r < rows; ++r) src[r] = a + (i0 + r) * lda + p0;
    for (std::int64_t q = 0; q < full; ++q) {
      P* d = dst + q * mr * G;
      for (int r = 0; r < rows; ++r) {
        std::uint32_t w;
        std::memcpy(&w, src[r] + q * G, 4);
        w ^= flip;
        std::memcpy(d + r * G, &w, 4);
      }
      std::memset(d + rows * G, 0, std::size_t(mr - rows) * 4);
    }
    if (full * G < kc) {  // the last, partial group: its missing k are zero
      P* d = dst + full * mr * G;
      std::memset(d, 0, std::size_t(mr) * 4);
      for (int r = 0; r < rows; ++r)
        for (std::int64_t p = full * G; p < kc; ++p) d[r * G + p % G] = to_a(src[r][p]);
    }
  }

  // Row-major B in word groups: per group, G rows of the block are read once, contiguously,
  // and interleaved into every panel (dst[(q * nr + j) * G + g] = B(p0 + q * G + g, j0 + j)),
  // then the corrections of u8s8x4 as column sums. Columns past ncols and k past kc are zero.
  static void word_b_rows(const S* b, std::int64_t ldb, std::int64_t p0, std::int64_t kc,
                          std::int64_t j0, std::int64_t ncols, int nr, P* dst) {
    const std::int64_t panel = b_panel(nr, kc), ng = groups(kc);
    const std::int64_t panels = (ncols + nr - 1) / nr;
    if (ncols % nr != 0 || kc % K != 0)
      for (std::int64_t jp = 0; jp < panels; ++jp)
        std::memset(dst + jp * panel, 0, sizeof(P) * std::size_t(ng * nr * G));
    const std::int64_t row_bytes = ncols * std::int64_t(sizeof(S));
    for (std::int64_t q = 0; q < ng; ++q) {
      const S* row[G];
      const int have = int(std::min<std::int64_t>(G, kc - q * G));
      for (int g = 0; g < G; ++g) row[g] = g < have ? b + (p0 + q * G + g) * ldb + j0 : nullptr;
#if defined(__SSE2__)
      // As in plain_b_rows: each row is on another page, fetch those kRowsAhead below now.
      if ((q + 1) * G + kRowsAhead <= kc)
        for (int g = 0; g < G; ++g) {
          const char* ahead = reinterpret_cast<const char*>(row[g] + kRowsAhead * ldb);
          for (std::int64_t x = 0; x < row_bytes; x += 64) _mm_prefetch(ahead + x, _MM_HINT_T0);
        }
#endif
      for (std::int64_t jp = 0; jp < panels; ++jp) {
        const int cols = int(std::min<std::int64_t>(nr, ncols - jp * nr));
        P* d = dst + jp * panel + q * nr * G;
        int j = 0;
        if (have == G) j = interleave(row, jp * nr, cols, d);
        for (; j < cols; ++j)
          for (int g = 0; g < have; ++g) d[j * G + g] = to_b(row[g][jp * nr + j]);
      }
    }
    if constexpr (kCorrected) {
      std::uint32_t corr[kMaxPackCols];
      for (std::int64_t jp = 0; jp < panels; ++jp) {
        const int cols = int(std::min<std::int64_t>(nr, ncols - jp * nr));
        for (int j = 0; j < nr; ++j) corr[j] = 0;  // wraps like the GEMM (KC may be huge)
        for (std::int64_t p = 0; p < kc; ++p) {
          const S* src = b + (p0 + p) * ldb + j0 + jp * nr;
          for (int j = 0; j < cols; ++j) corr[j] += std::uint32_t(std::int32_t(src[j]));
        }
        for (int j = 0; j < nr; ++j) corr[j] *= 128u;
        std::memcpy(dst + jp * panel + ng * nr * G, corr, sizeof(std::uint32_t) * nr);
      }
    }
  }

  // The SSE2 part of word_b_rows: whole 16-byte pieces of the G rows, interleaved by unpacking
  // (i8: bytes, then 16-bit pairs; bf16: 16-bit values). Returns the columns done.
  static int interleave(const S* const* row, std::int64_t c0, int cols, P* d) {
    int j = 0;
#if defined(__SSE2__)
    constexpr int step = 16 / int(sizeof(S));  // columns per 16-byte load
    for (; j + step <= cols; j += step) {
      auto* out = reinterpret_cast<__m128i*>(d + j * G);
      if constexpr (G == 4) {
        const __m128i r0 = load16(row[0] + c0 + j), r1 = load16(row[1] + c0 + j);
        const __m128i r2 = load16(row[2] + c0 + j), r3 = load16(row[3] + c0 + j);
        const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
        const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
        _mm_storeu_si128(out + 0, _mm_unpacklo_epi16(lo01, lo23));
        _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(lo01, lo23));
        _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(hi01, hi23));
        _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(hi01, hi23));
      } else {
        const __m128i r0 = load16(row[0] + c0 + j), r1 = load16(row[1] + c0 + j);
        _mm_storeu_si128(out + 0, _mm_unpacklo_epi16(r0, r1));
        _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(r0, r1));
      }
    }
#else
    (void)row;
    (void)c0;
    (void)cols;
    (void)d;
#endif
    return j;
  }
#if defined(__SSE2__)
  static __m128i load16(const S* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
#endif

  // AMX A: per k step of K values, the rows side by side, each K values (64 bytes) long:
  // dst[(s * mr + r) * K + x] = op(A)(i0 + r, p0 + s * K + x), zero past rows and kc.
  static void tile_a(const S* a, std::int64_t lda, bool trans, std::int64_t i0, int rows,
                     std::int64_t p0, std::int64_t kc, int mr, P* dst) {
    const std::int64_t steps = (kc + K - 1) / K;
    if (rows < mr || kc % K != 0) std::memset(dst, 0, sizeof(P) * std::size_t(steps * mr * K));
    if (trans) {  // op(A)(i, p) = a[p * lda + i]: each k reads a contiguous run of the rows
      for (std::int64_t p = 0; p < kc; ++p) {
        const S* src = a + (p0 + p) * lda + i0;
        P* d = dst + p / K * mr * K + p % K;
        for (int r = 0; r < rows; ++r) d[r * K] = to_a(src[r]);
      }
      return;
    }
    for (int r = 0; r < rows; ++r) {
      const S* src = a + (i0 + r) * lda + p0;
      const std::int64_t full = kc / K;
      for (std::int64_t s = 0; s < full; ++s)  // a constant size: inlined as vector moves
        std::memcpy(dst + (s * mr + r) * K, src + s * K, sizeof(S) * K);
      if (full * K < kc)
        std::memcpy(dst + (full * mr + r) * K, src + full * K, sizeof(S) * std::size_t(kc % K));
    }
  }

  // Grouped A: dst[(q * mr + r) * G + g] = op(A)(i0 + r, p0 + q * G + g).
  static void grouped_a(const S* a, std::int64_t lda, bool trans, std::int64_t i0, int rows,
                        std::int64_t p0, std::int64_t kc, int mr, P* dst) {
    const std::int64_t ng = groups(kc);
    std::fill(dst, dst + ng * mr * G, P(0));
    for (int r = 0; r < rows; ++r)
      for (std::int64_t p = 0; p < kc; ++p) {
        const S v = trans ? a[(p0 + p) * lda + i0 + r] : a[(i0 + r) * lda + p0 + p];
        dst[(p / G * mr + r) * G + p % G] = to_a(v);
      }
  }

  // Grouped B: dst[(q * nr + j) * G + g] = op(B)(p0 + q * G + g, j0 + j), then for u8s8x4 the
  // int32 corrections 128 x sum_p op(B)(p, j) (the +128 that packing adds to A, taken back).
  static void grouped_b(const S* b, std::int64_t ldb, bool trans, std::int64_t p0, std::int64_t kc,
                        std::int64_t j0, int cols, int nr, P* dst) {
    const std::int64_t ng = groups(kc);
    std::fill(dst, dst + b_panel(nr, kc), P(0));
    std::uint32_t corr[kMaxPackCols] = {};  // wraps like the GEMM (KC may be huge)
    for (std::int64_t p = 0; p < kc; ++p)
      for (int j = 0; j < cols; ++j) {
        const S v = trans ? b[(j0 + j) * ldb + p0 + p] : b[(p0 + p) * ldb + j0 + j];
        dst[(p / G * nr + j) * G + p % G] = to_b(v);
        if constexpr (kCorrected) corr[j] += 128u * static_cast<std::uint32_t>(std::int32_t(v));
      }
    if constexpr (kCorrected) std::memcpy(dst + ng * nr * G, corr, sizeof(std::uint32_t) * nr);
  }

 public:
  static constexpr int kMaxPackCols = 128;       // largest NR of the tile table
  static constexpr std::int64_t kRowsAhead = 8;  // rows of B prefetched ahead while packing
};

}  // namespace kafel::cpu
