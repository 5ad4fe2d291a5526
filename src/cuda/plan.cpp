// Implementation of the shared CUDA GemmPlan (see plan.hpp): uploads with cudaMemcpy2D into
// padded device rows, per-slot copies for cache rotation, the operand forms, event-timed runs.
#include "cuda/plan.hpp"

#include <algorithm>
#include <vector>

#include "cuda/runtime.hpp"

namespace kafel::cuda {

std::int64_t padded_ld(std::int64_t cols, DType t) {
  const auto per16 = static_cast<std::int64_t>(16 / dtype_size(t));
  const std::int64_t ld = (cols + per16 - 1) / per16 * per16;
  return ld > 0 ? ld : per16;
}

namespace {

// m and k of the k-major form: multiples of 16 (cuBLASLt's fp8 and int8 kernels want 16-byte
// extents), k at least 16 so that k = 0 still runs one (all-zero) product: C = beta C.
std::int64_t round16(std::int64_t v) {
  return (v + 15) / 16 * 16;
}

// A row-major rows x cols matrix on the device with a padded leading dimension, or a caller's
// device buffer (GemmPlan::bind) that meets the launchers' alignment contract.
struct DeviceMatrix {
  DeviceBuffer buf;
  std::int64_t rows = 0, cols = 0, ld = 0;
  void* caller = nullptr;  // set for a caller's buffer: buf stays empty

  void* data() const { return caller ? caller : buf.get(); }
  static DeviceMatrix adopt(const void* p, std::int64_t r, std::int64_t c, std::int64_t ld_) {
    DeviceMatrix m;
    m.rows = r;
    m.cols = c;
    m.ld = ld_;
    m.caller = const_cast<void*>(p);
    return m;
  }

  DeviceMatrix() = default;
  DeviceMatrix(DType t, std::int64_t r, std::int64_t c, const char* what)
      : DeviceMatrix(t, r, c, padded_ld(c, t), what) {}
  // Room for alloc_rows >= r rows of ld_ elements (uploads and downloads move r x c).
  DeviceMatrix(DType t, std::int64_t r, std::int64_t c, std::int64_t ld_, const char* what,
               std::int64_t alloc_rows = 0)
      : buf(static_cast<std::size_t>(std::max(r, alloc_rows) * ld_) * dtype_size(t), what),
        rows(r),
        cols(c),
        ld(ld_) {}

  // Copies on stream `s`; the caller synchronises it before the host relies on them. The
  // other side is host memory (load) or device memory (bind): cudaMemcpyDefault tells them
  // apart by the pointer (unified addressing).
  void upload(const void* src, std::int64_t src_ld, DType t, cudaStream_t s) {
    if (rows == 0 || cols == 0) return;
    const std::size_t es = dtype_size(t);
    KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(buf.get(), ld * es, src, src_ld * es, cols * es, rows,
                                       cudaMemcpyDefault, s));
  }
  void download(void* dst, std::int64_t dst_ld, DType t, cudaStream_t s) const {
    if (rows == 0 || cols == 0) return;
    const std::size_t es = dtype_size(t);
    KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_ld * es, data(), ld * es, cols * es, rows,
                                       cudaMemcpyDefault, s));
  }
  void zero(cudaStream_t s) {
    if (!buf.empty()) KAFEL_CUDA_CHECK(cudaMemsetAsync(buf.get(), 0, buf.bytes(), s));
  }
};

struct Slot {
  DeviceMatrix a, b, c;
};

class CudaGemmPlan final : public GemmPlan {
 public:
  CudaGemmPlan(const Device& device, const GemmDesc& desc, const Params& params, Launcher launcher,
               PlanTraits traits)
      : ordinal_(ordinal_of(device)),
        guard_(ordinal_),
        desc_(desc),
        params_(params),
        launcher_(std::move(launcher)),
        traits_(std::move(traits)) {}

