// What the register-blocked rungs (reg.cl, reg2.cl) share, built between common.cl and the
// rung's file: per-work-item tile sizes, vector types, global vector loads, batches and split-K.
// The host passes MWG NWG MDIMC NDIMC VWM VWN as -D defines. Work-item (tn, tm) of an
// NDIMC x MDIMC group holds an (MWG/MDIMC) x (NWG/NDIMC) block of C as NVI vectors per row.

// CPU_DEVICE = 1 (the host sets it for CPU devices): the epilogue loops over each vector's
// components instead of unrolling them. PoCL's compiler took minutes over the unrolled
// epilogue of a wide tile (MWI x NWI stores, each with its alpha/beta, split and bounds
// code: f32 87 s, f16 about 230 s per program on a Zen 3) and 7-10 s over the loop.
#ifndef CPU_DEVICE
#define CPU_DEVICE 0
#endif

#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define MVI (MWI / VWM)  // A vectors per work-item and k step
#define NVI (NWI / VWN)  // B vectors (and C accumulator vectors per row) per work-item
#define NT (MDIMC * NDIMC)

#if VWM == 1
typedef acc accA;
#else
typedef accv(VWM) accA;
#endif
#if VWN == 1
typedef acc accB;
#else
typedef accv(VWN) accB;
#endif

// Aligned vector loads from global memory (W elements at vector index i), as acc vectors.
#define GLOAD1(i, p) LD((p), (i))
#define GLOADW(W, i, p) VLOADA(W, (i), (p))
#if VWM == 1
#define GLOADA(i, p) GLOAD1(i, p)
#else
#define GLOADA(i, p) GLOADW(VWM, i, p)
#endif
#if VWN == 1
#define GLOADB(i, p) GLOAD1(i, p)
#else
#define GLOADB(i, p) GLOADW(VWN, i, p)
#endif

// Copies the components of vector v (width W) to dst[o .. o+W-1].
#define UNPACK1(dst, o, v) dst[o] = (v);
#define UNPACK2(dst, o, v) dst[o] = (v).s0; dst[o + 1] = (v).s1;
#define UNPACK4(dst, o, v) UNPACK2(dst, o, (v).lo) UNPACK2(dst, o + 2, (v).hi)
#define UNPACK8(dst, o, v) UNPACK4(dst, o, (v).lo) UNPACK4(dst, o + 4, (v).hi)
#define UNPACK16(dst, o, v) UNPACK8(dst, o, (v).lo) UNPACK8(dst, o + 8, (v).hi)
#define UNPACK(W, dst, o, v) CAT(UNPACK, W)(dst, o, v)

// c += a * b with a broadcast over the VWN lanes: fused for floats, modulo 2^32 for i32.
#if defined(KAFEL_COMPUTE_I32)
#define MACV(c, a, b) ((c) += (a) * (b))
#else
#define MACV(c, a, b) ((c) = fma((accB)(a), (b), (c)))
#endif

// ---- batches and split-K ---------------------------------------------------------------------
// Dimension 2 of the range is z = matrix * splits + slice (work-groups of depth 1). A slice runs
// k-tiles [slice_begin, slice_end) of the Kp / KWG tiles; with splits > 1 it writes its raw
// partial tile to W (accumulator type) and prepass.cl's splitk_reduce applies alpha and beta.
#define BATCH_ARGS long astride, long bstride, long cstride, int splits, int batch, __global acc* W

inline int slice_of(int splits) {
  return (int)(get_group_id(2) % (size_t)splits);
}
inline int matrix_of(int splits) {
  return (int)(get_group_id(2) / (size_t)splits);
}
inline int slice_begin(int tiles, int splits) {
  return (int)((long)slice_of(splits) * tiles / splits);
}
inline int slice_end(int tiles, int splits) {
  return (int)((long)(slice_of(splits) + 1) * tiles / splits);
}

// Element (i, j) of this work-group's result: alpha/beta into C (already moved to the matrix), or
// the slice's partial tile.
inline void put_result(__global real* C, int ldc, int i, int j, acc v, scal alpha, scal beta,
                       int M, int N, int splits, int batch, __global acc* W) {
  if (splits > 1)
    W[(((long)slice_of(splits) * batch + matrix_of(splits)) * M + i) * N + j] = v;
  else
    store_c(C, i * ldc + j, v, alpha, beta);
}
