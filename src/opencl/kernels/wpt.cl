// ocl.wpt (rung 4): TS x TS local tiles with WPT outputs per work-item (rows ty, ty+RTS, ...),
// so each value loaded from local memory feeds WPT multiply-adds. Work-group TS x (TS/WPT).
#define RTS (TS / WPT)
__kernel __attribute__((reqd_work_group_size(TS, RTS, 1)))
void gemm_wpt(int M, int N, int K, scal alpha, scal beta,
              __global const real* A, int ars, int acs,
              __global const real* B, int brs, int bcs,
              __global real* C, int ldc) {
  __local acc As[TS][TS];
  __local acc Bs[TS][TS];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int j = get_group_id(0) * TS + tx, i0 = get_group_id(1) * TS;
  acc sum[WPT];
  for (int w = 0; w < WPT; ++w) sum[w] = 0;
  for (int p0 = 0; p0 < K; p0 += TS) {
    for (int w = 0; w < WPT; ++w) {
      const int r = ty + w * RTS, i = i0 + r, pa = p0 + tx, pb = p0 + r;
      As[r][tx] = (i < M && pa < K) ? LD(A, i * ars + pa * acs) : (acc)0;
      Bs[r][tx] = (pb < K && j < N) ? LD(B, pb * brs + j * bcs) : (acc)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = 0; p < TS; ++p) {
      const acc b = Bs[p][tx];
      for (int w = 0; w < WPT; ++w) MAC(sum[w], As[ty + w * RTS][p], b);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int w = 0; w < WPT; ++w) {
    const int i = i0 + ty + w * RTS;
    if (i < M && j < N) store_c(C, i * ldc + j, sum[w], alpha, beta);
  }
}
