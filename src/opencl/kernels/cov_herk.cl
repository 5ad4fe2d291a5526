// Tiled SYRK/HERK covariance: one work-group per (lower 64x64 tile of real lanes, sample range,
// batch). Chunks of KC samples of the tile's two lane panels go global -> registers -> local
// memory once per chunk (the next chunk's loads are in flight while this one is computed);
// 16x16 work-items each multiply-add a 4x4 micro-tile from float4 local reads. Sums run in ACC
// (float, or int for ci8 / long for ci16) for FLUSH chunks, then are added into WIDE (double /
// long) accumulators, so no float sum has more than KC*FLUSH terms. Complex samples are 2C real
// lanes (re, im); the host assembles the Hermitian result.
//
// Defines: MODE (0 f32, 1 cf32, 2 ci8, 3 ci16), MAP (0: lane-contiguous loads = interleaved,
// 1: sample-contiguous loads = planar), KC (samples per chunk, 8/16/32), FLUSH (chunks per
// float sum). The work-group is 256 work-items, the tile T = 64 lanes.
//
// Output per work-group: WIDE partial[((b*tiles + tile)*splits + split)*(T*T + T) + ...]: the
// tile's co-moments row-major (lower entries valid on diagonal tiles), then on diagonal tiles
// the T lane sums. Pilots (per batch and lane) come from cov_pilot.
#define T 64
#define WG 256
#define LOADS (T * KC / WG)
#define LDA (T + 4)

#if MODE <= 1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef float IN;
typedef float LT;
typedef float ACC;
typedef double WIDE;
typedef float4 LT4;
#define MAC(c, a, b) c = fma(a, b, c)
#define SHIFT 1
#elif MODE == 2
typedef char IN;
typedef int LT;
typedef int ACC;
typedef long WIDE;
typedef int4 LT4;
#define MAC(c, a, b) c += (a) * (b)
#define SHIFT 0
#else
typedef short IN;
typedef int LT;
typedef long ACC;  // 16-bit products reach 2^30: two would overflow int
typedef long WIDE;
typedef int4 LT4;
#define MAC(c, a, b) c += (long)((a) * (b))
#define SHIFT 0
#endif
#define COMPS (MODE == 0 ? 1 : 2)

// Lane and chunk sample of load slot e (0 .. T*KC): the same lane for a work-item's slot u in
// every chunk, which the diagonal tiles' lane sums rely on.
int slot_lane(int e) {
#if MAP == 0
  return e % T;
#else
  const int w = e % (COMPS * KC);
  return (e / (COMPS * KC)) * COMPS + w % COMPS;
#endif
}
int slot_sample(int e) {
#if MAP == 0
  return e / T;
#else
  return (e % (COMPS * KC)) / COMPS;
#endif
}

// The pilot of every lane of every batch: the float mean of the first min(N, 32) samples,
// summed in order (as the host's lane_pilot); 0 for integer samples.
__kernel void cov_pilot(__global const IN* x, long cstep, long sstep, long bstep, int lanes,
                        long n, int batches, __global float* pilot) {
  const int g = get_global_id(0);
  if (g >= lanes * batches) return;
  const int b = g / lanes, k = g % lanes;
#if SHIFT
  const long count = n < 32 ? n : 32;
  const long base = b * bstep + (k / COMPS) * cstep + k % COMPS;
  float s = 0.0f;
  for (long i = 0; i < count; ++i) s += (float)x[base + i * sstep];
  pilot[g] = s / (float)count;
#else
  pilot[g] = 0.0f;
#endif
}

