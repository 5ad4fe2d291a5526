// Sample generators: the radar article's signal (float arithmetic, as SPEC §2 writes it),
// seeded normal data and offset data. Sample ranges run on the CPU thread pool.
#include "kafel/signal.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/thread_pool.hpp"
#include "kafel/error.hpp"

namespace kafel {

std::string_view to_string(SignalKind k) {
  switch (k) {
    case SignalKind::Seed:
      return "seed";
    case SignalKind::Random:
      return "random";
    case SignalKind::Offset:
      return "offset";
  }
  return "?";
}

SignalKind parse_signal(std::string_view s) {
  if (s == "seed" || s == "article") return SignalKind::Seed;
  if (s == "random" || s == "normal") return SignalKind::Random;
  if (s == "offset") return SignalKind::Offset;
  throw InvalidArgument("unknown signal '" + std::string(s) +
                        "' (expected seed, random or offset)");
}

namespace {

// Runs fn(begin, end) over [0, count) split into contiguous parts (at most one per thread of
// the CPU kernels' default, at least 65536 items each). Every item's value depends only on its
// index, so the output is the same for any split.
template <class Fn>
void parallel_ranges(std::int64_t count, Fn fn) {
  const std::int64_t threads = std::clamp(default_threads(), 1, 64);
  const int parts =
      static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(1, count / 65536)));
  if (parts <= 1) return fn(std::int64_t(0), count);
  parallel_parts(parts, parts, [&](int p, int) { fn(count * p / parts, count * (p + 1) / parts); });
}

// The ten channels of the article at sample index n, in float (std:: float overloads).
void seed_sample(std::int64_t n, float v[10]) {
  const float x = static_cast<float>(n);
  v[0] = std::sin(x) + std::cos(x);
  v[1] = std::exp(v[0]) + std::exp(-1.0f * x);
  v[2] = std::sin(v[1]) * std::cos(v[0]) + v[1];
  v[3] = std::hypot(v[0], v[2]);
  v[4] = std::cbrt(v[0]);
  v[5] = std::sin(v[1]) + std::cos(v[0]);
  v[6] = std::exp(v[2]) + std::exp(-1.0f * v[4]);
  v[7] = std::sin(v[1]) * std::cos(v[0]) + std::cos(v[3]) * std::sin(v[2]);
  v[8] = std::hypot(v[2], v[1]);
  v[9] = std::cbrt(v[3]);
}

constexpr std::int64_t kRepeatShift = 7919;

void check_gen(const float* out, std::int64_t channels, std::int64_t samples) {
  if (channels < 0 || samples < 0) throw InvalidArgument("signal: negative size");
  if (channels * samples > 0 && out == nullptr) throw InvalidArgument("signal: null output");
}

}  // namespace

void generate_seed_signal(float* out, std::int64_t channels, std::int64_t samples,
                          SampleLayout layout, std::int64_t stride, std::int64_t first) {
  check_gen(out, channels, samples);
  const std::int64_t ld = stride ? stride : (layout == SampleLayout::Planar ? samples : channels);
  const std::int64_t repeats = (channels + 9) / 10;
  parallel_ranges(samples, [&](std::int64_t b, std::int64_t e) {
    float vals[10];
    for (std::int64_t n = b; n < e; ++n)
      for (std::int64_t r = 0; r < repeats; ++r) {
        seed_sample(first + n + kRepeatShift * r, vals);
        for (std::int64_t k = 0; k < 10 && 10 * r + k < channels; ++k) {
          const std::int64_t c = 10 * r + k;
          (layout == SampleLayout::Planar ? out[c * ld + n] : out[n * ld + c]) = vals[k];
        }
      }
  });
}

void generate_random_signal(float* out, std::int64_t channels, std::int64_t samples,
                            SampleLayout layout, std::uint64_t seed, double mean, double stddev,
                            std::int64_t stride) {
  check_gen(out, channels, samples);
  const std::int64_t ld = stride ? stride : (layout == SampleLayout::Planar ? samples : channels);
  // Chunks of samples seeded by (seed, chunk): the data does not depend on the thread count.
  constexpr std::int64_t kChunk = 16384;
  const std::int64_t chunks = (samples + kChunk - 1) / kChunk;
  parallel_ranges(chunks, [&](std::int64_t cb, std::int64_t ce) {
    for (std::int64_t ch = cb; ch < ce; ++ch) {
      std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(ch));
      std::normal_distribution<double> dist(mean, stddev);
      const std::int64_t e = std::min(samples, (ch + 1) * kChunk);
      for (std::int64_t n = ch * kChunk; n < e; ++n)
        for (std::int64_t c = 0; c < channels; ++c)
          (layout == SampleLayout::Planar ? out[c * ld + n] : out[n * ld + c]) =
              static_cast<float>(dist(rng));
    }
  });
}

