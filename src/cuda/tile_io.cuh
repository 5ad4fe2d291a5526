// Global -> shared movement of the A and B tiles for the software-pipelined rung (pipelined.cu)
// and its alpha/beta epilogue. A tile config C supplies: type, BM, BN, BK, NT, V, AROW, ALD,
// A_VECS, B_VECS (see pipelined.cu's Config).
#pragma once

#include "cuda/gemm_common.cuh"
#include "cuda/vec.cuh"

namespace kafel::cuda::tile {

// Where the i-th vector a thread moves sits in the tile. A (BM x BK, row-major in global
// memory): AROW = true puts consecutive lanes on consecutive 16-byte chunks of a row
// (coalesced), AROW = false on consecutive rows (conflict-free transposed stores).
template <class C>
__device__ __forceinline__ int a_row(int i) {
  const int idx = threadIdx.x + i * C::NT;
  return C::AROW ? idx / (C::BK / C::V) : idx % C::BM;
}
template <class C>
__device__ __forceinline__ int a_col(int i) {
  const int idx = threadIdx.x + i * C::NT;
  return C::AROW ? idx % (C::BK / C::V) * C::V : idx / C::BM * C::V;
}
template <class C>
__device__ __forceinline__ int b_row(int i) {
  return (threadIdx.x + i * C::NT) / (C::BN / C::V);
}
template <class C>
__device__ __forceinline__ int b_col(int i) {
  return (threadIdx.x + i * C::NT) % (C::BN / C::V) * C::V;
}

// A thread's global addresses for its tile vectors, fixed for the whole k loop: vector i of the
// tile at k0 is at a + k0 + i * a_step (A) and b + k0 * ldb + i * b_step (B). The interior fast
// path uses only these, so a k-tile costs a few address adds instead of per-vector bounds math.
template <class C>
struct Cursor {
  using T = typename C::type;
  static_assert(C::AROW ? C::NT % (C::BK / C::V) == 0 : C::NT % C::BM == 0,
                "A vectors of one thread must share a column (AROW) or a row");
  static_assert(C::NT % (C::BN / C::V) == 0, "B vectors of one thread must share a column");
  const T* a;
  const T* b;
  long long a_step, b_step, ldb;

  __device__ __forceinline__ Cursor(const Operands<T>& g, int bm, int bn)
      : a(g.a + static_cast<long long>(bm + a_row<C>(0)) * g.lda + a_col<C>(0)),
        b(g.b + static_cast<long long>(b_row<C>(0)) * g.ldb + bn + b_col<C>(0)),
        a_step(C::AROW ? static_cast<long long>(C::NT / (C::BK / C::V)) * g.lda
                       : (C::NT / C::BM) * C::V),
        b_step(static_cast<long long>(C::NT / (C::BN / C::V)) * g.ldb),
        ldb(g.ldb) {}
};

// A vector at tile row r, column c, zero outside A.
template <class C>
__device__ __forceinline__ Vec<typename C::type> load_a_guarded(const Operands<typename C::type>& g,
                                                                int r, int c) {
  return load_guarded(g.a, g.lda, r, c, g.m, g.k, r < g.m && c + C::V <= g.k);
}

// Stages the A tile at (bm, k0) in registers. `full`: the tile lies inside A.
template <class C>
__device__ __forceinline__ void fetch_a(const Operands<typename C::type>& g, const Cursor<C>& cur,
                                        int bm, int k0, bool full,
                                        Vec<typename C::type> (&st)[C::A_VECS]) {
  if (full) {
#pragma unroll
    for (int i = 0; i < C::A_VECS; ++i) st[i] = load_vec(cur.a + k0 + i * cur.a_step);
    return;
  }
#pragma unroll
  for (int i = 0; i < C::A_VECS; ++i)
    st[i] = load_a_guarded<C>(g, bm + a_row<C>(i), k0 + a_col<C>(i));
}

// Stores the staged A tile k-major: As[c * ALD + r] = A(bm + r, k0 + c).
template <class C>
__device__ __forceinline__ void store_a(typename C::type* As,
                                        const Vec<typename C::type> (&st)[C::A_VECS]) {
#pragma unroll
  for (int i = 0; i < C::A_VECS; ++i) {
    const int r = a_row<C>(i), c = a_col<C>(i);
#pragma unroll
    for (int v = 0; v < C::V; ++v) As[(c + v) * C::ALD + r] = st[i].v[v];
  }
}

// B tile (BK x BN at k0, bn) into Bs by cp.async. `full`: the tile lies inside B; otherwise
// the parts outside are zero-filled (src-size < 16).
template <class C>
__device__ __forceinline__ void fetch_b(const Operands<typename C::type>& g, const Cursor<C>& cur,
                                        typename C::type* Bs, int bn, int k0, bool full) {
  using T = typename C::type;
  if (full) {
    const T* src = cur.b + k0 * cur.ldb;
#pragma unroll
    for (int i = 0; i < C::B_VECS; ++i)
      cp_async16_full(Bs + b_row<C>(i) * C::BN + b_col<C>(i), src + i * cur.b_step);
    return;
  }
#pragma unroll
  for (int i = 0; i < C::B_VECS; ++i) {
    const int r = b_row<C>(i), c = b_col<C>(i);
    const int gr = k0 + r, gc = bn + c;
    const int valid = gr < g.k ? max(0, min(C::V, g.n - gc)) : 0;
    const T* src = valid > 0 ? g.b + static_cast<long long>(gr) * g.ldb + gc : g.b;
    cp_async16(Bs + r * C::BN + c, src, valid * int(sizeof(T)));
  }
}

// C(i, j..j+3) = alpha * acc + beta * C: 16-byte accesses when all 4 are inside C (ldc and C
// are 16-byte aligned by the plan), element-wise at the right edge. beta = 0 never reads C.
template <class T>
__device__ __forceinline__ void store4(const Operands<T>& g, int i, int j, const T* acc) {
  constexpr int V = Vec<T>::N;
  T* p = g.c + static_cast<long long>(i) * g.ldc + j;
  if (j + 4 <= g.n) {
#pragma unroll
    for (int q = 0; q < 4; q += V) {
      Vec<T> x;
      if (!g.beta_zero) x = load_vec(p + q);
#pragma unroll
      for (int v = 0; v < V; ++v)
        x.v[v] =
            g.beta_zero ? mul(g.alpha, acc[q + v]) : mad(g.beta, x.v[v], mul(g.alpha, acc[q + v]));
      store_vec(p + q, x);
    }
  } else {
#pragma unroll
    for (int q = 0; q < 4; ++q)
      if (j + q < g.n) g.store(i, j + q, acc[q]);
  }
}

}  // namespace kafel::cuda::tile
