// Shared covariance test body for every backend (see cov_checks.hpp): the complex128 oracle,
// the case matrix, windows, forgetting and forward-backward averaging by their definitions.
#include "common/cov_checks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>

#include "kafel/error.hpp"

namespace kafel::test {

namespace {

using cplx = std::complex<double>;

// Sample (c, n) of batch b, read from the raw components with the view's strides.
cplx sample(const SamplesView& v, std::int64_t c, std::int64_t n, std::int64_t b) {
  const bool planar = v.layout == SampleLayout::Planar;
  const std::int64_t ld = v.stride ? v.stride : (planar ? v.samples : v.channels);
  const std::int64_t bs = v.batch_stride ? v.batch_stride : ld * (planar ? v.channels : v.samples);
  const std::int64_t e = b * bs + (planar ? c * ld + n : n * ld + c);
  switch (v.type) {
    case DType::f32:
      return {static_cast<const float*>(v.data)[e], 0.0};
    case DType::c64: {
      const float* p = static_cast<const float*>(v.data) + 2 * e;
      return {p[0], p[1]};
    }
    case DType::ci8: {
      const auto* p = static_cast<const std::int8_t*>(v.data) + 2 * e;
      return {double(p[0]), double(p[1])};
    }
    case DType::ci16: {
      const auto* p = static_cast<const std::int16_t*>(v.data) + 2 * e;
      return {double(p[0]), double(p[1])};
    }
    default:
      ADD_FAILURE() << "no test reader for " << to_string(v.type);
      return {};
  }
}

std::size_t at(std::int64_t c, std::int64_t b, std::int64_t i, std::int64_t j) {
  return static_cast<std::size_t>((b * c + i) * c + j);
}

// The full complex matrix of batch b of a result.
std::vector<cplx> matrix_of(const CovResult& r, std::int64_t b) {
  const std::int64_t c = r.channels;
  std::vector<cplx> m(static_cast<std::size_t>(c * c));
  for (std::int64_t i = 0; i < c; ++i)
    for (std::int64_t j = 0; j < c; ++j) m[i * c + j] = {r.at(i, j, b), r.imag_at(i, j, b)};
  return m;
}

double rel_frobenius(const std::vector<cplx>& got, const std::vector<cplx>& want) {
  double num = 0, den = 0;
  for (std::size_t k = 0; k < want.size(); ++k) {
    num += std::norm(got[k] - want[k]);
    den += std::norm(want[k]);
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

std::string case_name(const std::string& kernel, SignalKind kind, DType type, std::int64_t c,
                      std::int64_t n, SampleLayout l, std::int64_t batch) {
  return kernel + " " + std::string(to_string(kind)) + " " + std::string(to_string(type)) + " " +
         std::to_string(batch) + "x" + std::to_string(c) + "x" + std::to_string(n) + " " +
         std::string(to_string(l));
}

}  // namespace

CovSamples make_cov_samples(SignalKind kind, DType type, std::int64_t channels,
                            std::int64_t samples, SampleLayout layout, std::int64_t batch,
                            std::uint64_t seed) {
  CovSamples s;
  // Bytes in float-aligned storage (generate_samples checks a float pointer).
  s.bytes.resize(static_cast<std::size_t>(batch * channels * samples) * dtype_size(type) + 4);
  generate_samples(kind, type, s.bytes.data(), channels, samples, layout, seed, batch);
  s.view.data = s.bytes.data();
  s.view.channels = channels;
  s.view.samples = samples;
  s.view.layout = layout;
  s.view.type = type;
  s.view.batch = batch;
  return s;
}

CovResult naive_covariance(const SamplesView& v, std::int64_t ddof) {
  const std::int64_t c = v.channels, n = v.samples, nb = v.batch;
  const bool cx = is_complex(v.type);
  CovResult r;
  r.channels = c;
  r.samples = n;
  r.ddof = ddof;
  r.batch = nb;
  r.type = v.type;
  r.cov.assign(static_cast<std::size_t>(nb * c * c), 0.0);
  r.mean.assign(static_cast<std::size_t>(nb * c), 0.0);
  if (cx) {
    r.cov_im = r.cov;
    r.mean_im = r.mean;
  }
  for (std::int64_t b = 0; b < nb; ++b) {
    std::vector<cplx> mean(static_cast<std::size_t>(c));
    for (std::int64_t i = 0; i < c; ++i) {
      for (std::int64_t k = 0; k < n; ++k) mean[i] += sample(v, i, k, b);
      mean[i] /= double(n);
      r.mean[b * c + i] = mean[i].real();
      if (cx) r.mean_im[b * c + i] = mean[i].imag();
    }
    for (std::int64_t i = 0; i < c; ++i)
      for (std::int64_t j = 0; j <= i; ++j) {
        cplx s = 0;
        for (std::int64_t k = 0; k < n; ++k)
          s += (sample(v, i, k, b) - mean[i]) * std::conj(sample(v, j, k, b) - mean[j]);
        s /= double(n - ddof);
        r.cov[at(c, b, i, j)] = r.cov[at(c, b, j, i)] = s.real();
        if (cx && i != j) {
          r.cov_im[at(c, b, i, j)] = s.imag();
          r.cov_im[at(c, b, j, i)] = -s.imag();
        }
      }
  }
  if (!cx) r.cov_f32.assign(r.cov.begin(), r.cov.end());
  return r;
}

void expect_hermitian(const CovResult& r, const std::string& what) {
  const std::int64_t c = r.channels;
  std::int64_t bad = 0;
  for (std::int64_t b = 0; b < r.batch; ++b)
    for (std::int64_t i = 0; i < c; ++i) {
      if (r.imag_at(i, i, b) != 0.0) ++bad;
      for (std::int64_t j = 0; j < i; ++j) {
        if (r.at(i, j, b) != r.at(j, i, b)) ++bad;
        if (r.imag_at(i, j, b) != -r.imag_at(j, i, b)) ++bad;
      }
    }
  EXPECT_EQ(bad, 0) << what << ": entries that break exact Hermitian symmetry";
  EXPECT_EQ(r.complex(), is_complex(r.type)) << what;
}

double check_cov_case(const Device& device, const std::string& kernel, SignalKind kind, DType type,
                      std::int64_t channels, std::int64_t samples, SampleLayout layout,
                      std::int64_t batch, double tol, const Params& params) {
  const std::string what = device.id + " " +
                           case_name(kernel, kind, type, channels, samples, layout, batch) +
                           (params.empty() ? "" : " " + format_params(params));
  const CovSamples s = make_cov_samples(kind, type, channels, samples, layout, batch);
  CovOptions o;
  o.kernel = kernel;
  o.params = params;
  CovResult got;
  try {
    got = covariance(device, s.view, o);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
    return INFINITY;
  }
  const CovResult want = naive_covariance(s.view);
  const bool ints = type == DType::ci8 || type == DType::ci16;
  const double limit = ints ? 1e-12 : tol;
  EXPECT_EQ(got.batch, batch) << what;
  EXPECT_EQ(got.cov.size(), want.cov.size()) << what;
  if (got.cov.size() != want.cov.size()) return INFINITY;
  expect_hermitian(got, what);
  double worst = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    const double err = rel_frobenius(matrix_of(got, b), matrix_of(want, b));
    worst = std::max(worst, err);
    EXPECT_LE(err, limit) << what << " batch " << b;
    for (std::int64_t i = 0; i < channels; ++i) {
      const std::size_t k = static_cast<std::size_t>(b * channels + i);
      const cplx gm{got.mean[k], got.complex() ? got.mean_im[k] : 0.0};
      const cplx wm{want.mean[k], want.complex() ? want.mean_im[k] : 0.0};
      EXPECT_LE(std::abs(gm - wm), 1e-6 * (1 + std::abs(wm))) << what << " mean " << i;
    }
  }
  return worst;
}

void check_cov_kernel(const Device& device, const std::string& kernel,
                      const std::vector<DType>& types, std::int64_t max_channels, bool heavy) {
  struct Size {
    std::int64_t c;
    std::vector<std::int64_t> n;
  };
  std::vector<Size> sizes = {{1, {2, 3, 1001}}, {2, {2, 97}},   {10, {3, 1001}}, {15, {2, 257}},
                             {16, {5, 509}},    {17, {2, 127}}, {33, {3, 131}},  {64, {2, 67}},
                             {100, {7, 61}},    {256, {3, 37}}};
  if (heavy) sizes.push_back({1024, {5}});
  const SampleLayout layouts[] = {SampleLayout::Planar, SampleLayout::Interleaved};
  for (DType t : types)
    for (const Size& s : sizes) {
      if (max_channels && s.c > max_channels) continue;
      for (std::int64_t n : s.n)
        for (SampleLayout l : layouts) {
          check_cov_case(device, kernel, SignalKind::Offset, t, s.c, n, l);
          if (s.c <= 64) check_cov_case(device, kernel, SignalKind::Random, t, s.c, n, l);
        }
    }
  // Batches, several channel counts, both layouts; the article's signal for f32.
  for (DType t : types)
    for (std::int64_t c : {1, 10, 33})
      for (SampleLayout l : layouts) {
        if (max_channels && c > max_channels) continue;
        check_cov_case(device, kernel, SignalKind::Offset, t, c, 129, l, 3);
        check_cov_case(device, kernel, t == DType::f32 ? SignalKind::Seed : SignalKind::Random, t,
                       c, 2003, l, 2);
      }
  // One sample: only ddof 0 admits it (a zero matrix), ddof 1 is refused.
  for (DType t : types) {
    const CovSamples one = make_cov_samples(SignalKind::Random, t, 3, 1, SampleLayout::Planar);
    CovOptions o;
    o.kernel = kernel;
    o.ddof = 0;
    const CovResult r = covariance(device, one.view, o);
    for (double v : r.cov) EXPECT_EQ(v, 0.0) << kernel << " " << to_string(t) << " N=1 ddof 0";
    o.ddof = 1;
    EXPECT_THROW(covariance(device, one.view, o), InvalidArgument) << kernel;
  }
}

namespace {

// Forward-backward averaging by its definition: (R + J conj(R) J) / 2.
std::vector<cplx> fb_of(const std::vector<cplx>& r, std::int64_t c) {
  std::vector<cplx> out(r.size());
  for (std::int64_t i = 0; i < c; ++i)
    for (std::int64_t j = 0; j < c; ++j)
      out[i * c + j] = (r[i * c + j] + std::conj(r[(c - 1 - i) * c + (c - 1 - j)])) / 2.0;
  return out;
}

void check_windows_case(const Device& device, const std::string& kernel, DType type,
                        std::int64_t channels, std::int64_t samples, SampleLayout layout,
                        const CovWindowOptions& w) {
  const std::string what = device.id + " " + kernel + " " + std::string(to_string(type)) + " " +
                           std::to_string(channels) + "x" + std::to_string(samples) + " " +
                           std::string(to_string(layout)) + " window " + std::to_string(w.window) +
                           " hop " + std::to_string(w.hop) + " forget " + std::to_string(w.forget) +
                           (w.forward_backward ? " fb" : "");
  const CovSamples s = make_cov_samples(SignalKind::Offset, type, channels, samples, layout);
  CovOptions o;
  o.kernel = kernel;
  std::vector<CovResult> got;
  try {
    got = covariance_windows(device, s.view, w, o);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
    return;
  }
  // Direct recomputation: every window as its own batch of the same samples.
  const std::int64_t hop = w.hop ? w.hop : w.window;
  const std::int64_t count = (samples - w.window) / hop + 1;
  SamplesView windows = s.view;
  windows.samples = w.window;
  windows.stride = layout == SampleLayout::Planar ? samples : channels;
  windows.batch = count;
  windows.batch_stride = hop * (layout == SampleLayout::Planar ? 1 : channels);
  const CovResult direct = naive_covariance(windows);
  ASSERT_EQ(static_cast<std::int64_t>(got.size()), count) << what;
  std::vector<cplx> state;
  for (std::int64_t k = 0; k < count; ++k) {
    std::vector<cplx> want = matrix_of(direct, k);
    if (w.forget > 0) {
      if (k == 0) state = want;
      for (std::size_t e = 0; k > 0 && e < state.size(); ++e)
        state[e] = w.forget * state[e] + (1 - w.forget) * want[e];
      want = state;
    }
    if (w.forward_backward) want = fb_of(want, channels);
    const double err = rel_frobenius(matrix_of(got[k], 0), want);
    EXPECT_LE(err, 1e-6) << what << " estimate " << k;
    expect_hermitian(got[k], what);
  }
}

}  // namespace

void check_cov_windows(const Device& device, const std::string& kernel, DType type,
                       std::int64_t max_channels) {
  const SampleLayout layouts[] = {SampleLayout::Planar, SampleLayout::Interleaved};
  const std::int64_t wide = max_channels ? std::min<std::int64_t>(17, max_channels) : 17;
  for (SampleLayout l : layouts) {
    check_windows_case(device, kernel, type, 5, 1000, l, {256, 128, 0, false});  // segments
    check_windows_case(device, kernel, type, 5, 1000, l, {100, 30, 0, false});   // direct
    check_windows_case(device, kernel, type, wide, 700, l, {200, 0, 0, false});  // no overlap
    check_windows_case(device, kernel, type, 6, 1000, l, {192, 64, 0.9, false});
    check_windows_case(device, kernel, type, 6, 1000, l, {100, 50, 0.75, true});
  }
  const CovSamples s = make_cov_samples(SignalKind::Random, type, 4, 100, SampleLayout::Planar);
  CovOptions o;
  o.kernel = kernel;
  EXPECT_THROW(covariance_windows(device, s.view, {101, 0, 0, false}, o), InvalidArgument);
  EXPECT_THROW(covariance_windows(device, s.view, {50, 51, 0, false}, o), InvalidArgument);
  EXPECT_THROW(covariance_windows(device, s.view, {50, 10, 1.0, false}, o), InvalidArgument);
  EXPECT_THROW(covariance_windows(device, s.view, {0, 10, 0, false}, o), InvalidArgument);
}

}  // namespace kafel::test
