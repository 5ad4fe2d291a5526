// ocl.reg (rung 6): the fast general kernel. A work-group computes an MWG x NWG tile of C with
// MDIMC x NDIMC work-items, each holding an (MWG/MDIMC) x (NWG/NDIMC) block of C in registers.
// Operands come packed by the pre-pass: At (Kp x Mp, k-major) and Bp (Kp x Np), zero-padded
// to the tile sizes, so every load is a whole, aligned vector (VWM along m, VWN along n).
// KWG-deep slices go through local memory (SA/SB = 1) or straight from global (0: CPUs).
// PK = 1: operands are stored as per-tile panels (tile t of At is Kp x MWG, contiguous).
// KBAR > 0 (with SA = SB = 0): a work-group barrier every KBAR k, for the caches of CPUs.
// Dimension 2: matrix of a batch and k slice (reg_block.cl, BATCH_ARGS).
// Work-item (tn, tm) owns vector columns tm + w*MDIMC of A and tn + w*NDIMC of B, so
// neighbouring work-items read neighbouring vectors (no local-memory bank conflicts).
// Built after reg_block.cl: MWI NWI MVI NVI NT, accA / accB, GLOADA / GLOADB, UNPACK, MACV.

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm_reg(int M, int N, int Kp, scal alpha, scal beta,
              __global const real* At, int Mp,  // At[p*Mp + i] = op(A)(i, p), zero-padded
              __global const real* Bp, int Np,  // Bp[p*Np + j] = op(B)(p, j), zero-padded
              __global real* C, int ldc,        // C: M x N row-major
              BATCH_ARGS) {
  const int tn = get_local_id(0), tm = get_local_id(1);
  At += matrix_of(splits) * astride;
  Bp += matrix_of(splits) * bstride;
  C += matrix_of(splits) * cstride;
  const int kbegin = slice_begin(Kp / KWG, splits) * KWG;
  const int kend = slice_end(Kp / KWG, splits) * KWG;
  const int gm = get_group_id(1), gn = get_group_id(0);
  const int mv0 = gm * (MWG / VWM), nv0 = gn * (NWG / VWN);  // first vector of this tile
#if PK
  // Panel layout: row kk of this tile's panel starts at vector kk * (MWG / VWM).
  At += (long)gm * Kp * MWG;
  Bp += (long)gn * Kp * NWG;
#define AROW(k) ((k) * (MWG / VWM))
#define BROW(k) ((k) * (NWG / VWN))
#define AV0 0
#define BV0 0
#else
#define AROW(k) ((k) * (Mp / VWM))
#define BROW(k) ((k) * (Np / VWN))
#define AV0 mv0
#define BV0 nv0
#endif
#if SA
  __local accA Alm[KWG][MWG / VWM];
#endif
#if SB
  __local accB Blm[KWG][NWG / VWN];
#endif
  accB cpm[MWI][NVI];
#pragma unroll
  for (int mi = 0; mi < MWI; ++mi)
#pragma unroll
    for (int w = 0; w < NVI; ++w) cpm[mi][w] = 0;

#if KBAR && !(SA || SB)
  // CPUs run a group's work-items one after the other: meeting every KBAR k keeps the group's
  // KBAR-deep slices of its A and B panels in the core's cache for all of them (without it each
  // work-item streamed its whole k range from L3: 1024 x 1024 x 4096 ran slower than 1024^3).
  for (int kb = kbegin; kb < kend; kb += KBAR) {
    const int kstop = min(kb + KBAR, kend);
    for (int k0 = kb; k0 < kstop; k0 += KWG) {
#else
  for (int k0 = kbegin; k0 < kend; k0 += KWG) {
#endif
#if SA || SB
    const int tid = tm * NDIMC + tn;
#endif
#if SA
    for (int idx = tid; idx < KWG * (MWG / VWM); idx += NT) {
      const int kk = idx / (MWG / VWM), v = idx % (MWG / VWM);
      Alm[kk][v] = GLOADA(AROW(k0 + kk) + AV0 + v, At);
    }
#endif
#if SB
    for (int idx = tid; idx < KWG * (NWG / VWN); idx += NT) {
      const int kk = idx / (NWG / VWN), v = idx % (NWG / VWN);
      Blm[kk][v] = GLOADB(BROW(k0 + kk) + BV0 + v, Bp);
    }
#endif
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#pragma unroll
    for (int kk = 0; kk < KWG; ++kk) {
      acc apm[MWI];
#pragma unroll
      for (int w = 0; w < MVI; ++w) {
#if SA
        const accA av = Alm[kk][tm + w * MDIMC];
#else
        const accA av = GLOADA(AROW(k0 + kk) + AV0 + tm + w * MDIMC, At);
#endif
        UNPACK(VWM, apm, w * VWM, av)
      }
      accB bpm[NVI];
#pragma unroll
      for (int w = 0; w < NVI; ++w) {
#if SB
        bpm[w] = Blm[kk][tn + w * NDIMC];
#else
        bpm[w] = GLOADB(BROW(k0 + kk) + BV0 + tn + w * NDIMC, Bp);
#endif
      }
#pragma unroll
      for (int mi = 0; mi < MWI; ++mi)
#pragma unroll
        for (int w = 0; w < NVI; ++w) MACV(cpm[mi][w], apm[mi], bpm[w]);
    }
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }
#if KBAR && !(SA || SB)
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif

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
