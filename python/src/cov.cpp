// kafel.cov, kafel.reference_cov and kafel.signal in C++: a 2-D float32 array seen as a
// SamplesView (planar or interleaved, read from its strides), covariance() on a device.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
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

// ---- kafel.CovStream ------------------------------------------------------------------------

// One covariance shape on one device with its kernel chosen once (choose_cov): push() runs a
// block through covariance(), run() a whole source through run_cov_stream (several blocks in
// flight where the backend streams, latency statistics measured in C++).
class CovEngine {
 public:
  CovEngine(nb::handle device, std::int64_t channels, std::int64_t samples,
            const std::string& layout, std::int64_t ddof, const std::string& kernel, int depth,
            double rate, double deadline_ms)
      : device_(device_of(device)), desc_{channels, samples, parse_sample_layout(layout), ddof} {
    desc_.validate();
    choice_ = choose_cov(device_, desc_, kernel);
    opt_.depth = depth;
    opt_.rate = rate;
    opt_.deadline_ms = deadline_ms;
  }

  // (covariance, C++ total_ms) of one block shaped as the descriptor says.
  nb::tuple push(nb::handle block) {
    const Operand op = host_samples(block);
    const SamplesView s = samples_of(op, desc_.layout);
    check_block(s);
    CovOptions opt;
    opt.kernel = choice_.kernel;
    opt.params = choice_.params;
    opt.ddof = desc_.ddof;
    CovResult r;
    {
      nb::gil_scoped_release released;
      r = covariance(device_, s, opt);
    }
    return nb::make_tuple(matrix_f64(std::move(r.cov), r.channels), r.total_ms);
  }

  // Blocks from an iterable of arrays, or a generated signal ("seed", "random", "offset") in
  // static buffers as the CLI's radar case; on_result(block, covariance) for each one.
  nb::dict run(nb::handle source, std::int64_t max_blocks, nb::handle on_result) {
    CovBlockSource src = nb::isinstance<nb::str>(source)
                             ? signal_source(parse_signal(nb::cast<std::string>(source)))
                             : iterable_source(nb::iter(source));
    if (src.static_buffers && max_blocks < 0)
      throw InvalidArgument("a generated signal never ends: give blocks=N");
    CovResultHook hook;
    if (!on_result.is_none())
      hook = [&](std::int64_t b, const float*, const CovResult& r) {
        nb::gil_scoped_acquire acquired;
        std::vector<double> cov = r.cov;
        on_result(b, matrix_f64(std::move(cov), r.channels));
      };
    CovStreamStats st;
    {
      nb::gil_scoped_release released;
      st = run_cov_stream(device_, choice_, desc_, src, max_blocks, opt_, hook);
    }
    nb::dict d;
    d["blocks"] = st.blocks;
    d["latency_ms"] = st.latency_ms;
    d["startup_ms"] = st.startup_ms;
    d["wall_ms"] = st.wall_ms;
    d["median_ms"] = st.median_ms;
    d["p99_ms"] = st.p99_ms;
    d["max_ms"] = st.max_ms;
    d["blocks_per_s"] = st.blocks_per_s;
    d["missed"] = st.missed;
    return d;
  }

  const Device& device() const { return device_; }
  std::string kernel() const { return choice_.kernel; }
  std::string config() const { return choice_.config(); }

 private:
  void check_block(const SamplesView& s) const {
    if (s.channels != desc_.channels || s.samples != desc_.samples)
      throw InvalidArgument("block of " + std::to_string(s.channels) + " channels x " +
                            std::to_string(s.samples) + " samples; the stream takes " +
                            desc_.shape());
  }

  CovBlockSource signal_source(SignalKind kind) const {
    const CovDesc d = desc_;
    return {[d, kind](std::int64_t b, float* buf) {
              generate_signal(kind, buf, d.channels, d.samples, d.layout, std::uint64_t(b) + 1);
              return true;
            },
            /*static_buffers=*/true};
  }

  // Each next() of the iterable is copied into the stream's buffer (tight, the stream's layout).
  CovBlockSource iterable_source(nb::iterator it) const {
    const CovDesc d = desc_;
    auto shared = std::make_shared<nb::iterator>(std::move(it));
    return {[this, d, shared](std::int64_t, float* buf) {
              nb::gil_scoped_acquire acquired;
              nb::iterator& i = *shared;
              if (i == nb::iterator::sentinel()) return false;
              const Operand op = host_samples(*i);
              const SamplesView s = samples_of(op, d.layout);
              check_block(s);
              copy_tight(s, d.layout, buf);
              ++i;
              return true;
            },
            /*static_buffers=*/false};
  }

  // `s` into a tight block of `layout` (the stream's): row copies when the layouts agree.
  static void copy_tight(const SamplesView& s, SampleLayout layout, float* out) {
    const bool planar = layout == SampleLayout::Planar;
    const std::int64_t outer = planar ? s.channels : s.samples;
    const std::int64_t inner = planar ? s.samples : s.channels;
    if (s.layout == layout) {
      for (std::int64_t r = 0; r < outer; ++r)
        std::memcpy(out + r * inner, static_cast<const float*>(s.data) + r * s.tight_stride(),
                    std::size_t(inner) * 4);
      return;
    }
    for (std::int64_t r = 0; r < outer; ++r)
      for (std::int64_t i = 0; i < inner; ++i)
        out[r * inner + i] = static_cast<float>(planar ? s.re(r, i) : s.re(i, r));
  }

  Device device_;
  CovDesc desc_;
  CovChoice choice_;
  CovStreamOptions opt_;
};

}  // namespace

void bind_cov(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<CovEngine>(m, "CovEngine", "The C++ side of kafel.CovStream.")
      .def(nb::init<nb::handle, std::int64_t, std::int64_t, const std::string&, std::int64_t,
                    const std::string&, int, double, double>(),
           "device"_a.none(), "channels"_a, "samples"_a, "layout"_a, "ddof"_a, "kernel"_a,
           "depth"_a, "rate"_a, "deadline_ms"_a)
      .def("push", &CovEngine::push, "block"_a)
      .def("run", &CovEngine::run, "source"_a, "max_blocks"_a, "on_result"_a.none())
      .def_prop_ro("device", &CovEngine::device)
      .def_prop_ro("kernel", &CovEngine::kernel)
      .def_prop_ro("config", &CovEngine::config);
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
