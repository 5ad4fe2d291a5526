// ocl.image, ocl.image_buf, ocl.image_fma (rung 7): operands as image2d (texture) objects, as
// on Adreno/Mali GPUs. Each work-item computes a 4x4 block of C.
// A image: texel (kq, i) = op(A)(i, 4kq .. 4kq+3) (RGBA); B image: texel (jq, p) =
// op(B)(p, 4jq .. 4jq+3). gemm_image_buf reads B from a packed buffer instead; gemm_image_fma
// unrolls k by 2 texels (8) with explicit fused multiply-adds. The pre-pass zero-pads A to
// Mp x Kp and B to Kp x Np and copies them into the images.

__constant sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;

#if defined(KAFEL_COMPUTE_I32)
#define TEX(img, x, y) as_uint4(read_imagei((img), smp, (int2)((x), (y))))
#elif defined(KAFEL_COMPUTE_F16)
#define TEX(img, x, y) convert_half4(read_imagef((img), smp, (int2)((x), (y))))
#else
#define TEX(img, x, y) read_imagef((img), smp, (int2)((x), (y)))
#endif

#if defined(KAFEL_COMPUTE_I32)
#define FMA4(c, a, b) ((c) += (a) * (b))
#else
#define FMA4(c, a, b) ((c) = fma((accv(4))(a), (b), (c)))
#endif

// c_r += sum_q a_r[q] * b_q for the 4 rows r of the block.
#define STEP(c, a, b0, b1, b2, b3)      \
  for (int r = 0; r < 4; ++r) {         \
    FMA4(c[r], a[r].s0, b0);            \
    FMA4(c[r], a[r].s1, b1);            \
    FMA4(c[r], a[r].s2, b2);            \
    FMA4(c[r], a[r].s3, b3);            \
  }

inline void store_block(accv(4) * c, int i, int j, int M, int N, __global real* C, int ldc,
                        scal alpha, scal beta) {
  for (int r = 0; r < 4; ++r) {
    if (i + r >= M) return;
    const accv(4) v = c[r];
    if (j + 0 < N) store_c(C, (i + r) * ldc + j + 0, v.s0, alpha, beta);
    if (j + 1 < N) store_c(C, (i + r) * ldc + j + 1, v.s1, alpha, beta);
    if (j + 2 < N) store_c(C, (i + r) * ldc + j + 2, v.s2, alpha, beta);
    if (j + 3 < N) store_c(C, (i + r) * ldc + j + 3, v.s3, alpha, beta);
  }
}

__kernel __attribute__((reqd_work_group_size(WGX, WGY, 1)))
void gemm_image(int M, int N, int Kq, scal alpha, scal beta, __read_only image2d_t Ai,
                __read_only image2d_t Bi, __global real* C, int ldc) {
  const int jq = get_global_id(0), iq = get_global_id(1);
  accv(4) c[4] = {0, 0, 0, 0};
  for (int kq = 0; kq < Kq; ++kq) {
    accv(4) a[4];
    for (int r = 0; r < 4; ++r) a[r] = TEX(Ai, kq, 4 * iq + r);
    const accv(4) b0 = TEX(Bi, jq, 4 * kq), b1 = TEX(Bi, jq, 4 * kq + 1);
    const accv(4) b2 = TEX(Bi, jq, 4 * kq + 2), b3 = TEX(Bi, jq, 4 * kq + 3);
    STEP(c, a, b0, b1, b2, b3)
  }
  store_block(c, 4 * iq, 4 * jq, M, N, C, ldc, alpha, beta);
}

__kernel __attribute__((reqd_work_group_size(WGX, WGY, 1)))
void gemm_image_buf(int M, int N, int Kq, scal alpha, scal beta, __read_only image2d_t Ai,
                    __global const real* Bp, int Np, __global real* C, int ldc) {
  const int jq = get_global_id(0), iq = get_global_id(1);
  accv(4) c[4] = {0, 0, 0, 0};
  for (int kq = 0; kq < Kq; ++kq) {
    accv(4) a[4];
    for (int r = 0; r < 4; ++r) a[r] = TEX(Ai, kq, 4 * iq + r);
    const int p = 4 * kq;
    const accv(4) b0 = VLOAD(4, jq, Bp + p * Np), b1 = VLOAD(4, jq, Bp + (p + 1) * Np);
    const accv(4) b2 = VLOAD(4, jq, Bp + (p + 2) * Np), b3 = VLOAD(4, jq, Bp + (p + 3) * Np);
    STEP(c, a, b0, b1, b2, b3)
  }
  store_block(c, 4 * iq, 4 * jq, M, N, C, ldc, alpha, beta);
}

// Kq is even here (the pre-pass pads k to a multiple of 8).
__kernel __attribute__((reqd_work_group_size(WGX, WGY, 1)))
void gemm_image_fma(int M, int N, int Kq, scal alpha, scal beta, __read_only image2d_t Ai,
                    __read_only image2d_t Bi, __global real* C, int ldc) {
  const int jq = get_global_id(0), iq = get_global_id(1);
  accv(4) c[4] = {0, 0, 0, 0};
  for (int kq = 0; kq < Kq; kq += 2) {
    accv(4) a[4], e[4];
    for (int r = 0; r < 4; ++r) {
      a[r] = TEX(Ai, kq, 4 * iq + r);
      e[r] = TEX(Ai, kq + 1, 4 * iq + r);
    }
    const int p = 4 * kq;
    const accv(4) b0 = TEX(Bi, jq, p), b1 = TEX(Bi, jq, p + 1);
    const accv(4) b2 = TEX(Bi, jq, p + 2), b3 = TEX(Bi, jq, p + 3);
    const accv(4) b4 = TEX(Bi, jq, p + 4), b5 = TEX(Bi, jq, p + 5);
    const accv(4) b6 = TEX(Bi, jq, p + 6), b7 = TEX(Bi, jq, p + 7);
    STEP(c, a, b0, b1, b2, b3)
    STEP(c, e, b4, b5, b6, b7)
  }
  store_block(c, 4 * iq, 4 * jq, M, N, C, ldc, alpha, beta);
}
