// Pre-pass kernels of the tiled rungs: copy an operand into a zero-padded buffer in the
// orientation the kernel wants (transposing on the way), C = beta*C for k == 0, and the split-K
// reduction. Dimension 2 of every range is the matrix of a batch.

#define PT 16

// dst (Rp x Cp, row-major, ld = ldd) = src(r, c) = src[r*rs + c*cs] inside R x C, 0 outside.
// panel > 0 stores column panels of that width one after another (each Rp x panel, row-major),
// so a work-group streaming one panel over all rows reads contiguous memory (CPU caches).
// A 16x16 local tile keeps both the reads and the writes coalesced when it transposes.
// Matrix z of a batch: src + z * sstride, dst + z * dstride.
__kernel __attribute__((reqd_work_group_size(PT, PT, 1)))
void pack(int R, int Cc, __global const raw* src, int rs, int cs, __global raw* dst, int ldd,
          int Rp, int Cp, int panel, long sstride, long dstride) {
  __local raw tile[PT][PT + 1];
  src += get_global_id(2) * sstride;
  dst += get_global_id(2) * dstride;
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int c0 = get_group_id(0) * PT, r0 = get_group_id(1) * PT;
  if (cs == 1) {  // source contiguous along c: x runs along c
    int r = r0 + ly, c = c0 + lx;
    tile[ly][lx] = (r < R && c < Cc) ? src[r * rs + c] : (raw)0;
  } else {  // source contiguous along r (or neither): x runs along r
    int r = r0 + lx, c = c0 + ly;
    tile[lx][ly] = (r < R && c < Cc) ? src[r * rs + c * cs] : (raw)0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  int r = r0 + ly, c = c0 + lx;
  if (r < Rp && c < Cp) {
    const int at = panel > 0 ? (c / panel) * (Rp * panel) + r * panel + c % panel : r * ldd + c;
    dst[at] = tile[ly][lx];
  }
}

// The same copy for CPU devices: one work-item per PT x PT block, no local memory and no barrier
// (on PoCL the barrier of `pack` per 16 x 16 tile left it at ~2.4 GB/s: a third of an f32 1024^3
// GEMM). A block of PT columns lies in one panel when the panel width is a multiple of PT, so its
// offset is computed once per row.
__kernel void pack_blocks(int R, int Cc, __global const raw* src, int rs, int cs,
                          __global raw* dst, int ldd, int Rp, int Cp, int panel, long sstride,
                          long dstride) {
  src += get_global_id(2) * sstride;
  dst += get_global_id(2) * dstride;
  const int c0 = get_global_id(0) * PT, r0 = get_global_id(1) * PT;
  const int cols = min(PT, Cp - c0), rows = min(PT, Rp - r0);
  const bool whole = panel == 0 || panel % PT == 0;
  for (int i = 0; i < rows; ++i) {
    const int r = r0 + i;
    const long row = panel > 0 ? (long)(c0 / panel) * Rp * panel + (long)r * panel + c0 % panel
                               : (long)r * ldd + c0;
    for (int j = 0; j < cols; ++j) {
      const int c = c0 + j;
      const raw v = (r < R && c < Cc) ? src[(long)r * rs + (long)c * cs] : (raw)0;
      if (whole)
        dst[row + j] = v;
      else
        dst[(long)(c / panel) * Rp * panel + (long)r * panel + c % panel] = v;
    }
  }
}

// C = beta * C over m x n (k == 0); beta == 0 writes zeros without reading C.
__kernel void scale_c(int M, int N, scal beta, __global real* C, int ldc, long cstride) {
  const int j = get_global_id(0), i = get_global_id(1);
  if (i >= M || j >= N) return;
  C += get_global_id(2) * cstride;
  acc r = 0;
  if (beta != 0) r = SCAL(beta) * LD(C, i * ldc + j);
  ST(C, i * ldc + j, r);
}

// Split-K: C = alpha * (sum of the `splits` partial tiles, slice 0 first) + beta * C. Partial
// tile of slice s and matrix z at W + ((s * batch + z) * M + i) * N + j (accumulator type). The
// fixed order makes the result the same on every run.
__kernel void splitk_reduce(int M, int N, int splits, int batch, __global const acc* W,
                            scal alpha, scal beta, __global real* C, int ldc, long cstride) {
  const int j = get_global_id(0), i = get_global_id(1), z = get_global_id(2);
  if (i >= M || j >= N) return;
  const long tile = (long)M * N;
  __global const acc* w = W + z * tile + (long)i * N + j;
  acc sum = 0;
  for (int s = 0; s < splits; ++s) sum += w[(long)s * batch * tile];
  store_c(C + z * cstride, i * ldc + j, sum, alpha, beta);
}
