// The fast covariance worker, written once over a vector-traits type V and included by each
// worker file (compiled with its ISA's flags) after its traits. Everything here has internal
// linkage on purpose: each file gets its own copy, so no AVX-512 code can leak into another
// file's symbols.
// Needs: V::T (register type), V::kLanes, zero(), load(p), store(p, v), set1(f), sub, add,
// fmadd(a, b, c) = a*b + c, hsum_d(v) (lanes summed in double).

namespace {

// Writes lanes [0, K) of samples [n, n+len) of a non-row fill mode, shifted, into scratch rows.
inline void fill_lanes(const kafel::cpu::covfast::Job& j, std::int64_t n, std::int64_t len,
                       float* y) {
  using kafel::cpu::covfast::FillMode;
  const std::int64_t B = j.ld;
  if (j.mode == FillMode::lanes_f32) {
    for (std::int64_t s = 0; s < len; ++s) {
      const float* x = j.f32() + (n + s) * j.sample_step;
      for (std::int64_t k = 0; k < j.channels; ++k) y[k * B + s] = x[k] - j.pilot[k];
    }
  } else if (j.mode == FillMode::pairs_f32) {
    for (std::int64_t c = 0; c < j.channels / 2; ++c) {
      const float* x = j.f32() + c * j.channel_step + n * j.sample_step;
      float* re = y + 2 * c * B;
      float* im = re + B;
      const float pr = j.pilot[2 * c], pi = j.pilot[2 * c + 1];
      for (std::int64_t s = 0; s < len; ++s) {
        re[s] = x[2 * s] - pr;
        im[s] = x[2 * s + 1] - pi;
      }
    }
  } else {  // any_i8: exact conversion, no shift (integer sums need none)
    const auto* x = static_cast<const std::int8_t*>(j.data);
    for (std::int64_t k = 0; k < j.channels; ++k)
      for (std::int64_t s = 0; s < len; ++s) y[k * B + s] = x[j.offset(k, n + s)];
  }
}

// Shifts block [n, n+len) into scratch rows (zero tail up to len_pad) and adds the lane sums
// of the shifted values.
template <class V>
void fill_block(const kafel::cpu::covfast::Job& j, std::int64_t n, std::int64_t len,
                std::int64_t len_pad, float* y, double* sum) {
  const std::int64_t B = j.ld;  // scratch row stride
  const bool rows = j.mode == kafel::cpu::covfast::FillMode::rows_f32;
  if (!rows) fill_lanes(j, n, len, y);
  for (std::int64_t c = 0; c < j.channels; ++c) {
    float* yc = y + c * B;
    const typename V::T p = V::set1(j.pilot[c]);
    typename V::T acc = V::zero();
    std::int64_t s = 0;
    if (rows) {
      const float* xc = j.f32() + c * j.channel_step + n;
      for (; s + V::kLanes <= len; s += V::kLanes) {
        const typename V::T v = V::sub(V::load(xc + s), p);
        V::store(yc + s, v);
        acc = V::add(acc, v);
      }
      for (std::int64_t t = s; t < len; ++t) yc[t] = xc[t] - j.pilot[c];
    } else {
      for (; s + V::kLanes <= len; s += V::kLanes) acc = V::add(acc, V::load(yc + s));
    }
    double tail = 0;
    for (; s < len; ++s) tail += yc[s];
    for (std::int64_t t = len; t < len_pad; ++t) yc[t] = 0.0f;
    sum[c] += V::hsum_d(acc) + tail;
  }
}

// Issues software prefetches (to L2) for a future block while the tiles compute on the
// current one, so the memory keeps streaming during the arithmetic phase. Lines are visited
// row-interleaved; `per_step` lines per call.
struct Prefetcher {
  const char* base = nullptr;
  std::int64_t rows = 0, lines = 0, per_step = 0, ld_bytes = 0;
  std::int64_t row = 0, line = 0;  // the next line to fetch

