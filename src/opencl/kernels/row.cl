// ocl.row (rung 2): one row of C per work-item with a chunk of the A row held in private memory
// (the Chinese case study fixed the row at k = 1000; here KCH elements at a time, so any k works).
// Partial sums of later chunks are added into C, so C holds alpha*sum + beta*C0 at the end.
// Storage narrower than the accumulator (f16 or bf16 with float arithmetic) would round every
// partial sum kept in C: there, beyond one chunk, each element's whole sum stays in acc.
#if (defined(KAFEL_STORE_F16) || defined(KAFEL_STORE_BF16)) && defined(KAFEL_COMPUTE_F32)
#define NARROW_C 1
#else
#define NARROW_C 0
#endif
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemm_row(int M, int N, int K, scal alpha, scal beta,
              __global const real* A, int ars, int acs,
              __global const real* B, int brs, int bcs,
              __global real* C, int ldc) {
  const int i = get_global_id(0);
  if (i >= M) return;
#if NARROW_C
  if (K > KCH) {
    for (int j = 0; j < N; ++j) {
      acc sum = 0;
      for (int p = 0; p < K; ++p) MAC(sum, LD(A, i * ars + p * acs), LD(B, p * brs + j * bcs));
      store_c(C, i * ldc + j, sum, alpha, beta);
    }
    return;
  }
#endif
  acc arow[KCH];
  for (int p0 = 0; p0 < K; p0 += KCH) {
    const int len = min(KCH, K - p0);
    for (int p = 0; p < len; ++p) arow[p] = LD(A, i * ars + (p0 + p) * acs);
    for (int j = 0; j < N; ++j) {
      acc sum = 0;
      for (int p = 0; p < len; ++p) MAC(sum, arow[p], LD(B, (p0 + p) * brs + j * bcs));
      if (p0 == 0) {
        store_c(C, i * ldc + j, sum, alpha, beta);
      } else {
        acc r = LD(C, i * ldc + j) + SCAL(alpha) * sum;
        ST(C, i * ldc + j, r);
      }
    }
  }
}
