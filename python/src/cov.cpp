// kafel.cov, kafel.reference_cov and kafel.signal in C++: a 2-D float32 array seen as a
// SamplesView (planar or interleaved, read from its strides), covariance() on a device.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <vector>

#include "binding.hpp"
#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "kafel/signal.hpp"

namespace kafel::py {
namespace {

// The samples of `x` with channels along rows (planar) or columns (interleaved), in whichever
// memory order x has; `owner` holds a tight copy when its strides map to no layout.
SamplesView samples_of(const Operand& x, SampleLayout channels_along) {
  if (x.view.dtype != DType::f32)
    throw InvalidArgument("kafel.cov takes float32 samples, got " + numpy_name(x.view.dtype) +
                          "; convert with x.astype(numpy.float32)");
  const bool rows_are_channels = channels_along == SampleLayout::Planar;
  const bool row_major = x.view.layout == Layout::RowMajor;
  SamplesView s;
  s.data = static_cast<const float*>(x.view.data);
  s.channels = rows_are_channels ? x.view.rows : x.view.cols;
  s.samples = rows_are_channels ? x.view.cols : x.view.rows;
  // Row-major storage keeps each row contiguous: planar when rows are channels.
  s.layout = row_major == rows_are_channels ? SampleLayout::Planar : SampleLayout::Interleaved;
  s.stride = x.view.ld;
  return s;
}

nb::object matrix_f64(std::vector<double>&& values, std::int64_t n) {
  auto* owned = new std::vector<double>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  const std::size_t shape[2] = {std::size_t(n), std::size_t(n)};
  return nb::ndarray<nb::numpy, double>(owned->data(), 2, shape, owner).cast();
}

const Device& device_of(nb::handle device) {
  if (device.is_none()) return cached_device("");
  if (nb::isinstance<nb::str>(device)) return cached_device(nb::cast<std::string>(device));
  return nb::cast<const Device&>(device);
}

Operand host_samples(nb::handle x) {
  Operand op = to_operand(x, "x");
  const int t = op.array.device_type();
  if (t != kDlCpu && t != kDlCudaHost)
    throw InvalidArgument("kafel.cov takes host arrays (numpy); this one lives in device memory");
  return op;
}

// (covariance float64 C x C, kernel, kernel_ms, total_ms as the C++ call measured them).
nb::tuple cov_host(nb::handle x, std::int64_t ddof, const std::string& layout, nb::handle device,
                    const std::string& kernel) {
  const Device& dev = device_of(device);
  const Operand op = host_samples(x);
  const SamplesView s = samples_of(op, parse_sample_layout(layout));
  CovOptions opt;
  opt.kernel = kernel;
  opt.ddof = ddof;
  CovResult r;
  {
    nb::gil_scoped_release released;
    r = covariance(dev, s, opt);
  }
  return nb::make_tuple(matrix_f64(std::move(r.cov), r.channels), r.kernel, r.kernel_ms,
                       r.total_ms);
}

nb::object reference_cov(nb::handle x, std::int64_t ddof, const std::string& layout) {
  const Operand op = host_samples(x);
  const SamplesView s = samples_of(op, parse_sample_layout(layout));
  CovResult r;
  {
    nb::gil_scoped_release released;
    r = reference_covariance(s, ddof);
  }
  return matrix_f64(std::move(r.cov), r.channels);
}

nb::object signal(const std::string& kind, std::int64_t channels, std::int64_t samples,
                  const std::string& layout, std::uint64_t seed, std::int64_t first) {
  if (channels < 1 || samples < 1)
    throw InvalidArgument("a signal needs channels >= 1 and samples >= 1 (got " +
                          std::to_string(channels) + " x " + std::to_string(samples) + ")");
  const SignalKind k = parse_signal(kind);
  const SampleLayout l = parse_sample_layout(layout);
  const bool planar = l == SampleLayout::Planar;
  auto [array, view] =
      new_host_matrix(DType::f32, planar ? channels : samples, planar ? samples : channels);
  auto* out = static_cast<float*>(view.data);
  nb::gil_scoped_release released;
  if (k == SignalKind::Seed)
    generate_seed_signal(out, channels, samples, l, 0, first);
  else
    generate_signal(k, out, channels, samples, l, seed);
  return array;
}

}  // namespace

void bind_cov(nb::module_& m) {
  using namespace nb::literals;
  m.def("cov_host", &cov_host, "x"_a, "ddof"_a, "layout"_a, "device"_a.none(), "kernel"_a,
        "Covariance of a float32 host array and (kernel, kernel_ms, total_ms); see kafel.cov.");
  m.def("reference_cov", &reference_cov, "x"_a, "ddof"_a = 1, "layout"_a = "planar",
        "The float64 two-pass reference covariance (kafel's oracle) of a float32 host array.");
  m.def("signal", &signal, "kind"_a, "channels"_a, "samples"_a, "layout"_a = "planar", "seed"_a = 1,
        "first"_a = 0,
        "Test samples as kafel's generators make them: 'seed' (the radar article's signal, "
        "samples first .. first+samples-1), 'random' N(0, 1) or 'offset' N(1e4, 1). Planar: "
        "shape (channels, samples); interleaved: (samples, channels). float32.");
}

}  // namespace kafel::py
