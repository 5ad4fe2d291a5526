// One-pass covariance for few channels: each work-item accumulates pilot-shifted sums and all
// CH*(CH+1)/2 co-moments in private floats; work-groups reduce them pairwise in local memory.
// Defines: CH (channels), WG (work-group size, a power of two), PLANAR (1: C x N, 0: N x C),
// PILOT_SAMPLES (the host's kPilotSamples). Output per group g: CH sums then NP co-moments
// (lower triangle, row by row) at partial[g*(CH+NP)]; group 0 also writes the pilot after all
// groups' partials, so the host merges everything in float64.
#define NP (CH * (CH + 1) / 2)
#if PLANAR
#define X(c, i) x[(long)(c) * stride + (i)]
#else
#define X(c, i) x[(i) * stride + (long)(c)]
#endif

// Sums red[0..WG) into red[0] (pairwise; callers hold a barrier before and after).
void reduce_local(__local float* red, int lid) {
  for (int s = WG / 2; s > 0; s >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < s) red[lid] += red[lid + s];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void cov_onepass(
    __global const float* x, long stride, long n, __global float* partial) {
  __local float pilot[CH];
  __local float red[WG];
  const int lid = get_local_id(0);
  // Every group computes the pilot the same way: the float mean of the first samples.
  if (lid < CH) {
    const long k = n < PILOT_SAMPLES ? n : PILOT_SAMPLES;
    float s = 0.0f;
    for (long i = 0; i < k; ++i) s += X(lid, i);
    pilot[lid] = s / (float)k;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  float p[CH], sum[CH], q[NP];
  for (int c = 0; c < CH; ++c) {
    p[c] = pilot[c];
    sum[c] = 0.0f;
  }
  for (int t = 0; t < NP; ++t) q[t] = 0.0f;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    float y[CH];
    for (int c = 0; c < CH; ++c) {
      y[c] = X(c, i) - p[c];
      sum[c] += y[c];
    }
    int t = 0;
    for (int a = 0; a < CH; ++a)
      for (int b = 0; b <= a; ++b, ++t) q[t] = fma(y[a], y[b], q[t]);
  }
  __global float* out = partial + get_group_id(0) * (CH + NP);
  for (int v = 0; v < CH + NP; ++v) {
    red[lid] = v < CH ? sum[v] : q[v - CH];
    reduce_local(red, lid);
    if (lid == 0) out[v] = red[0];
  }
  if (get_group_id(0) == 0 && lid < CH) partial[get_num_groups(0) * (CH + NP) + lid] = pilot[lid];
}

// The memory floor: one plain pass summing every float of the block (per-group results).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void cov_readpass(
    __global const float* x, long count, __global float* partial) {
  __local float red[WG];
  const int lid = get_local_id(0);
  float s = 0.0f;
  for (long i = get_global_id(0); i < count; i += get_global_size(0)) s += x[i];
  red[lid] = s;
  reduce_local(red, lid);
  if (lid == 0) partial[get_group_id(0)] = red[0];
}