  void load(const GemmArgs& args, int slots) override {
    DeviceGuard g(ordinal_);
    args_ = args;
    bound_ = false;
    slots_.clear();
    for (int s = 0; s < std::max(slots, 1); ++s) {
      slots_.push_back(traits_.form == OperandForm::k_major ? load_k_major(args, stream_)
                                                            : load_as_given(args, stream_));
      stream_.synchronize();  // the host buffers may be reused as soon as load returns
    }
    prepare_scratch();
  }

  // Operands already in this GPU's memory: used in place where they meet the launchers'
  // contract (16-byte aligned rows whose width is a multiple of 16 bytes), else copied on the
  // device into this plan's padded buffers (C back after each run). Runs are enqueued on the
  // caller's stream, after the work already there, and not waited for; nothing goes through
  // the host.
  void bind(const GemmArgs& args, void* stream) override {
    DeviceGuard g(ordinal_);
    args_ = args;
    bound_ = true;
    caller_stream_ = static_cast<cudaStream_t>(stream);
    slots_.clear();
    if (traits_.form != OperandForm::k_major && adoptable(args))
      slots_.push_back(adopt(args));
    else
      slots_.push_back(traits_.form == OperandForm::k_major ? load_k_major(args, caller_stream_)
                                                            : load_as_given(args, caller_stream_));
    prepare_scratch();
  }

  double run(int slot) override {
    DeviceGuard g(ordinal_);
    if (slot < 0 || slot >= static_cast<int>(slots_.size()))
      throw InvalidArgument("CUDA plan: slot " + std::to_string(slot) + " was not loaded");
    if (desc_.m == 0 || desc_.n == 0) return 0.0;  // nothing to do; a 0-sized grid is invalid
    Slot& s = slots_[slot];
    DeviceGemm dg = view(s);
    if (bound_) {
      // Stream-ordered like any CUDA library call: enqueued on the caller's stream, not timed,
      // not waited for (the caller's next work on that stream sees the result).
      if (traits_.form == OperandForm::ops_n) to_ops_n(s, dg, caller_stream_);
      launcher_(dg, params_, caller_stream_);
      KAFEL_CUDA_CHECK_LAUNCH("GEMM kernel");
      if (!s.c.caller) s.c.download(args_.c, args_.ldc, desc_.types.c, caller_stream_);
      return 0.0;
    }
    launch_spin(stream_);
    timer_.start(stream_);
    if (traits_.form == OperandForm::ops_n) to_ops_n(s, dg, stream_);
    launcher_(dg, params_, stream_);
    KAFEL_CUDA_CHECK_LAUNCH("GEMM kernel");
    timer_.stop(stream_);
    const double ms = timer_.ms();
    stream_.synchronize();
    return ms;
  }

  void fetch() override {
    DeviceGuard g(ordinal_);
    if (slots_.empty()) throw InvalidArgument("CUDA plan: fetch before load");
    if (bound_) return;  // C is the caller's buffer, or was copied back by run
    slots_[0].c.download(args_.c, args_.ldc, desc_.types.c, stream_);
    stream_.synchronize();
  }

  std::string timer() const override { return "cuda-events"; }

 private:
  void prepare_scratch() {
    const GemmTypes& t = desc_.types;
    // Their shapes are the plan's: made once, kept across loads and binds.
    if (traits_.form == OperandForm::ops_n && desc_.op_a == Op::T && at_.buf.empty())
      at_ = DeviceMatrix(t.a, desc_.m, desc_.k, "A transposed");
    if (traits_.form == OperandForm::ops_n && desc_.op_b == Op::T && bt_.buf.empty())
      bt_ = DeviceMatrix(t.b, desc_.k, desc_.n, "B transposed");
    if (traits_.prepare && desc_.m > 0 && desc_.n > 0) traits_.prepare(view(slots_[0]));
  }

  static bool fits_launchers(const void* p, std::int64_t cols, std::int64_t ld, DType t) {
    const auto es = static_cast<std::int64_t>(dtype_size(t));
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (ld * es) % 16 == 0 &&
           (cols * es) % 16 == 0;
  }