void generate_signal(SignalKind kind, float* out, std::int64_t channels, std::int64_t samples,
                     SampleLayout layout, std::uint64_t seed, std::int64_t stride) {
  switch (kind) {
    case SignalKind::Seed:
      return generate_seed_signal(out, channels, samples, layout, stride);
    case SignalKind::Random:
      return generate_random_signal(out, channels, samples, layout, seed, 0.0, 1.0, stride);
    case SignalKind::Offset:
      return generate_random_signal(out, channels, samples, layout, seed, 1e4, 1.0, stride);
  }
}

namespace {

// Lane values (2C lanes for complex types), planar lanes x N, of batch b as floats.
std::vector<float> lane_signal(SignalKind kind, DType type, std::int64_t lanes,
                               std::int64_t samples, std::uint64_t seed, std::int64_t b) {
  std::vector<float> v(static_cast<std::size_t>(lanes * samples));
  const bool ints = type == DType::ci8 || type == DType::ci16;
  if (kind == SignalKind::Seed)
    generate_seed_signal(v.data(), lanes, samples, SampleLayout::Planar, 0, b * samples);
  else  // integer types take N(0, 1) and scale it themselves
    generate_random_signal(v.data(), lanes, samples, SampleLayout::Planar,
                           seed + static_cast<std::uint64_t>(b),
                           kind == SignalKind::Offset && !ints ? 1e4 : 0.0, 1.0);
  return v;
}

template <class T>
T quantise(SignalKind kind, float x, double scale, double offset, double max) {
  const double v = kind == SignalKind::Seed     ? scale * x / 4
                   : kind == SignalKind::Offset ? offset + scale * x / 2
                                                : scale * x;
  return static_cast<T>(std::clamp(std::nearbyint(v), -max - 1, max));
}

}  // namespace

void generate_samples(SignalKind kind, DType type, void* out, std::int64_t channels,
                      std::int64_t samples, SampleLayout layout, std::uint64_t seed,
                      std::int64_t batch) {
  check_gen(static_cast<const float*>(out), channels, samples);
  if (batch < 1) throw InvalidArgument("signal: batch must be >= 1");
  if (type != DType::f32 && type != DType::c64 && type != DType::ci8 && type != DType::ci16)
    throw InvalidArgument("signal: no generator for " + std::string(to_string(type)) +
                          " samples (f32, cf32, ci8, ci16)");
  const int comps = is_complex(type) ? 2 : 1;
  const std::int64_t lanes = comps * channels, per_batch = lanes * samples;
  const bool planar = layout == SampleLayout::Planar;
  for (std::int64_t b = 0; b < batch; ++b) {
    if (type == DType::f32) {
      float* o = static_cast<float*>(out) + b * per_batch;
      if (kind == SignalKind::Seed)
        generate_seed_signal(o, channels, samples, layout, 0, b * samples);
      else
        generate_signal(kind, o, channels, samples, layout, seed + static_cast<std::uint64_t>(b));
      continue;
    }
    const std::vector<float> v = lane_signal(kind, type, lanes, samples, seed, b);
    // Component index of lane k, sample n within the batch (complex: re/im pairs).
    auto index = [&](std::int64_t k, std::int64_t n) {
      const std::int64_t c = k / comps, part = k % comps;
      return (planar ? c * samples + n : n * channels + c) * comps + part;
    };
    for (std::int64_t k = 0; k < lanes; ++k)
      for (std::int64_t n = 0; n < samples; ++n) {
        const float x = v[k * samples + n];
        const std::int64_t i = b * per_batch + index(k, n);
        if (type == DType::c64)
          static_cast<float*>(out)[i] = x;
        else if (type == DType::ci8)
          static_cast<std::int8_t*>(out)[i] = quantise<std::int8_t>(kind, x, 20, 100, 127);
        else
          static_cast<std::int16_t*>(out)[i] = quantise<std::int16_t>(kind, x, 2000, 10000, 32767);
      }
  }
}

}  // namespace kafel
