// Packing of A and B into the panel formats the micro-kernels read (see ukernel.hpp), with the
// conversion from the storage type (f16, bf16, fp8, int8, int32) to the compute type on the way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cpu/element.hpp"
#include "kafel/types.hpp"

namespace kafel::cpu {

constexpr int kMaxPackRows = 32;  // largest MR of the tile table (ukernel.hpp)

// One MR-row panel of op(A): rows [i0, i0+rows) x columns [p0, p0+kc) into dst[p*mr + r],
// rows past `rows` zero. A is m x k (lda) or, when `trans`, k x m.
template <DType D, class T, class S = typename Storage<D>::T>
void pack_a_panel(const S* a, std::int64_t lda, bool trans, std::int64_t i0, int rows,
                  std::int64_t p0, std::int64_t kc, int mr, T* dst) {
  if (trans) {
    for (std::int64_t p = 0; p < kc; ++p) {
      const S* src = a + (p0 + p) * lda + i0;
      T* d = dst + p * mr;
      for (int r = 0; r < rows; ++r) d[r] = load<T, D>(src[r]);
      for (int r = rows; r < mr; ++r) d[r] = T(0);
    }
    return;
  }
  // Row-major A: walk the MR rows side by side so every write is contiguous; the MR source
  // streams are sequential, which the prefetchers follow.
  const S* src[kMaxPackRows];
  for (int r = 0; r < rows; ++r) src[r] = a + (i0 + r) * lda + p0;
  for (std::int64_t p = 0; p < kc; ++p) {
    T* d = dst + p * mr;
    for (int r = 0; r < rows; ++r) d[r] = load<T, D>(src[r][p]);
    for (int r = rows; r < mr; ++r) d[r] = T(0);
  }
}

// One NR-column panel of op(B): rows [p0, p0+kc) x columns [j0, j0+cols) into dst[p*nr + j],
// columns past `cols` zero. B is k x n (ldb) or, when `trans`, n x k.
template <DType D, class T, class S = typename Storage<D>::T>
void pack_b_panel(const S* b, std::int64_t ldb, bool trans, std::int64_t p0, std::int64_t kc,
                  std::int64_t j0, int cols, int nr, T* dst) {
  if (!trans) {
    for (std::int64_t p = 0; p < kc; ++p) {
      const S* src = b + (p0 + p) * ldb + j0;
      T* d = dst + p * nr;
      for (int j = 0; j < cols; ++j) d[j] = load<T, D>(src[j]);
      for (int j = cols; j < nr; ++j) d[j] = T(0);
    }
    return;
  }
  // Transposed B: read each column of op(B) in short contiguous runs, so both the reads and
  // the writes stay within a few cache lines at a time.
  constexpr std::int64_t kRun = 16;
  for (std::int64_t q = 0; q < kc; q += kRun) {
    const std::int64_t run = std::min(kRun, kc - q);
    for (int j = 0; j < cols; ++j) {
      const S* src = b + (j0 + j) * ldb + p0 + q;
      for (std::int64_t p = 0; p < run; ++p) dst[(q + p) * nr + j] = load<T, D>(src[p]);
    }
    for (std::int64_t p = 0; p < run; ++p)
      for (int j = cols; j < nr; ++j) dst[(q + p) * nr + j] = T(0);
  }
}

}  // namespace kafel::cpu
