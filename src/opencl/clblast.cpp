// The CLBlast comparison baseline ocl.clblast (`--vs clblast`): CLBlast's GEMM with its default
// (or its own tuned) parameters on the same device and queue as kafel's kernels. Registered only
// when CLBlast was found at build time (KAFEL_HAVE_CLBLAST).
#ifdef KAFEL_HAVE_CLBLAST
#include <clblast.h>

#include <chrono>

#include "core/registry.hpp"
#include "kafel/error.hpp"
#include "opencl/gemm_plan.hpp"

namespace kafel::ocl {
namespace {

// CLBlast runs one to four kernels per call (pads and transposes when needed) and returns only
// the last event, so its time is taken the way CLBlast's own client takes it: host clock from
// the call until that event completes, on an idle queue. Everything that is not the GEMM
// happens in load(), so every run() (the harness's untimed verification run, its warm-ups and
// its timed runs alike) is the same single clblast::Gemm call. The one difference left is
// inside CLBlast: its first call per device and precision compiles CLBlast's kernels (cached
// by CLBlast for the process); that is the verification run, whose time is never used.
class ClblastPlan : public OclPlan {
 public:
  ClblastPlan(const Device& d, const GemmDesc& g, const Params& p) : OclPlan(d, g, p) {
    if (g.types != GemmTypes::of(DType::f32) && g.types != GemmTypes::of(DType::f64) &&
        g.types != GemmTypes::of(DType::f16, Compute::f16))
      throw Unsupported("CLBlast has no " + g.types.name() + " GEMM");
  }

  void load(const GemmArgs& args, int slots) override {
    OclPlan::load(args, slots);
    // CLBlast reads C even when beta == 0, and kafel's contract lets C hold NaN then (tests
    // poison it): zero it once per upload. A run leaves the product of finite inputs in C,
    // which is finite, so later runs on the same slot need no zeroing.
    if (desc_.beta == 0 && k_ > 0)
      for (auto& slot : slots_) slot.c.zero(ctx_);
  }

  double run(int slot) override {
    if (m_ == 0 || n_ == 0 || k_ == 0) return OclPlan::run(slot);
    Operands& s = slots_.at(std::size_t(slot));
    ctx_.finish();
    auto t0 = std::chrono::steady_clock::now();
    Event e = call(s);
    e.wait();
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
  }
  std::string timer() const override { return "steady-clock"; }

 protected:
  // CLBlast allocates its pad / transpose buffer inside every call unless it is given one:
  // allocate it once here, as the other plans allocate their scratch buffers in prepare().
  void prepare() override {
    std::size_t bytes = 0;
    switch (desc_.types.a) {
      case DType::f32:
        bytes = temp_bytes<float>();
        break;
      case DType::f64:
        bytes = temp_bytes<double>();
        break;
      case DType::f16:
        bytes = temp_bytes<cl_half>();
        break;
      default:
        throw Unsupported("CLBlast has no " + desc_.types.name() + " GEMM");
    }
    temp_ = Buffer(ctx_, bytes);  // 0 bytes: a null handle, CLBlast then needs none
  }

  std::vector<Event> enqueue(Operands& s) override {
    std::vector<Event> ev;
    ev.push_back(call(s));
    return ev;
  }

 private:
  using S = std::size_t;

  clblast::Transpose trans_a() const {
    return desc_.op_a == Op::N ? clblast::Transpose::kNo : clblast::Transpose::kYes;
  }
  clblast::Transpose trans_b() const {
    return desc_.op_b == Op::N ? clblast::Transpose::kNo : clblast::Transpose::kYes;
  }
  // Leading dimensions of the stored (untransposed) A and B.
  S lda() const { return S(desc_.op_a == Op::N ? sa_.rs : sa_.cs); }
  S ldb() const { return S(desc_.op_b == Op::N ? sb_.rs : sb_.cs); }

  template <class T>
  std::size_t temp_bytes() const {
    cl_command_queue q = ctx_.queue();
    std::size_t bytes = 0;
    auto status =
        clblast::GemmTempBufferSize<T>(clblast::Layout::kRowMajor, trans_a(), trans_b(), S(m_),
                                       S(n_), S(k_), 0, lda(), 0, ldb(), 0, S(ldc_), &q, bytes);
    if (status != clblast::StatusCode::kSuccess)
      throw DeviceError("CLBlast GemmTempBufferSize " + desc_.shape() + " failed with status " +
                        std::to_string(int(status)));
    return bytes;
  }

  template <class T>
  Event gemm(Operands& s, T alpha, T beta) {
    cl_command_queue q = ctx_.queue();
    cl_event e = nullptr;
    auto status = clblast::Gemm<T>(clblast::Layout::kRowMajor, trans_a(), trans_b(), S(m_), S(n_),
                                   S(k_), alpha, s.a.handle(), 0, lda(), s.b.handle(), 0, ldb(),
                                   beta, s.c.handle(), 0, S(ldc_), &q, &e, temp_.handle());
    if (status != clblast::StatusCode::kSuccess)
      throw DeviceError("CLBlast GEMM " + desc_.shape() + " failed with status " +
                        std::to_string(int(status)));
    return Event(e);
  }

  Event call(Operands& s) {
    switch (desc_.types.a) {
      case DType::f32:
        return gemm<float>(s, float(desc_.alpha), float(desc_.beta));
      case DType::f64:
        return gemm<double>(s, desc_.alpha, desc_.beta);
      case DType::f16:
        return gemm<cl_half>(s, float_to_half(float(desc_.alpha)),
                             float_to_half(float(desc_.beta)));
      default:
        throw Unsupported("CLBlast has no " + desc_.types.name() + " GEMM");
    }
  }

  Buffer temp_;
};

GemmKernel clblast_kernel() {
  GemmKernel k;
  k.name = "ocl.clblast";
  k.summary = "CLBlast GEMM (comparison baseline)";
  k.rung = 100;
  // CLBlast's half GEMM multiplies and accumulates in half.
  k.types = {{GemmTypes::of(DType::f32), {}},
             {GemmTypes::of(DType::f64), Cap::fp64},
             {GemmTypes::of(DType::f16, Compute::f16), Cap::fp16}};
  k.baseline = true;
  k.make_plan = make<ClblastPlan>;
  return k;
}

const Register registered{clblast_kernel()};

}  // namespace
}  // namespace kafel::ocl

#endif
