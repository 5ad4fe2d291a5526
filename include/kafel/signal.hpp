// Sample generators for covariance: the radar article's test signal, random normal data, and
// random data with a large offset (mean 1e4, std 1) that punishes naive one-pass formulas.
#pragma once

#include <cstdint>
#include <string_view>

#include "kafel/cov.hpp"

namespace kafel {

enum class SignalKind { Seed, Random, Offset };

std::string_view to_string(SignalKind k);
// "seed" (also "article"), "random", "offset"; throws InvalidArgument.
SignalKind parse_signal(std::string_view s);

// The article's signal for samples n = first .. first+N-1 (float arithmetic, as SPEC §2):
//   v0 = sin(n)+cos(n); v1 = exp(v0)+exp(-n); v2 = sin(v1)cos(v0)+v1; v3 = hypot(v0,v2);
//   v4 = cbrt(v0); v5 = sin(v1)+cos(v0); v6 = exp(v2)+exp(-v4);
//   v7 = sin(v1)cos(v0)+cos(v3)sin(v2); v8 = hypot(v2,v1); v9 = cbrt(v3).
// Channels beyond 10 repeat the ten formulas on a shifted index: channel c = 10*r + k is
// v_k evaluated at n + 7919*r (a prime, so repeats are not copies of each other).
// `out` is written in `layout` with the given stride (0 = tight). Multi-threaded.
void generate_seed_signal(float* out, std::int64_t channels, std::int64_t samples,
                          SampleLayout layout, std::int64_t stride = 0, std::int64_t first = 0);

// N(mean, stddev) samples from a seeded generator, reproducible for (seed, C, N), any layout.
void generate_random_signal(float* out, std::int64_t channels, std::int64_t samples,
                            SampleLayout layout, std::uint64_t seed, double mean = 0.0,
                            double stddev = 1.0, std::int64_t stride = 0);

// One of the three kinds: Random is N(0,1), Offset is N(1e4, 1).
void generate_signal(SignalKind kind, float* out, std::int64_t channels, std::int64_t samples,
                     SampleLayout layout, std::uint64_t seed = 1, std::int64_t stride = 0);

// A tight block of any covariance sample type: `batch` blocks of C channels x N samples in
// `layout`, back to back. f32 is generate_signal (batch b with seed + b, the seed signal
// continuing at sample b*N). Complex types pair the lanes of the real 2C-channel signal
// (channel c = lane 2c + i lane 2c+1), so the offset kind is (1e4 + noise) + i(1e4 + noise).
// Integer types quantise, clamped to their range: random round(s x) with s = 20 (ci8) or 2000
// (ci16); offset round(m + s x / 2) with m = 100 (ci8) or 10000 (ci16) and x ~ N(0, 1); seed
// round(s x / 4) of the article's signal.
void generate_samples(SignalKind kind, DType type, void* out, std::int64_t channels,
                      std::int64_t samples, SampleLayout layout, std::uint64_t seed = 1,
                      std::int64_t batch = 1);

}  // namespace kafel
