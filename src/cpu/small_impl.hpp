// The body of the direct small-matrix GEMM, written once over a vector-traits class V (the ISA
// files supply it): register tiles of up to 8 rows x 2 vectors read A by broadcasts and B by
// unaligned row loads, so nothing is copied; columns left over after whole vectors go through a
// scalar tile.
#pragma once

#include <cstdint>

namespace kafel::cpu::small {

// V must provide: T, R, lanes, rows (the tallest tile, 4 or 8), zero(), loadu(p), storeu(p, r),
// set1(x), madd(a, b, acc) = a * b + acc, mul(a, b).
template <class V, int MR, int NV>
inline void tile(std::int64_t k, const typename V::T* a, std::int64_t ars, std::int64_t acs,
                 const typename V::T* b, std::int64_t ldb, typename V::T* c, std::int64_t ldc,
                 typename V::T alpha, typename V::T beta) {
  using R = typename V::R;
  constexpr int L = V::lanes;
  R acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = V::zero();
  for (std::int64_t p = 0; p < k; ++p) {
    R bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = V::loadu(b + p * ldb + v * L);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const R ar = V::set1(a[r * ars + p * acs]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = V::madd(ar, bv[v], acc[r][v]);
    }
  }
  const R va = V::set1(alpha);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      typename V::T* cp = c + r * ldc + v * L;
      const R out = beta == typename V::T(0)
                        ? V::mul(acc[r][v], va)
                        : V::madd(acc[r][v], va, V::mul(V::loadu(cp), V::set1(beta)));
      V::storeu(cp, out);
    }
}

// Every row of one column strip (NV vectors wide): tiles of V::rows rows (8 where 32 vector
// registers hold 16 accumulators: 32^3 / 64^3 f32 2-5 % faster than 4 on an Emerald Rapids),
// then of 4, then the 1-3 left.
template <class V, int NV>
inline void strip(std::int64_t m, std::int64_t k, const typename V::T* a, std::int64_t ars,
                  std::int64_t acs, const typename V::T* b, std::int64_t ldb, typename V::T* c,
                  std::int64_t ldc, typename V::T alpha, typename V::T beta) {
  std::int64_t i = 0;
  if constexpr (V::rows > 4)
    for (; i + V::rows <= m; i += V::rows)
      tile<V, V::rows, NV>(k, a + i * ars, ars, acs, b, ldb, c + i * ldc, ldc, alpha, beta);
  for (; i + 4 <= m; i += 4)
    tile<V, 4, NV>(k, a + i * ars, ars, acs, b, ldb, c + i * ldc, ldc, alpha, beta);
  const std::int64_t left = m - i;
  const auto* ai = a + i * ars;
  auto* ci = c + i * ldc;
  if (left == 3) tile<V, 3, NV>(k, ai, ars, acs, b, ldb, ci, ldc, alpha, beta);
  if (left == 2) tile<V, 2, NV>(k, ai, ars, acs, b, ldb, ci, ldc, alpha, beta);
  if (left == 1) tile<V, 1, NV>(k, ai, ars, acs, b, ldb, ci, ldc, alpha, beta);
}

// Columns [0, n) that do not fill a vector: one scalar dot product per element.
template <class T>
inline void scalar_columns(std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
                           std::int64_t ars, std::int64_t acs, const T* b, std::int64_t ldb, T* c,
                           std::int64_t ldc, T alpha, T beta) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      T s = 0;
      for (std::int64_t p = 0; p < k; ++p) s += a[i * ars + p * acs] * b[p * ldb + j];
      T* cp = c + i * ldc + j;
      *cp = beta == T(0) ? alpha * s : alpha * s + beta * *cp;
    }
}

// The whole matrix: strips of two vectors, one vector, then the scalar columns.
template <class V>
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const typename V::T* a, std::int64_t ars,
          std::int64_t acs, const typename V::T* b, std::int64_t ldb, typename V::T* c,
          std::int64_t ldc, typename V::T alpha, typename V::T beta) {
  constexpr int L = V::lanes;
  std::int64_t j = 0;
  for (; j + 2 * L <= n; j += 2 * L)
    strip<V, 2>(m, k, a, ars, acs, b + j, ldb, c + j, ldc, alpha, beta);
  for (; j + L <= n; j += L) strip<V, 1>(m, k, a, ars, acs, b + j, ldb, c + j, ldc, alpha, beta);
  if (j < n) scalar_columns(m, n - j, k, a, ars, acs, b + j, ldb, c + j, ldc, alpha, beta);
}

}  // namespace kafel::cpu::small
