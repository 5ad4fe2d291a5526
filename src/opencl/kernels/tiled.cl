// ocl.tiled (rung 3): TS x TS tiles of A and B staged in local memory; each work-item computes one
// C element. Loads outside the matrix read zero, so any size works without padding.
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void gemm_tiled(int M, int N, int K, scal alpha, scal beta,
                __global const real* A, int ars, int acs,
                __global const real* B, int brs, int bcs,
                __global real* C, int ldc) {
  __local acc As[TS][TS];  // As[row][k]
  __local acc Bs[TS][TS];  // Bs[k][col]
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int j = get_group_id(0) * TS + tx, i = get_group_id(1) * TS + ty;
  acc sum = 0;
  for (int p0 = 0; p0 < K; p0 += TS) {
    const int pa = p0 + tx, pb = p0 + ty;
    As[ty][tx] = (i < M && pa < K) ? LD(A, i * ars + pa * acs) : (acc)0;
    Bs[ty][tx] = (pb < K && j < N) ? LD(B, pb * brs + j * bcs) : (acc)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = 0; p < TS; ++p) MAC(sum, As[ty][p], Bs[p][tx]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (i < M && j < N) store_c(C, i * ldc + j, sum, alpha, beta);
}
