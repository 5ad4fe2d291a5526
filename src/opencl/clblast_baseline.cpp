// The CLBlast comparison baseline (ocl.clblast): CLBlast's GEMM with its default (or its own
// tuned) parameters on the same device and queue as kafel's kernels.
#include "opencl/clblast_baseline.hpp"

#include "kafel/error.hpp"

#ifdef KAFEL_HAVE_CLBLAST
#include <clblast.h>

#include <chrono>

#include "opencl/gemm_plan.hpp"

namespace kafel::ocl {
namespace {

// CLBlast runs one to four kernels per call (pads and transposes when needed) and returns only
// the last event, so its time is taken the way CLBlast's own client takes it: host clock from
// the call until that event completes, on an idle queue.
class ClblastPlan : public OclPlan {
 public:
  using OclPlan::OclPlan;

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
  std::vector<Event> enqueue(Operands& s) override {
    std::vector<Event> ev;
    ev.push_back(call(s));
    return ev;
  }

 private:
  template <class T>
  Event gemm(Operands& s, T alpha, T beta) {
    using clblast::Transpose;
    auto ta = desc_.op_a == Op::N ? Transpose::kNo : Transpose::kYes;
    auto tb = desc_.op_b == Op::N ? Transpose::kNo : Transpose::kYes;
    cl_command_queue q = ctx_.queue();
    cl_event e = nullptr;
    int lda = desc_.op_a == Op::N ? sa_.rs : sa_.cs, ldb = desc_.op_b == Op::N ? sb_.rs : sb_.cs;
    auto status = clblast::Gemm<T>(clblast::Layout::kRowMajor, ta, tb, S(m_), S(n_), S(k_), alpha,
                                   s.a.handle(), 0, S(lda), s.b.handle(), 0, S(ldb), beta,
                                   s.c.handle(), 0, S(ldc_), &q, &e);
    if (status != clblast::StatusCode::kSuccess)
      throw DeviceError("CLBlast GEMM " + desc_.shape() + " failed with status " +
                        std::to_string(int(status)));
    return Event(e);
  }

  Event call(Operands& s) {
    // CLBlast reads C even when beta == 0; kafel's contract says C may hold NaN then.
    if (desc_.beta == 0 && !zeroed_) {
      for (auto& slot : slots_) slot.c.zero(ctx_);
      zeroed_ = true;
    }
    switch (desc_.dtype) {
      case DType::f32:
        return gemm<float>(s, float(desc_.alpha), float(desc_.beta));
      case DType::f64:
        return gemm<double>(s, desc_.alpha, desc_.beta);
      case DType::f16:
        return gemm<cl_half>(s, float_to_half(float(desc_.alpha)),
                             float_to_half(float(desc_.beta)));
      default:
        throw Unsupported("CLBlast has no int32 GEMM");
    }
  }

  using S = std::size_t;
  bool zeroed_ = false;
};

}  // namespace

bool have_clblast() {
  return true;
}

std::unique_ptr<GemmPlan> make_clblast(const Device& d, const GemmDesc& g, const Params& p) {
  if (g.dtype == DType::i32) throw Unsupported("CLBlast has no int32 GEMM");
  if (g.dtype == DType::f16 && !Context::get(d).fp16())
    throw Unsupported("CLBlast's f16 GEMM needs cl_khr_fp16, which " + d.name + " lacks");
  return std::make_unique<ClblastPlan>(d, g, p);
}

}  // namespace kafel::ocl

#else

namespace kafel::ocl {
bool have_clblast() {
  return false;
}
std::unique_ptr<GemmPlan> make_clblast(const Device&, const GemmDesc&, const Params&) {
  throw Unsupported("this kafel was built without CLBlast");
}
}  // namespace kafel::ocl

#endif
