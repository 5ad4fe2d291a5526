// ocl.vec4 (rung 5): a 4x4 block of C per work-item with vload4 (the mobile-GPU article): A is
// packed transposed (At: K x Mp, k-major) and B packed as Bp (K x Np), both zero-padded to
// multiples of 4 x the work-group by the pre-pass, so every vector load is whole and aligned.
__kernel __attribute__((reqd_work_group_size(WGX, WGY, 1)))
void gemm_vec4(int M, int N, int K, scal alpha, scal beta,
               __global const real* At, int Mp,   // At[p*Mp + i] = op(A)(i, p)
               __global const real* Bp, int Np,   // Bp[p*Np + j] = op(B)(p, j)
               __global real* C, int ldc) {
  const int jq = get_global_id(0), iq = get_global_id(1);  // 4-column / 4-row block index
  accv(4) c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  for (int p = 0; p < K; ++p) {
    const accv(4) a = VLOAD(4, iq, At + p * Mp);
    const accv(4) b = VLOAD(4, jq, Bp + p * Np);
    c0 += a.s0 * b;
    c1 += a.s1 * b;
    c2 += a.s2 * b;
    c3 += a.s3 * b;
  }
  const int i = iq * 4, j = jq * 4;
  accv(4) rows[4] = {c0, c1, c2, c3};
  for (int r = 0; r < 4; ++r) {
    if (i + r >= M) break;
    const accv(4) v = rows[r];
    if (j + 0 < N) store_c(C, (i + r) * ldc + j + 0, v.s0, alpha, beta);
    if (j + 1 < N) store_c(C, (i + r) * ldc + j + 1, v.s1, alpha, beta);
    if (j + 2 < N) store_c(C, (i + r) * ldc + j + 2, v.s2, alpha, beta);
    if (j + 3 < N) store_c(C, (i + r) * ldc + j + 3, v.s3, alpha, beta);
  }
}
