// What the register-blocked rungs (reg.cl, reg2.cl) share, built between common.cl and the
// rung's file: per-work-item tile sizes, vector types, global vector loads.
// The host passes MWG NWG MDIMC NDIMC VWM VWN as -D defines. Work-item (tn, tm) of an
// NDIMC x MDIMC group holds an (MWG/MDIMC) x (NWG/NDIMC) block of C as NVI vectors per row.
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