  bool adoptable(const GemmArgs& args) const {
    const GemmTypes& t = desc_.types;
    const bool ta = desc_.op_a == Op::T, tb = desc_.op_b == Op::T;
    return fits_launchers(args.a, ta ? desc_.m : desc_.k, args.lda, t.a) &&
           fits_launchers(args.b, tb ? desc_.k : desc_.n, args.ldb, t.b) &&
           fits_launchers(args.c, desc_.n, args.ldc, t.c);
  }

  Slot adopt(const GemmArgs& args) const {
    const bool ta = desc_.op_a == Op::T, tb = desc_.op_b == Op::T;
    return Slot{
        DeviceMatrix::adopt(args.a, ta ? desc_.k : desc_.m, ta ? desc_.m : desc_.k, args.lda),
        DeviceMatrix::adopt(args.b, tb ? desc_.n : desc_.k, tb ? desc_.k : desc_.n, args.ldb),
        DeviceMatrix::adopt(args.c, desc_.m, desc_.n, args.ldc)};
  }

  Slot load_as_given(const GemmArgs& args, cudaStream_t stream) {
    const GemmTypes& t = desc_.types;
    const bool ta = desc_.op_a == Op::T, tb = desc_.op_b == Op::T;
    Slot slot{DeviceMatrix(t.a, ta ? desc_.k : desc_.m, ta ? desc_.m : desc_.k, "matrix A"),
              DeviceMatrix(t.b, tb ? desc_.n : desc_.k, tb ? desc_.k : desc_.n, "matrix B"),
              DeviceMatrix(t.c, desc_.m, desc_.n, "matrix C")};
    slot.a.upload(args.a, args.lda, t.a, stream);
    slot.b.upload(args.b, args.ldb, t.b, stream);
    slot.c.upload(args.c, args.ldc, t.c, stream);
    return slot;
  }

  // A becomes mp x kp, B np x kp (k contiguous in both), zero-padded; C gets room for mp x np
  // with zeroed padding, so that beta * C stays finite there.
  Slot load_k_major(const GemmArgs& args, cudaStream_t stream) {
    const GemmTypes& t = desc_.types;
    if (dtype_size(t.a) != dtype_size(t.b) || (dtype_size(t.a) != 1 && dtype_size(t.a) != 4))
      throw InvalidArgument(
          "CUDA plan: the k-major operand form takes 1- or 4-byte inputs of one size (" + t.name() +
          ")");
    const std::int64_t m = desc_.m, n = desc_.n, k = desc_.k;
    const std::int64_t mp = round16(m), kp = std::max<std::int64_t>(16, round16(k));
    const std::int64_t np = padded_ld(n, t.c);
    const bool ta = desc_.op_a == Op::T, tb = desc_.op_b == Op::T;
    Slot slot{DeviceMatrix(t.a, mp, kp, kp, "matrix A (k-major)"),
              DeviceMatrix(t.b, np, kp, kp, "matrix B (k-major)"),
              DeviceMatrix(t.c, m, n, np, "matrix C", mp)};
    DeviceMatrix raw_a(t.a, ta ? k : m, ta ? m : k, "matrix A");
    DeviceMatrix raw_b(t.b, tb ? n : k, tb ? k : n, "matrix B");
    raw_a.upload(args.a, args.lda, t.a, stream);
    raw_b.upload(args.b, args.ldb, t.b, stream);
    // op(A) is m x k: A itself (N) or A^T. B must become op(B)^T, n x k: B^T (N) or B (T).
    launch_relayout(t.a, raw_a.buf.get(), raw_a.rows, raw_a.cols, raw_a.ld, ta, slot.a.buf.get(),
                    mp, kp, kp, stream);
    launch_relayout(t.b, raw_b.buf.get(), raw_b.rows, raw_b.cols, raw_b.ld, !tb, slot.b.buf.get(),
                    np, kp, kp, stream);
    slot.c.zero(stream);
    slot.c.upload(args.c, args.ldc, t.c, stream);
    KAFEL_CUDA_CHECK(cudaStreamSynchronize(stream));  // raw_a and raw_b are freed on return
    return slot;
  }

