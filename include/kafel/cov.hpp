// Covariance of C channels x N float32 samples on any device (numpy/MATLAB `cov` semantics).
// Also the float64 two-pass reference (the oracle of every test) and the error measure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/params.hpp"
#include "kafel/types.hpp"

namespace kafel {

// Planar: channel c, sample n at data[c*stride + n] (C x N, the article's layout).
// Interleaved: at data[n*stride + c] (N x C, sample-major, as ADCs deliver).
// SampleLayout { Planar, Interleaved } and parse_sample_layout are in kafel/types.hpp.

// A block of float32 samples; stride 0 means tight (N for planar, C for interleaved).
struct SamplesView {
  const float* data = nullptr;
  std::int64_t channels = 0;
  std::int64_t samples = 0;
  SampleLayout layout = SampleLayout::Planar;
  std::int64_t stride = 0;

  std::int64_t tight_stride() const {
    return stride ? stride : (layout == SampleLayout::Planar ? samples : channels);
  }
  float at(std::int64_t c, std::int64_t n) const {
    return layout == SampleLayout::Planar ? data[c * tight_stride() + n]
                                          : data[n * tight_stride() + c];
  }
};

struct CovOptions {
  std::string kernel;     // e.g. "cpu.fast"; empty = the device's default for the shape
  Params params;          // overrides of the kernel's parameters
  std::int64_t ddof = 1;  // divisor N - ddof (1: sample covariance, 0: population)
};

struct CovResult {
  std::int64_t channels = 0, samples = 0, ddof = 1;
  std::vector<double> cov;     // C x C, row-major, full symmetric, float64
  std::vector<float> cov_f32;  // the same rounded to float32
  std::vector<double> mean;    // C channel means
  std::string kernel;
  double kernel_ms = 0;          // the kernel alone (device events where the backend has them)
  double total_ms = 0;           // including transfers
  std::int64_t nan_entries = 0;  // entries of cov that are NaN (NaN in the data propagates)

  double at(std::int64_t i, std::int64_t j) const { return cov[i * channels + j]; }
};

// Covariance on `device`. Throws InvalidArgument for C < 1, N <= ddof, a null pointer or a
// stride too small; Unsupported when the chosen kernel cannot do the shape.
CovResult covariance(const Device& device, const SamplesView& samples, const CovOptions& opt = {});

// Float64 two-pass reference: means in double, then sums of centred products in double.
CovResult reference_covariance(const SamplesView& samples, std::int64_t ddof = 1);

// ||cov - ref||_F / ||ref||_F over the full matrices in float64 (NaN entries of both ignored
// when they coincide; a NaN in one but not the other gives an infinite error).
double cov_rel_err(const CovResult& cov, const CovResult& ref);

}  // namespace kafel