// Row ti and column tj of lower tile t (t = ti*(ti+1)/2 + tj).
void tile_of(int t, int* ti, int* tj) {
  int i = (int)((sqrt(8.0f * (float)t + 1.0f) - 1.0f) * 0.5f);
  while ((i + 1) * (i + 2) / 2 <= t) ++i;
  while (i * (i + 1) / 2 > t) --i;
  *ti = i;
  *tj = t - i * (i + 1) / 2;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void cov_herk(
    __global const IN* x, long cstep, long sstep, long bstep, int lanes, long n, long range,
    int tiles, int splits, __global const float* pilot, __global WIDE* partial) {
  __local LT As[KC * LDA];
  __local LT Bs[KC * LDA];
  __local WIDE red[WG * LOADS];
  const int lid = get_local_id(0);
  const int tile = get_group_id(0) % tiles, split = get_group_id(0) / tiles;
  const int b = get_group_id(1);
  int ti, tj;
  tile_of(tile, &ti, &tj);
  const bool diag = ti == tj;
  // Micro-tile of this work-item: rows 4*ty.., columns 4*tx..; on diagonal tiles only the 136
  // lower ones (ty >= tx), taken by work-items 0..135, so whole wavefronts sit out the rest.
  int ty = lid / 16, tx = lid % 16;
  bool active = true;
  if (diag) {
    active = lid < 136;
    tile_of(active ? lid : 0, &ty, &tx);
  }
  const long n0 = split * range;
  const long n1 = min(n, n0 + range);
  const int chunks = (int)((n1 - n0 + KC - 1) / KC);
  __global const IN* xb = x + b * bstep;
  __global const float* pb = pilot + b * lanes;

  // The work-item's load slots: lane (in each panel) and sample within the chunk.
  int lane_a[LOADS], lane_b[LOADS], kk[LOADS];
  LT ra[LOADS], rb[LOADS];
  ACC ssum[LOADS];
  WIDE wsum[LOADS];
  for (int u = 0; u < LOADS; ++u) {
    const int e = lid + u * WG;
    lane_a[u] = ti * T + slot_lane(e);
    lane_b[u] = tj * T + slot_lane(e);
    kk[u] = slot_sample(e);
    ssum[u] = 0;
    wsum[u] = 0;
  }
  ACC acc[4][4];
  WIDE wacc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      acc[i][j] = 0;
      wacc[i][j] = 0;
    }

#define LOAD_ONE(dst, lane, k, c)                                                             \
  do {                                                                                        \
    const long s_ = n0 + (long)(c) * KC + (k);                                                \
    LT v_ = 0;                                                                                \
    if ((lane) < lanes && s_ < n1) {                                                          \
      v_ = (LT)xb[((lane) / COMPS) * cstep + (lane) % COMPS + s_ * sstep];                    \
      if (SHIFT) v_ -= (LT)pb[lane];                                                          \
    }                                                                                         \
    dst = v_;                                                                                 \
  } while (0)

  for (int u = 0; u < LOADS; ++u) {
    LOAD_ONE(ra[u], lane_a[u], kk[u], 0);
    if (!diag) LOAD_ONE(rb[u], lane_b[u], kk[u], 0);
  }
  for (int c = 0; c < chunks; ++c) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int u = 0; u < LOADS; ++u) {
      const int e = lid + u * WG;
      As[slot_sample(e) * LDA + slot_lane(e)] = ra[u];
      if (!diag) Bs[slot_sample(e) * LDA + slot_lane(e)] = rb[u];
      if (diag) ssum[u] += (ACC)ra[u];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (c + 1 < chunks)
      for (int u = 0; u < LOADS; ++u) {
        LOAD_ONE(ra[u], lane_a[u], kk[u], c + 1);
        if (!diag) LOAD_ONE(rb[u], lane_b[u], kk[u], c + 1);
      }
    __local const LT* Bp = diag ? As : Bs;
    if (active) {
      if (diag && ty == tx) {  // the micro-tile on the diagonal: its lower half
        for (int k = 0; k < KC; ++k) {
          const LT4 a = vload4(0, As + k * LDA + 4 * ty);
          const LT av[4] = {a.x, a.y, a.z, a.w};
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j <= i; ++j) MAC(acc[i][j], av[i], av[j]);
        }
      } else {
        for (int k = 0; k < KC; ++k) {
          const LT4 a = vload4(0, As + k * LDA + 4 * ty);
          const LT4 bv = vload4(0, Bp + k * LDA + 4 * tx);
          const LT av[4] = {a.x, a.y, a.z, a.w};
          const LT bw[4] = {bv.x, bv.y, bv.z, bv.w};
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) MAC(acc[i][j], av[i], bw[j]);
        }
      }
    }
    if ((c + 1) % FLUSH == 0 || c + 1 == chunks) {
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          wacc[i][j] += (WIDE)acc[i][j];
          acc[i][j] = 0;
        }
      for (int u = 0; u < LOADS; ++u) {
        wsum[u] += (WIDE)ssum[u];
        ssum[u] = 0;
      }
    }
  }

  const int W = T * T + T;
  __global WIDE* out = partial + ((long)(b * tiles + tile) * splits + split) * W;
  if (active)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) out[(4 * ty + i) * T + 4 * tx + j] = wacc[i][j];
  if (diag) {  // lane sums: every slot of every work-item, added per lane in a fixed order
    for (int u = 0; u < LOADS; ++u) red[lid * LOADS + u] = wsum[u];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < T) {
      WIDE s = 0;
      for (int e = 0; e < WG * LOADS; ++e)
        if (slot_lane(e) == lid) s += red[(e % WG) * LOADS + e / WG];
      out[T * T + lid] = s;
    }
  }
}

// The memory floor: one plain pass summing every 32-bit word of the block (group results).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void cov_readpass(
    __global const uint* x, long count, __global uint* out) {
  uint s = 0;
  for (long i = get_global_id(0); i < count; i += get_global_size(0)) s += x[i];
  if (s == 0x9e3779b9u) out[get_group_id(0)] = s;  // keeps the loads; practically never stores
}
