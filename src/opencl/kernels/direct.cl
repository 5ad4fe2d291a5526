// ocl.direct (rung 8): the "direct" kernel for small and odd sizes: no pre-pass, no padded copies.
// A work-group computes a TS x TS tile of C, each work-item a WPT x WPT block; TK-deep slices of A
// and B are staged in local memory with guarded loads, read along whichever direction is contiguous
// in global memory (so transposed operands stay coalesced).
#define RT (TS / WPT)
__kernel __attribute__((reqd_work_group_size(RT, RT, 1)))
void gemm_direct(int M, int N, int K, scal alpha, scal beta,
                 __global const real* A, int ars, int acs,
                 __global const real* B, int brs, int bcs,
                 __global real* C, int ldc) {
  __local acc As[TK][TS + 1];  // As[p][row]
  __local acc Bs[TK][TS + 1];  // Bs[p][col]
  const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * RT + tx;
  const int i0 = get_group_id(1) * TS, j0 = get_group_id(0) * TS;
  acc c[WPT][WPT];
  for (int u = 0; u < WPT; ++u)
    for (int v = 0; v < WPT; ++v) c[u][v] = 0;
  for (int p0 = 0; p0 < K; p0 += TK) {
    for (int idx = tid; idx < TS * TK; idx += RT * RT) {
      int r, p;
      if (acs == 1) { r = idx / TK; p = idx % TK; } else { p = idx / TS; r = idx % TS; }
      const int i = i0 + r, pp = p0 + p;
      As[p][r] = (i < M && pp < K) ? LD(A, i * ars + pp * acs) : (acc)0;
    }
    for (int idx = tid; idx < TS * TK; idx += RT * RT) {
      int q, p;
      if (bcs == 1) { p = idx / TS; q = idx % TS; } else { q = idx / TK; p = idx % TK; }
      const int j = j0 + q, pp = p0 + p;
      Bs[p][q] = (j < N && pp < K) ? LD(B, pp * brs + j * bcs) : (acc)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = 0; p < TK; ++p) {
      acc a[WPT], b[WPT];
      for (int u = 0; u < WPT; ++u) a[u] = As[p][ty + u * RT];
      for (int v = 0; v < WPT; ++v) b[v] = Bs[p][tx + v * RT];
      for (int u = 0; u < WPT; ++u)
        for (int v = 0; v < WPT; ++v) MAC(c[u][v], a[u], b[v]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int u = 0; u < WPT; ++u) {
    const int i = i0 + ty + u * RT;
    if (i >= M) continue;
    for (int v = 0; v < WPT; ++v) {
      const int j = j0 + tx + v * RT;
      if (j < N) store_c(C, i * ldc + j, c[u][v], alpha, beta);
    }
  }
}