  // The operands of a slot as the launcher receives them (before the ops_n pre-pass).
  DeviceGemm view(const Slot& s) const {
    DeviceGemm dg{desc_, s.a.data(), s.a.ld, s.b.data(), s.b.ld, s.c.data(), s.c.ld};
    if (traits_.form == OperandForm::k_major) {
      dg.desc.m = s.a.rows;
      dg.desc.n = s.c.ld;
      dg.desc.k = s.a.cols;
      dg.desc.op_a = Op::N;
      dg.desc.op_b = Op::T;
    }
    return dg;
  }

  // The transpose pre-pass of OperandForm::ops_n, inside the timed region.
  void to_ops_n(const Slot& s, DeviceGemm& dg, cudaStream_t stream) {
    const GemmTypes& t = desc_.types;
    if (!at_.buf.empty() && desc_.k > 0) {
      launch_transpose(t.a, s.a.data(), desc_.k, desc_.m, s.a.ld, at_.buf.get(), at_.ld, stream);
      dg.a = at_.buf.get();
      dg.lda = at_.ld;
    }
    if (!bt_.buf.empty() && desc_.k > 0) {
      launch_transpose(t.b, s.b.data(), desc_.n, desc_.k, s.b.ld, bt_.buf.get(), bt_.ld, stream);
      dg.b = bt_.buf.get();
      dg.ldb = bt_.ld;
    }
    // With k = 0 nothing is read: the launcher only needs to see op N.
    dg.desc.op_a = dg.desc.op_b = Op::N;
  }

  int ordinal_;
  DeviceGuard guard_;  // the device is current while the stream and events are created
  GemmDesc desc_;
  Params params_;
  Launcher launcher_;
  PlanTraits traits_;
  GemmArgs args_;
  bool bound_ = false;                    // slot 0 came from bind(): runs on caller_stream_
  cudaStream_t caller_stream_ = nullptr;  // nullptr: the legacy default stream
  Stream stream_;
  EventTimer timer_;
  std::vector<Slot> slots_;
  DeviceMatrix at_, bt_;
};

}  // namespace

std::string dims_fit(const GemmDesc& d) {
  constexpr std::int64_t kMax = std::int64_t(1) << 30;
  if (d.m > kMax || d.n > kMax || d.k > kMax)
    return "CUDA kernels take dimensions up to 2^30 (" + d.shape() + ")";
  return "";
}

std::string grid_rows_fit(const GemmDesc& d, std::int64_t rows_per_block) {
  const std::int64_t rows = (d.m + rows_per_block - 1) / rows_per_block;
  if (rows <= kMaxGridY) return "";
  return "m = " + std::to_string(d.m) + " needs " + std::to_string(rows) + " block rows of " +
         std::to_string(rows_per_block) + ", more than CUDA's grid limit of " +
         std::to_string(kMaxGridY);
}

std::unique_ptr<GemmPlan> make_cuda_plan(const Device& device, const GemmDesc& desc,
                                         const Params& params, Launcher launcher,
                                         PlanTraits traits) {
  if (const std::string why = dims_fit(desc); !why.empty()) throw Unsupported(why);
  return std::make_unique<CudaGemmPlan>(device, desc, params, std::move(launcher),
                                        std::move(traits));
}

GemmKernel cuda_rung(std::string name, std::string summary, int rung, ParamSpace params,
                     Launcher launcher, Limits limits, PlanTraits traits) {
  GemmKernel k;
  k.name = std::move(name);
  k.summary = std::move(summary);
  k.rung = rung;
  k.types = natural_types({DType::f32, DType::f64, DType::i32});
  k.params = std::move(params);
  k.make_plan = [launcher, traits](const Device& d, const GemmDesc& desc, const Params& p) {
    return make_cuda_plan(d, desc, p, launcher, traits);
  };
  k.can_implement = [limits](const Device& d, const GemmDesc& desc,
                             const Params& p) -> std::string {
    if (std::string why = dims_fit(desc); !why.empty()) return why;
    return limits ? limits(d, desc, p) : "";
  };
  return k;
}

}  // namespace kafel::cuda
