// kafel.gemm and kafel.GemmPlan in C++: host arrays (NumPy, buffer protocol, CPU DLPack) run
// through kafel::gemm / PreparedGemm, arrays in GPU memory (DLPack capsules the Python layer
// took on the right stream) through gemm_device. The GIL is released while the device works.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <algorithm>
#include <vector>

#include "binding.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"
#include "kafel/gemm.hpp"
#include "kafel/kernels.hpp"

namespace kafel::py {
namespace {

std::string dims(std::int64_t r, std::int64_t c) {
  return std::to_string(r) + "x" + std::to_string(c);
}

const Device& resolve_device(nb::handle device) {
  if (device.is_none()) return cached_device("");
  if (nb::isinstance<nb::str>(device)) return cached_device(nb::cast<std::string>(device));
  if (nb::isinstance<Device>(device)) return nb::cast<const Device&>(device);
  throw InvalidArgument("device must be a kafel.Device, a name such as 'cuda:0', or None; got " +
                        std::string(nb::type_name(device.type()).c_str()));
}

// What every GEMM call shares besides its operands.
struct GemmCall {
  Op op_a = Op::N, op_b = Op::N;
  double alpha = 1, beta = 0;
  GemmOptions opt;

  std::int64_t m(const MatrixView& a) const { return op_a == Op::N ? a.rows : a.cols; }
  std::int64_t n(const MatrixView& b) const { return op_b == Op::N ? b.cols : b.rows; }
  // C's element type when the caller gives no array for it: the natural one for A's type.
  DType natural_c(DType a) const {
    return GemmTypes::of(a, opt.compute ? *opt.compute : default_compute(a)).c;
  }
  GemmDesc desc(const MatrixView& a, const MatrixView& b, const MatrixView& c) const {
    const std::int64_t k = op_a == Op::N ? a.cols : a.rows;
    const Compute compute = opt.compute ? *opt.compute : default_compute(a.dtype);
    GemmTypes types;
    types.a = a.dtype;
    types.b = b.dtype;
    types.c = c.dtype;
    types.compute = compute;
    return GemmDesc{m(a), n(b), k, op_a, op_b, alpha, beta, types};
  }
};

GemmCall make_call(double alpha, double beta, bool trans_a, bool trans_b, const std::string& kernel,
                   const std::optional<std::string>& compute) {
  GemmCall call;
  call.op_a = trans_a ? Op::T : Op::N;
  call.op_b = trans_b ? Op::T : Op::N;
  call.alpha = alpha;
  call.beta = beta;
  call.opt.kernel = kernel;
  if (compute) call.opt.compute = parse_compute(*compute);
  return call;
}

void check_shape(const Operand& x, std::int64_t m, std::int64_t n, const char* what) {
  if (x.view.rows != m || x.view.cols != n)
    throw InvalidArgument(std::string(what) + " is " + dims(x.view.rows, x.view.cols) +
                          " but op(a)*op(b) is " + dims(m, n));
}

bool overlaps(const Operand& x, const Operand& y) {
  const auto [x0, x1] = x.extent();
  const auto [y0, y1] = y.extent();
  return x0 < y1 && y0 < x1;
}

bool same_memory(const Operand& x, const Operand& y) {
  return x.array.data() == y.array.data() && x.stride0 == y.stride0 && x.stride1 == y.stride1;
}

void require_host(const Operand& x, const char* what) {
  const int t = x.array.device_type();
  if (t != kDlCpu && t != kDlCudaHost)
    throw InvalidArgument(std::string(what) + " lives in device memory (DLPack device type " +
                          std::to_string(t) + "); pass it through kafel.gemm, which runs it there");
}

// The operands of one host call, converted, and where the result goes.
struct HostCall {
  Operand a, b;
  std::optional<Operand> c, out;
  nb::object result;  // what the caller gets back
  MatrixView target;  // C as the GEMM writes it
  MatrixView c0;      // C's input values (beta != 0)
  Matrix scratch, c0_saved;
  bool write_back = false;  // target is scratch: copy it into `out` afterwards
};

Operand writable_operand(nb::handle obj, const char* what) {
  nb::ndarray<> writable;
  if (nb::try_cast(obj, writable)) return to_operand(nb::ndarray<nb::ro>(writable), what);
  nb::ndarray<nb::ro> readable;
  if (nb::try_cast(obj, readable)) throw InvalidArgument(std::string(what) + " is read-only");
  return to_operand(obj, what);  // not an array: its message
}

void choose_target(const GemmCall& call, HostCall& h) {
  const std::int64_t m = call.m(h.a.view), n = call.n(h.b.view);
  if (!h.out) {
    const DType t = h.c ? h.c->view.dtype : call.natural_c(h.a.view.dtype);
    std::tie(h.result, h.target) = new_host_matrix(t, m, n);
    return;
  }
  Operand& out = *h.out;
  check_shape(out, m, n, "out");
  // numpy semantics: an out that shares memory with an input gets the result through a copy.
  h.write_back = out.copied() || overlaps(out, h.a) || overlaps(out, h.b);
  if (h.write_back) {
    h.scratch = Matrix(out.view.dtype, m, n);
    h.target = h.scratch.view();
  } else {
    h.target = out.view;
  }
}

void choose_c0(const GemmCall& call, HostCall& h, bool keep_c0) {
  if (call.beta == 0.0) return;
  if (!h.c) {
    if (!h.out)
      throw InvalidArgument("beta = " + std::to_string(call.beta) +
                            " needs C: pass c, or out holding C's values");
    h.c0 = h.out->view;  // out's contents are C (BLAS-style accumulate into out)
  } else {
    h.c0 = h.c->view;
  }
  const bool in_place = h.c0.data == h.target.data;
  const bool aliased = h.c && h.out && !h.write_back && overlaps(*h.c, *h.out);
  if ((in_place && keep_c0) || (aliased && !same_memory(*h.c, *h.out))) {
    h.c0_saved = Matrix(h.c0.dtype, h.c0.rows, h.c0.cols);
    copy(h.c0, h.c0_saved.view());
    h.c0 = h.c0_saved.view();
  }
}

HostCall host_call(const GemmCall& call, nb::handle a, nb::handle b, nb::handle c, nb::handle out,
                   bool keep_c0) {
  HostCall h;
  h.a = to_operand(a, "a");
  h.b = to_operand(b, "b");
  require_host(h.a, "a");
  require_host(h.b, "b");
  const std::int64_t m = call.m(h.a.view), n = call.n(h.b.view);
  if (!c.is_none()) {
    h.c = to_operand(c, "c");
    require_host(*h.c, "c");
    check_shape(*h.c, m, n, "c");
  }
  if (!out.is_none()) {
    h.out = writable_operand(out, "out");
    require_host(*h.out, "out");
  }
  choose_target(call, h);
  choose_c0(call, h, keep_c0);
  return h;
}

nb::object finish(HostCall& h, nb::handle out) {
  if (h.write_back) copy_back(h.target, *h.out);
  return out.is_none() ? h.result : nb::borrow(out);
}

// C's starting values in place before a plain (unverified) run.
void load_c0(const GemmCall& call, HostCall& h) {
  if (call.beta != 0.0 && h.c0.data != h.target.data) copy(h.c0, h.target);
}

nb::object gemm_host(nb::handle a, nb::handle b, nb::handle c, nb::handle out, double alpha,
                     double beta, bool trans_a, bool trans_b, nb::handle device,
                     const std::string& kernel, const std::optional<std::string>& compute,
                     bool verify) {
  const GemmCall call = make_call(alpha, beta, trans_a, trans_b, kernel, compute);
  const Device& dev = resolve_device(device);
  HostCall h = host_call(call, a, b, c, out, verify);
  if (verify) {
    const GemmDesc desc = call.desc(h.a.view, h.b.view, h.target);
    CheckedRun run;
    {
      nb::gil_scoped_release released;
      run = run_verified(dev, desc, h.a.view, h.b.view, beta != 0.0 ? h.c0 : h.target, h.target,
                         call.opt);
    }
    if (!run.verify.passed) throw VerificationError(run.verify.message);
  } else {
    load_c0(call, h);
    nb::gil_scoped_release released;
    gemm(dev, call.op_a, call.op_b, alpha, h.a.view, h.b.view, beta, h.target, call.opt);
  }
  return finish(h, out);
}

// ---- operands in device memory --------------------------------------------------------------

// A device operand: a DLPack capsule (taken by the Python layer on the stream the GEMM runs
// on) or a raw (pointer, rows, cols, stride0, stride1, dtype name, device id) tuple from a
// __cuda_array_interface__.
Operand device_operand(nb::handle obj, const char* what, const Device& dev) {
  if (nb::isinstance<nb::tuple>(obj)) {
    auto [ptr, rows, cols, s0, s1, dtype, id] =
        nb::cast<std::tuple<std::uintptr_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                            std::string, int>>(obj);
    if (id != dev.index)
      throw InvalidArgument(std::string(what) + " lives on cuda:" + std::to_string(id) +
                            " but the GEMM runs on " + dev.id);
    Operand op;
    op.stride0 = s0;
    op.stride1 = s1;
    const auto view =
        strided_view(parse_dtype(dtype), reinterpret_cast<void*>(ptr), rows, cols, s0, s1);
    if (!view) throw InvalidArgument(std::string(what) + " has strides that map to no layout");
    op.view = *view;
    return op;
  }
  Operand op = to_operand(obj, what, /*copy_if_needed=*/false);
  const int t = op.array.device_type();
  if (t != kDlCuda && t != kDlCudaManaged)
    throw InvalidArgument(std::string(what) + " is not in CUDA memory (DLPack device type " +
                          std::to_string(t) + ")");
  if (op.array.device_id() != dev.index)
    throw InvalidArgument(std::string(what) + " lives on cuda:" +
                          std::to_string(op.array.device_id()) + " but the GEMM runs on " + dev.id);
  return op;
}

const Device& cuda_device(nb::handle device) {
  const Device& dev = resolve_device(device);
  if (dev.backend != "cuda")
    throw InvalidArgument("arrays in CUDA memory need a CUDA device, not " + dev.id +
                          " (no hidden copy to the host: move them there first)");
  return dev;
}

void gemm_on_device(nb::handle a, nb::handle b, nb::handle out, double alpha, double beta,
                    bool trans_a, bool trans_b, nb::handle device, const std::string& kernel,
                    const std::optional<std::string>& compute, std::uintptr_t stream) {
  const GemmCall call = make_call(alpha, beta, trans_a, trans_b, kernel, compute);
  const Device& dev = cuda_device(device);
  const Operand A = device_operand(a, "a", dev), B = device_operand(b, "b", dev);
  const Operand C = device_operand(out, "out", dev);
  nb::gil_scoped_release released;
  gemm_device(dev, call.op_a, call.op_b, alpha, A.view, B.view, beta, C.view, call.opt,
              reinterpret_cast<void*>(stream));
}

std::string result_dtype(const std::string& a, const std::optional<std::string>& compute) {
  GemmCall call;
  if (compute) call.opt.compute = parse_compute(*compute);
  return numpy_name(call.natural_c(parse_dtype(a)));
}

// ---- kafel.GemmPlan ------------------------------------------------------------------------

// A GEMM prepared for one geometry; operand layouts a later call brings that the first did not
// (a Fortran-ordered array after C-ordered ones) get a prepared GEMM of their own.
class Plan {
 public:
  Plan(const GemmCall& call, const Device& device, Residence residence)
      : call_(call), device_(device), residence_(residence) {}
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  void run(const MatrixView& a, const MatrixView& b, const MatrixView& c, void* stream) {
    PreparedGemm& p = prepared_for(a, b, c);
    last_ = p.run(a, b, c, stream);
  }
  const GemmCall& call() const { return call_; }
  const Device& device() const { return device_; }
  Residence residence() const { return residence_; }
  const GemmReport& last() const { return last_; }
  std::size_t prepared_count() const { return prepared_.size(); }
  std::string kernel() const {
    return prepared_.empty() ? "" : prepared_[0].second.choice().kernel;
  }
  std::string config() const {
    return prepared_.empty() ? "" : prepared_[0].second.choice().config();
  }

