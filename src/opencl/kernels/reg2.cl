// ocl.reg2 (rung 9): register blocking with double-buffered local memory, shaped for NVIDIA-class
// GPUs. A work-group computes an MWG x NWG tile of C with NDIMC x MDIMC work-items, each holding an
// (MWG/MDIMC) x (NWG/NDIMC) block of C in registers. Operands come from the pre-pass: At (Kp x Mp,
// k-major, i.e. A transposed) and Bp (Kp x Np), zero-padded to the tile sizes, so the main loop has
// no bounds checks and every load is a whole, aligned vector. Pipeline per KWG-deep k-tile: the
// next tile is fetched from global memory into registers, the current one is consumed from local
// buffer `cur`, the registers are stored into the other buffer, then ONE barrier. Work-item (tn,
// tm) reads local vector columns tm + w*MDIMC of A and tn + w*NDIMC of B: neighbours read
// neighbouring vectors, so the k-major local tiles need no padding to avoid bank conflicts (a warp
// of 16 x 2 items reads 2 broadcast A vectors and 16 consecutive B vectors per step). Built after
// reg_block.cl: MWI NWI MVI NVI NT, accA / accB, GLOADA / GLOADB, UNPACK, MACV.
// AROW (A row-major, tile-multiple m and k, lda a multiple of VWM, n <= 256; the host decides in
// RegBlockPlan::prepare): A is read where it lies, VWM consecutive k of one row per vector load,
// and transposed into the k-major local tile by scalar stores; the pre-pass's transposition of A
// (a full read and write of A: most of the time of a skinny, long-k product) is skipped. `Mp` is
// then A's row stride.
#define AVT (MWG / VWM)      // A vectors in one k row of a tile
#define BVT (NWG / VWN)      // B vectors in one k row of a tile
#define LA (KWG * AVT / NT)  // A vectors each work-item moves per k-tile
#define LB (KWG * BVT / NT)  // B vectors each work-item moves per k-tile
#ifndef AROW
#define AROW 0
#endif
#define KVA (KWG / VWM)  // AROW: A vectors along k in one tile row

// Work-item vector r of an A tile into local buffer `buf`: k-major as loaded, or (AROW) its VWM
// k values scattered down column `row` of the k-major tile.
#if AROW
#define STORE_A(buf, r)                                                             \
  {                                                                                 \
    const int idx_ = tid + (r) * NT, row_ = idx_ / KVA, k0_ = (idx_ % KVA) * VWM;   \
    acc av_[VWM];                                                                   \
    UNPACK(VWM, av_, 0, ra[r])                                                      \
    __local acc* at_ = (__local acc*)Alm[buf];                                      \
    for (int c_ = 0; c_ < VWM; ++c_) at_[(k0_ + c_) * MWG + row_] = av_[c_];       \
  }
