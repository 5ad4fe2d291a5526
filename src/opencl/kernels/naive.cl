// ocl.naive (rung 1): naive 2D NDRange, one C element per work-item, operands read straight from
// global memory through (row, column) strides, so any layout or transpose works without a pre-pass.
// Work-group WGX x WGY; x runs along n so neighbouring work-items touch neighbouring C columns.
__kernel __attribute__((reqd_work_group_size(WGX, WGY, 1)))
void gemm_naive(int M, int N, int K, scal alpha, scal beta,
                __global const real* A, int ars, int acs,  // op(A)(i,p) = A[i*ars + p*acs]
                __global const real* B, int brs, int bcs,  // op(B)(p,j) = B[p*brs + j*bcs]
                __global real* C, int ldc) {               // C: M x N row-major
  const int j = get_global_id(0), i = get_global_id(1);
  if (i >= M || j >= N) return;
  acc sum = 0;
  for (int p = 0; p < K; ++p) MAC(sum, LD(A, i * ars + p * acs), LD(B, p * brs + j * bcs));
  store_c(C, i * ldc + j, sum, alpha, beta);
}