  void step() {
    for (std::int64_t k = 0; k < per_step && line < lines; ++k) {
      __builtin_prefetch(base + row * ld_bytes + line * 64, 0, 2);
      if (++row == rows) {
        row = 0;
        ++line;
      }
    }
  }
};

// Where a tile's float accumulators live between blocks: `keep` holds them (R*R + R vectors
// per tile) when a run of blocks shares one set of float sums; `resume` loads them at the
// block's start, `flush` adds them into float64 at its end (otherwise they are stored back).
struct Carry {
  float* keep = nullptr;
  bool resume = false;
  bool flush = true;
};

// One R x R tile of channel pairs over a block: float accumulators, one per pair and lane,
// summed into float64 when the carry flushes (so each float sum has at most a run's
// samples / lanes terms; the run is at most 64 vectors, see cov_fast.cpp).
// Rows r of the tile are at yi + r*ldi (likewise yj). With SHIFT the rows are the caller's
// samples and the pilot is subtracted on load (an embedded-broadcast operand); without, they
// are the already shifted scratch rows.
template <class V, int R, bool SHIFT>
void tile(const float* yi, std::int64_t ldi, const float* pi, const float* yj, std::int64_t ldj,
          const float* pj, std::int64_t len, double* q, std::int64_t ldq, Prefetcher& pf,
          const Carry& carry) {
  typename V::T acc[R][R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < R; ++c)
      acc[r][c] = carry.resume ? V::load(carry.keep + (r * R + c) * V::kLanes) : V::zero();
  for (std::int64_t s = 0; s < len; s += V::kLanes) {
    pf.step();
    typename V::T a[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      a[r] = V::load(yi + r * ldi + s);
      if constexpr (SHIFT) a[r] = V::sub(a[r], V::set1(pi[r]));
    }
#pragma GCC unroll 8
    for (int c = 0; c < R; ++c) {
      typename V::T b = V::load(yj + c * ldj + s);
      if constexpr (SHIFT) b = V::sub(b, V::set1(pj[c]));
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc[r][c] = V::fmadd(a[r], b, acc[r][c]);
    }
  }
  if (!carry.flush) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int c = 0; c < R; ++c) V::store(carry.keep + (r * R + c) * V::kLanes, acc[r][c]);
    return;
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < R; ++c) q[r * ldq + c] += V::hsum_d(acc[r][c]);
}