#else
#define STORE_A(buf, r) Alm[buf][(tid + (r) * NT) / AVT][(tid + (r) * NT) % AVT] = ra[r];
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm_reg2(int M, int N, int Kp, scal alpha, scal beta,
                 __global const real* At, int Mp,  // At[p*Mp + i] = op(A)(i, p), zero-padded
                 __global const real* Bp, int Np,  // Bp[p*Np + j] = op(B)(p, j), zero-padded
                 __global real* C, int ldc,        // C: M x N row-major
                 BATCH_ARGS) {                     // dimension 2: matrix and k slice
  __local accA Alm[2][KWG][AVT];
  __local accB Blm[2][KWG][BVT];
  const int tn = get_local_id(0), tm = get_local_id(1);
  const int tid = tm * NDIMC + tn;
  const int mv0 = get_group_id(1) * AVT, nv0 = get_group_id(0) * BVT;  // first tile vector

  // Global vector offsets of this work-item's loads inside a k-tile (the same for every tile;
  // the operand pointers advance by KWG rows instead). Consecutive work-items take
  // consecutive vectors of a k row, so each load is coalesced.
  int aoff[LA], boff[LB];
#pragma unroll
  for (int r = 0; r < LA; ++r) {
    const int idx = tid + r * NT;
#if AROW
    aoff[r] = (mv0 * VWM + idx / KVA) * (Mp / VWM) + idx % KVA;
#else
    aoff[r] = (idx / AVT) * (Mp / VWM) + mv0 + idx % AVT;
#endif
  }
#pragma unroll
  for (int r = 0; r < LB; ++r) {
    const int idx = tid + r * NT;
    boff[r] = (idx / BVT) * (Np / VWN) + nv0 + idx % BVT;
  }
  const int astep = AROW ? KWG : KWG * Mp, bstep = KWG * Np;
  // This work-group's matrix and k slice (at least one k-tile: the host caps splits).
  const int t0 = slice_begin(Kp / KWG, splits), tiles = slice_end(Kp / KWG, splits) - t0;
  At += matrix_of(splits) * astride + (long)t0 * astep;
  Bp += matrix_of(splits) * bstride + (long)t0 * bstep;
  C += matrix_of(splits) * cstride;

  accA ra[LA];
  accB rb[LB];
#pragma unroll
  for (int r = 0; r < LA; ++r) ra[r] = GLOADA(aoff[r], At);
#pragma unroll
  for (int r = 0; r < LB; ++r) rb[r] = GLOADB(boff[r], Bp);
#pragma unroll
  for (int r = 0; r < LA; ++r) STORE_A(0, r)
#pragma unroll
  for (int r = 0; r < LB; ++r) Blm[0][(tid + r * NT) / BVT][(tid + r * NT) % BVT] = rb[r];
  barrier(CLK_LOCAL_MEM_FENCE);

  accB cpm[MWI][NVI];
#pragma unroll
  for (int mi = 0; mi < MWI; ++mi)
#pragma unroll
    for (int w = 0; w < NVI; ++w) cpm[mi][w] = 0;

  for (int t = 0; t < tiles; ++t) {
    const int cur = t & 1;
    const bool more = t + 1 < tiles;
    if (more) {  // prefetch tile t + 1 into registers; its latency hides behind the math below
      At += astep;
      Bp += bstep;
#pragma unroll
      for (int r = 0; r < LA; ++r) ra[r] = GLOADA(aoff[r], At);
#pragma unroll
      for (int r = 0; r < LB; ++r) rb[r] = GLOADB(boff[r], Bp);
    }
#pragma unroll
    for (int kk = 0; kk < KWG; ++kk) {
      acc apm[MWI];
#pragma unroll
      for (int w = 0; w < MVI; ++w) {
        const accA av = Alm[cur][kk][tm + w * MDIMC];
        UNPACK(VWM, apm, w * VWM, av)
      }
      accB bpm[NVI];
#pragma unroll
      for (int w = 0; w < NVI; ++w) bpm[w] = Blm[cur][kk][tn + w * NDIMC];
#pragma unroll
      for (int mi = 0; mi < MWI; ++mi)
#pragma unroll
        for (int w = 0; w < NVI; ++w) MACV(cpm[mi][w], apm[mi], bpm[w]);
    }
    if (more) {  // buffer cur ^ 1 was last read before the previous barrier: safe to refill
#pragma unroll
      for (int r = 0; r < LA; ++r) STORE_A(cur ^ 1, r)
#pragma unroll
      for (int r = 0; r < LB; ++r)
        Blm[cur ^ 1][(tid + r * NT) / BVT][(tid + r * NT) % BVT] = rb[r];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  // Row of accumulator mi: vector column tm + (mi / VWM) * MDIMC, component mi % VWM.
#pragma unroll
  for (int mi = 0; mi < MWI; ++mi) {
    const int i = (mv0 + tm + (mi / VWM) * MDIMC) * VWM + mi % VWM;
    if (i >= M) continue;
#pragma unroll
    for (int w = 0; w < NVI; ++w) {
      acc out[VWN];
      UNPACK(VWN, out, 0, cpm[mi][w])
      const int j0 = (nv0 + tn + w * NDIMC) * VWN;
#if CPU_DEVICE
#pragma unroll 1
#else
#pragma unroll
#endif
      for (int u = 0; u < VWN; ++u)
        if (j0 + u < N)
          put_result(C, ldc, i, j0 + u, out[u], alpha, beta, M, N, splits, batch, W);
    }
  }
}