 private:
  using Key = std::tuple<Layout, Layout, Layout, DType, DType, DType>;
  PreparedGemm& prepared_for(const MatrixView& a, const MatrixView& b, const MatrixView& c) {
    const Key key{a.layout, b.layout, c.layout, a.dtype, b.dtype, c.dtype};
    for (auto& [k, p] : prepared_)
      if (k == key) return p;
    // Another layout must still be the same problem: a plan is for one shape and type.
    const GemmDesc got = call_.desc(a, b, c);
    if (!prepared_.empty() &&
        !(got.m == first_.m && got.n == first_.n && got.k == first_.k && got.types == first_.types))
      throw InvalidArgument("operands of " + got.shape() + " given to a plan made for " +
                            first_.shape());
    prepared_.emplace_back(key, PreparedGemm(device_, call_.op_a, call_.op_b, call_.alpha, a, b,
                                             call_.beta, c, call_.opt, residence_));
    if (prepared_.size() == 1) first_ = got;
    return prepared_.back().second;
  }

  GemmCall call_;
  Device device_;
  Residence residence_;
  std::vector<std::pair<Key, PreparedGemm>> prepared_;
  GemmDesc first_;  // the problem of the first call, as the caller wrote it
  GemmReport last_;
};

nb::object plan_host(Plan& plan, nb::handle a, nb::handle b, nb::handle c, nb::handle out) {
  HostCall h = host_call(plan.call(), a, b, c, out, false);
  load_c0(plan.call(), h);
  {
    nb::gil_scoped_release released;
    plan.run(h.a.view, h.b.view, h.target, nullptr);
  }
  return finish(h, out);
}

void plan_device(Plan& plan, nb::handle a, nb::handle b, nb::handle out, std::uintptr_t stream) {
  const Device& dev = plan.device();
  const Operand A = device_operand(a, "a", dev), B = device_operand(b, "b", dev);
  const Operand C = device_operand(out, "out", dev);
  nb::gil_scoped_release released;
  plan.run(A.view, B.view, C.view, reinterpret_cast<void*>(stream));
}

Plan* new_plan(double alpha, double beta, bool trans_a, bool trans_b, nb::handle device,
               const std::string& kernel, const std::optional<std::string>& compute,
               bool on_device) {
  const GemmCall call = make_call(alpha, beta, trans_a, trans_b, kernel, compute);
  const Device& dev = on_device ? cuda_device(device) : resolve_device(device);
  return new Plan(call, dev, on_device ? Residence::Device : Residence::Host);
}

}  // namespace

void bind_gemm(nb::module_& m) {
  using namespace nb::literals;
  m.def("gemm_host", &gemm_host, "a"_a, "b"_a, "c"_a.none(), "out"_a.none(), "alpha"_a, "beta"_a,
        "trans_a"_a, "trans_b"_a, "device"_a.none(), "kernel"_a, "compute"_a.none(), "verify"_a,
        "GEMM on host arrays; see kafel.gemm.");
  m.def("gemm_device", &gemm_on_device, "a"_a, "b"_a, "out"_a, "alpha"_a, "beta"_a, "trans_a"_a,
        "trans_b"_a, "device"_a.none(), "kernel"_a, "compute"_a.none(), "stream"_a,
        "GEMM on CUDA arrays (DLPack capsules or raw tuples), ordered on `stream`.");
  m.def("result_dtype", &result_dtype, "a_dtype"_a, "compute"_a.none(),
        "The element type of C for inputs of `a_dtype` (int8 -> int32, ...).");

  nb::class_<GemmReport>(m, "GemmReport", "What a GEMM ran and how long it took.")
      .def_ro("kernel", &GemmReport::kernel)
      .def_ro("config", &GemmReport::config)
      .def_ro("kernel_ms", &GemmReport::kernel_ms, "The kernel alone, milliseconds.")
      .def_ro("total_ms", &GemmReport::total_ms, "Including transfers, milliseconds.");

  nb::class_<Plan>(m, "Plan", "A prepared GEMM; see kafel.GemmPlan.")
      .def(nb::new_(&new_plan), "alpha"_a, "beta"_a, "trans_a"_a, "trans_b"_a, "device"_a.none(),
           "kernel"_a, "compute"_a.none(), "on_device"_a)
      .def("run_host", &plan_host, "a"_a, "b"_a, "c"_a.none(), "out"_a.none())
      .def("run_device", &plan_device, "a"_a, "b"_a, "out"_a, "stream"_a)
      .def_prop_ro("device", &Plan::device)
      .def_prop_ro("on_device", [](const Plan& p) { return p.residence() == Residence::Device; })
      .def_prop_ro("kernel", &Plan::kernel, "The kernel chosen at the first call.")
      .def_prop_ro("config", &Plan::config, "Its parameters and where they came from.")
      .def_prop_ro("last_report", &Plan::last, "The report of the last call.")
      .def_prop_ro("prepared_count", &Plan::prepared_count,
                   "Prepared GEMMs held (one per operand layout seen); calls reuse them.");
}

}  // namespace kafel::py