// A diagonal tile: only the R(R+1)/2 pairs with c <= r (the others mirror them). With SHIFT
// it also sums its rows' shifted values (each channel is in exactly one diagonal tile), carried
// like the products.
template <class V, int R, bool SHIFT>
void tile_diag(const float* y, std::int64_t ld, const float* p, std::int64_t len, double* q,
               std::int64_t ldq, Prefetcher& pf, double* sum, const Carry& carry) {
  typename V::T acc[R][R], sacc[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    // The row sums are kept after the R x R pairs.
    sacc[r] = carry.resume ? V::load(carry.keep + (R * R + r) * V::kLanes) : V::zero();
#pragma GCC unroll 8
    for (int c = 0; c <= r; ++c)
      acc[r][c] = carry.resume ? V::load(carry.keep + (r * R + c) * V::kLanes) : V::zero();
  }
  for (std::int64_t s = 0; s < len; s += V::kLanes) {
    pf.step();
    typename V::T a[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      a[r] = V::load(y + r * ld + s);
      if constexpr (SHIFT) {
        a[r] = V::sub(a[r], V::set1(p[r]));
        sacc[r] = V::add(sacc[r], a[r]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (int c = 0; c <= r; ++c) acc[r][c] = V::fmadd(a[r], a[c], acc[r][c]);
  }
  if (!carry.flush) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      V::store(carry.keep + (R * R + r) * V::kLanes, sacc[r]);
#pragma GCC unroll 8
      for (int c = 0; c <= r; ++c) V::store(carry.keep + (r * R + c) * V::kLanes, acc[r][c]);
    }
    return;
  }
  // Without SHIFT the scratch fill added this block's sums; sacc then holds only what earlier
  // direct blocks of the run carried (zero when there were none).
  for (int r = 0; r < R; ++r) {
    if (sum) sum[r] += V::hsum_d(sacc[r]);
    for (int c = 0; c <= r; ++c) q[r * ldq + c] += V::hsum_d(acc[r][c]);
  }
}

// The prefetch plan for the block starting at sample n (none past n1 or when dist is 0).
template <class V, int R>
Prefetcher plan_prefetch(const kafel::cpu::covfast::Job& j, std::int64_t n, std::int64_t n1) {
  using kafel::cpu::covfast::FillMode;
  Prefetcher pf;
  if (j.prefetch_blocks <= 0 || j.mode == FillMode::any_i8) return pf;
  const std::int64_t start = n + j.prefetch_blocks * j.block;
  if (start >= n1) return pf;
  const std::int64_t len = n1 - start < j.block ? n1 - start : j.block;
  if (j.mode == FillMode::lanes_f32) {
    pf.base = reinterpret_cast<const char*>(j.f32() + start * j.sample_step);
    pf.rows = 1;
    pf.lines = (len * j.sample_step * 4 + 63) / 64;
  } else {  // rows of a channel: one lane (real) or (re, im) pairs (complex)
    pf.base = reinterpret_cast<const char*>(j.f32() + start * j.sample_step);
    pf.rows = j.channels / j.comps;
    pf.ld_bytes = j.channel_step * 4;
    pf.lines = (len * j.sample_step * 4 + 63) / 64;
  }
  const std::int64_t tiles = (j.padded / R) * (j.padded / R + 1) / 2;
  const std::int64_t steps = tiles * ((len + V::kLanes - 1) / V::kLanes);
  pf.per_step = (pf.lines * pf.rows + steps - 1) / steps;
  return pf;
}

// Where lower tile (ti, tj) of the grid keeps its float sums between the blocks of a run.
template <class V, int R>
Carry carry_of(const Carry& run, std::int64_t ti, std::int64_t tj) {
  const std::int64_t row = ti / R, index = row * (row + 1) / 2 + tj / R;
  Carry c = run;
  if (c.keep) c.keep += index * (R * R + R) * V::kLanes;
  return c;
}

// Every lower tile of one block of shifted scratch rows: row by row (panel 0), or in column
// panels (cpu.herk: the panel's rows stay in L2 while the rows below stream past). `sum` is
// null where lanes are padded (no direct block then carries row sums).
template <class V, int R>
void block_tiles(const kafel::cpu::covfast::Job& j, const float* y, std::int64_t len_pad, double* q,
                 double* sum, Prefetcher& pf, const Carry& run) {
  const std::int64_t P = j.padded, L = j.ld;
  const std::int64_t panel = j.panel > 0 ? (j.panel + R - 1) / R * R : P;
  for (std::int64_t jp = 0; jp < P; jp += panel)
    for (std::int64_t ti = jp; ti < P; ti += R)
      for (std::int64_t tj = jp; tj < jp + panel && tj <= ti; tj += R) {
        const Carry c = carry_of<V, R>(run, ti, tj);
        if (tj == ti)
          tile_diag<V, R, false>(y + ti * L, L, nullptr, len_pad, q + ti * P + tj, P, pf,
                                 sum ? sum + ti : nullptr, c);
        else
          tile<V, R, false>(y + ti * L, L, nullptr, y + tj * L, L, nullptr, len_pad,
                            q + ti * P + tj, P, pf, c);
      }
}

// Planar real blocks of whole vectors whose lane count is a multiple of R skip the scratch
// copy: the tiles read the caller's rows and shift on load. Everything else (interleaved or
// complex data, padded lanes, the tail block) goes through the shifted, zero-padded scratch.
// Runs of j.run_blocks blocks share one set of float sums per tile (kept after the scratch
// rows, y + P * ld), so short blocks do not pay a float64 flush each.
template <class V, int R>
void process_range(const kafel::cpu::covfast::Job& j, std::int64_t n0, std::int64_t n1, float* y,
                   double* sum, double* q) {
  const std::int64_t B = j.block, P = j.padded;
  const bool direct_ok = j.mode == kafel::cpu::covfast::FillMode::rows_f32 && j.channels == P &&
                         j.direct && j.panel == 0;
  Carry run;
  run.keep = j.run_blocks > 1 ? y + P * j.ld : nullptr;
  std::int64_t in_run = 0;  // blocks of the current run already summed
  for (std::int64_t n = n0; n < n1; n += B) {
    const std::int64_t len = n1 - n < B ? n1 - n : B;
    const std::int64_t len_pad = (len + V::kLanes - 1) / V::kLanes * V::kLanes;
    run.resume = in_run > 0;
    run.flush = !run.keep || in_run + 1 == j.run_blocks || n + B >= n1;
    in_run = run.flush ? 0 : in_run + 1;
    Prefetcher pf = plan_prefetch<V, R>(j, n, n1);
    if (direct_ok && len == len_pad) {
      const float* x = j.f32() + n;
      const std::int64_t ld = j.channel_step;
      for (std::int64_t ti = 0; ti < P; ti += R)
        for (std::int64_t tj = 0; tj <= ti; tj += R) {
          const Carry c = carry_of<V, R>(run, ti, tj);
          if (tj == ti)
            tile_diag<V, R, true>(x + ti * ld, ld, j.pilot + ti, len, q + ti * P + tj, P, pf,
                                  sum + ti, c);
          else
            tile<V, R, true>(x + ti * ld, ld, j.pilot + ti, x + tj * ld, ld, j.pilot + tj, len,
                             q + ti * P + tj, P, pf, c);
        }
      continue;
    }
    fill_block<V>(j, n, len, len_pad, y, sum);
    block_tiles<V, R>(j, y, len_pad, q, j.channels == P ? sum : nullptr, pf, run);
  }
}

}  // namespace
