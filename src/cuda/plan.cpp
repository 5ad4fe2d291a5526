// Implementation of the shared CUDA GemmPlan (see plan.hpp): uploads with cudaMemcpy2D into
// padded device rows, per-slot copies for cache rotation, the operand forms, event-timed runs.
#include "cuda/plan.hpp"

#include <algorithm>
#include <functional>
#include <optional>
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

using HostOf = std::function<const void*(std::int64_t)>;

// `count` row-major rows x cols matrices on the device with a padded leading dimension, matrix
// after matrix (stride = the allocated rows x ld), or a caller's device buffer (GemmPlan::bind,
// one matrix) that meets the launchers' alignment contract.
struct DeviceMatrix {
  DeviceBuffer buf;
  std::int64_t rows = 0, cols = 0, ld = 0, stride = 0, count = 1;
  std::size_t elem = 0;
  void* caller = nullptr;  // set for a caller's buffer: buf stays empty

  void* data() const { return caller ? caller : buf.get(); }
  static DeviceMatrix adopt(const void* p, DType t, std::int64_t r, std::int64_t c,
                            std::int64_t ld_) {
    DeviceMatrix m;
    m.rows = r;
    m.cols = c;
    m.ld = ld_;
    m.stride = r * ld_;
    m.elem = dtype_size(t);
    m.caller = const_cast<void*>(p);
    return m;
  }

  DeviceMatrix() = default;
  DeviceMatrix(DType t, std::int64_t r, std::int64_t c, const char* what, std::int64_t n = 1)
      : DeviceMatrix(t, r, c, padded_ld(c, t), what, 0, n) {}
  // Room for alloc_rows >= r rows of ld_ elements per matrix (uploads and downloads move r x c).
  DeviceMatrix(DType t, std::int64_t r, std::int64_t c, std::int64_t ld_, const char* what,
               std::int64_t alloc_rows = 0, std::int64_t n = 1)
      : buf(static_cast<std::size_t>(std::max(r, alloc_rows) * ld_ * n) * dtype_size(t), what),
        rows(r),
        cols(c),
        ld(ld_),
        stride(std::max(r, alloc_rows) * ld_),
        count(n),
        elem(dtype_size(t)) {}

  void* at(std::int64_t i) const { return static_cast<char*>(data()) + i * stride * elem; }

  // Copies on stream `s`; the caller synchronises it before the host relies on them. The
  // other side is host memory (load) or device memory (bind): cudaMemcpyDefault tells them
  // apart by the pointer (unified addressing). One 2D copy for the whole batch when the other
  // side's matrices lie back to back like ours.
  void upload(const HostOf& src, std::int64_t src_ld, cudaStream_t s) {
    if (rows == 0 || cols == 0) return;
    if (stacked(src, src_ld)) {
      KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(data(), ld * elem, src(0), src_ld * elem, cols * elem,
                                         rows * count, cudaMemcpyDefault, s));
      return;
    }
    for (std::int64_t i = 0; i < count; ++i)
      KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(at(i), ld * elem, src(i), src_ld * elem, cols * elem, rows,
                                         cudaMemcpyDefault, s));
  }
  void download(const std::function<void*(std::int64_t)>& dst, std::int64_t dst_ld,
                cudaStream_t s) const {
    if (rows == 0 || cols == 0) return;
    if (stacked([&](std::int64_t i) -> const void* { return dst(i); }, dst_ld)) {
      KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(dst(0), dst_ld * elem, data(), ld * elem, cols * elem,
                                         rows * count, cudaMemcpyDefault, s));
      return;
    }
    for (std::int64_t i = 0; i < count; ++i)
      KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(dst(i), dst_ld * elem, at(i), ld * elem, cols * elem, rows,
                                         cudaMemcpyDefault, s));
  }
  void zero(cudaStream_t s) {
    if (!buf.empty()) KAFEL_CUDA_CHECK(cudaMemsetAsync(buf.get(), 0, buf.bytes(), s));
  }

 private:
  // Host matrix i at host(0) + i * rows * host_ld elements and device matrices without extra
  // rows: the batch is one rows*count x cols matrix on both sides.
  bool stacked(const HostOf& host, std::int64_t host_ld) const {
    if (count == 1) return true;
    if (stride != rows * ld) return false;
    const char* first = static_cast<const char*>(host(0));
    const std::int64_t step = rows * host_ld * static_cast<std::int64_t>(elem);
    for (std::int64_t i = 1; i < count; ++i)
      if (static_cast<const char*>(host(i)) != first + i * step) return false;
    return true;
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
        desc_(desc),
        params_(params),
        launcher_(std::move(launcher)),
        traits_(std::move(traits)) {}
  ~CudaGemmPlan() override {
    if (handover_) cudaEventDestroy(handover_);
  }
  CudaGemmPlan(const CudaGemmPlan&) = delete;
  CudaGemmPlan& operator=(const CudaGemmPlan&) = delete;

  void load(const GemmArgs& args, int slots) override {
    DeviceGuard g(ordinal_);
    cudaStream_t own = stream();
    follow(own);
    args_ = args;
    bound_ = false;
    slots_.clear();
    for (int s = 0; s < std::max(slots, 1); ++s) {
      Slot slot;
      if (traits_.form == OperandForm::k_major) {
        DeviceMatrix raw_a, raw_b;
        fill_k_major(args, slot, raw_a, raw_b, own);
      } else {
        fill_as_given(args, slot, own);
      }
      stream_->synchronize();  // the host buffers (and raw_a, raw_b) may go as load returns
      slots_.push_back(std::move(slot));
    }
    prepare_scratch(slots_[0]);
  }

  // Operands already in this GPU's memory: used in place where they meet the launchers'
  // contract (16-byte aligned rows whose width is a multiple of 16 bytes), else copied on the
  // device into this plan's own padded buffers (C back after each run). Runs are enqueued on
  // the caller's stream, after the work already there, and not waited for; nothing goes through
  // the host. A plan bound again and again (the Python GemmPlan, one bind per call) allocates
  // its buffers at the first bind that needs them and reuses them: no allocation, no free
  // (which would synchronise the device) and no host wait per call.
  void bind(const GemmArgs& args, void* stream) override {
    DeviceGuard g(ordinal_);
    const auto next = static_cast<cudaStream_t>(stream);
    follow(next);
    args_ = args;
    bound_ = true;
    caller_stream_ = next;
    slots_.clear();
    staged_ = traits_.form == OperandForm::k_major || batch() != 1 || !adoptable(args);
    if (!staged_)
      adopted_ = adopt(args);
    else if (traits_.form == OperandForm::k_major)
      fill_k_major(args, staging_, raw_a_, raw_b_, next);
    else
      fill_as_given(args, staging_, next);
    prepare_scratch(bound_slot());
  }

  double run(int slot) override {
    DeviceGuard g(ordinal_);
    const int loaded = bound_ ? 1 : static_cast<int>(slots_.size());
    if (slot < 0 || slot >= loaded)
      throw InvalidArgument("CUDA plan: slot " + std::to_string(slot) + " was not loaded");
    if (desc_.m == 0 || desc_.n == 0 || batch() == 0) return 0.0;  // a 0-sized grid is invalid
    if (bound_) {
      // Stream-ordered like any CUDA library call: enqueued on the caller's stream, not timed,
      // not waited for (the caller's next work on that stream sees the result).
      const Slot& s = bound_slot();
      DeviceGemm dg = view(s);
      if (traits_.form == OperandForm::ops_n) to_ops_n(s, dg, caller_stream_);
      launcher_(dg, params_, caller_stream_);
      KAFEL_CUDA_CHECK_LAUNCH("GEMM kernel");
      if (staged_)
        s.c.download([&](std::int64_t i) { return args_.c_of(i); }, args_.ldc, caller_stream_);
      return 0.0;
    }
    Slot& s = slots_[slot];
    DeviceGemm dg = view(s);
    cudaStream_t own = stream();
    launch_spin(own);
    timer_->start(own);
    if (traits_.form == OperandForm::ops_n) to_ops_n(s, dg, own);
    launcher_(dg, params_, own);
    KAFEL_CUDA_CHECK_LAUNCH("GEMM kernel");
    timer_->stop(own);
    const double ms = timer_->ms();
    stream_->synchronize();
    return ms;
  }

  void fetch() override {
    DeviceGuard g(ordinal_);
    if (bound_) return;  // C is the caller's buffer, or was copied back by run
    if (slots_.empty()) throw InvalidArgument("CUDA plan: fetch before load");
    slots_[0].c.download([&](std::int64_t i) { return args_.c_of(i); }, args_.ldc, stream());
    stream_->synchronize();
  }

  std::string timer() const override { return "cuda-events"; }

 private:
  std::int64_t batch() const { return desc_.batch; }

  // The plan's own stream and event timer (load / run / fetch), made at the first load: a plan
  // that is only ever bound to a caller's stream never creates them.
  cudaStream_t stream() {
    if (!stream_) {
      stream_.emplace();
      timer_.emplace();
    }
    return stream_->get();
  }

  const Slot& bound_slot() const { return staged_ ? staging_ : adopted_; }

  // Orders the work about to be enqueued on `next` after everything this plan enqueued so far
  // on another stream: its buffers (staging, transposes, split-K workspace) are shared by every
  // call. Free when the stream stays the same (the common case); one event otherwise.
  void follow(cudaStream_t next) {
    if (used_stream_ && *used_stream_ != next) {
      if (!handover_)
        KAFEL_CUDA_CHECK(cudaEventCreateWithFlags(&handover_, cudaEventDisableTiming));
      KAFEL_CUDA_CHECK(cudaEventRecord(handover_, *used_stream_));
      KAFEL_CUDA_CHECK(cudaStreamWaitEvent(next, handover_, 0));
    }
    used_stream_ = next;
  }

  void prepare_scratch(const Slot& slot) {
    const GemmTypes& t = desc_.types;
    const std::int64_t count = batch();
    // Their shapes are the plan's: made once, kept across loads and binds.
    if (traits_.form == OperandForm::ops_n && desc_.op_a == Op::T && at_.buf.empty())
      at_ = DeviceMatrix(t.a, desc_.m, desc_.k, "A transposed", count);
    if (traits_.form == OperandForm::ops_n && desc_.op_b == Op::T && bt_.buf.empty())
      bt_ = DeviceMatrix(t.b, desc_.k, desc_.n, "B transposed", count);
    const std::size_t ws = traits_.workspace ? traits_.workspace(desc_, params_) : 0;
    if (ws > 0 && workspace_.empty()) workspace_ = DeviceBuffer(ws, "split-K workspace");
    if (!traits_.prepare || desc_.m == 0 || desc_.n == 0) return;
    // Once per operand geometry: a bind that brings the same view again (the plan's own staging
    // buffers) keeps what the launcher prepared (cuBLASLt descriptors and algorithm).
    const DeviceGemm now = view(slot);
    if (prepared_ && same_operands(*prepared_, now)) return;
    traits_.prepare(now);
    prepared_ = now;
  }

  static bool same_operands(const DeviceGemm& x, const DeviceGemm& y) {
    return x.a == y.a && x.lda == y.lda && x.b == y.b && x.ldb == y.ldb && x.c == y.c &&
           x.ldc == y.ldc && x.stride_a == y.stride_a && x.stride_b == y.stride_b &&
           x.stride_c == y.stride_c && x.workspace == y.workspace && x.desc.m == y.desc.m &&
           x.desc.n == y.desc.n && x.desc.k == y.desc.k;
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
    const GemmTypes& t = desc_.types;
    const bool ta = desc_.op_a == Op::T, tb = desc_.op_b == Op::T;
    return Slot{
        DeviceMatrix::adopt(args.a, t.a, ta ? desc_.k : desc_.m, ta ? desc_.m : desc_.k, args.lda),
        DeviceMatrix::adopt(args.b, t.b, tb ? desc_.n : desc_.k, tb ? desc_.k : desc_.n, args.ldb),
        DeviceMatrix::adopt(args.c, t.c, desc_.m, desc_.n, args.ldc)};
  }

  // Copies args' operands into `slot`, allocating its buffers when it has none yet (they have
  // the plan's shapes, so a slot filled again keeps them).
  void fill_as_given(const GemmArgs& args, Slot& slot, cudaStream_t stream) {
    const GemmTypes& t = desc_.types;
    const bool ta = desc_.op_a == Op::T, tb = desc_.op_b == Op::T;
    const std::int64_t n = batch();
    if (slot.c.buf.empty() && slot.c.caller == nullptr)
      slot = Slot{DeviceMatrix(t.a, ta ? desc_.k : desc_.m, ta ? desc_.m : desc_.k, "matrix A", n),
                  DeviceMatrix(t.b, tb ? desc_.n : desc_.k, tb ? desc_.k : desc_.n, "matrix B", n),
                  DeviceMatrix(t.c, desc_.m, desc_.n, "matrix C", n)};
    slot.a.upload([&](std::int64_t i) { return args.a_of(i); }, args.lda, stream);
    slot.b.upload([&](std::int64_t i) { return args.b_of(i); }, args.ldb, stream);
    slot.c.upload([&](std::int64_t i) -> const void* { return args.c_of(i); }, args.ldc, stream);
  }

  // A becomes mp x kp, B np x kp (k contiguous in both), zero-padded; C gets room for mp x np
  // with zeroed padding, so that beta * C stays finite there (the padding of A and B is zero,
  // so C's stays zero across runs). Matrix by matrix for a batch, through raw_a / raw_b (the
  // caller's layout on the device). Buffers are allocated when empty, else reused; the caller
  // synchronises `stream` before raw_a / raw_b go.
  void fill_k_major(const GemmArgs& args, Slot& slot, DeviceMatrix& raw_a, DeviceMatrix& raw_b,
                    cudaStream_t stream) {
    const GemmTypes& t = desc_.types;
    if (dtype_size(t.a) != dtype_size(t.b) || (dtype_size(t.a) != 1 && dtype_size(t.a) != 4))
      throw InvalidArgument(
          "CUDA plan: the k-major operand form takes 1- or 4-byte inputs of one size (" + t.name() +
          ")");
    const std::int64_t m = desc_.m, n = desc_.n, k = desc_.k, count = batch();
    const std::int64_t mp = round16(m), kp = std::max<std::int64_t>(16, round16(k));
    const std::int64_t np = padded_ld(n, t.c);
    const bool ta = desc_.op_a == Op::T, tb = desc_.op_b == Op::T;
    if (slot.c.buf.empty()) {
      slot = Slot{DeviceMatrix(t.a, mp, kp, kp, "matrix A (k-major)", 0, count),
                  DeviceMatrix(t.b, np, kp, kp, "matrix B (k-major)", 0, count),
                  DeviceMatrix(t.c, m, n, np, "matrix C", mp, count)};
      slot.c.zero(stream);
    }
    if (raw_a.buf.empty()) raw_a = DeviceMatrix(t.a, ta ? k : m, ta ? m : k, "matrix A");
    if (raw_b.buf.empty()) raw_b = DeviceMatrix(t.b, tb ? n : k, tb ? k : n, "matrix B");
    for (std::int64_t i = 0; i < count; ++i) {
      raw_a.upload([&](std::int64_t) { return args.a_of(i); }, args.lda, stream);
      raw_b.upload([&](std::int64_t) { return args.b_of(i); }, args.ldb, stream);
      // op(A) is m x k: A itself (N) or A^T. B must become op(B)^T, n x k: B^T (N) or B (T).
      launch_relayout(t.a, raw_a.buf.get(), raw_a.rows, raw_a.cols, raw_a.ld, ta, slot.a.at(i), mp,
                      kp, kp, stream);
      launch_relayout(t.b, raw_b.buf.get(), raw_b.rows, raw_b.cols, raw_b.ld, !tb, slot.b.at(i), np,
                      kp, kp, stream);
    }
    slot.c.upload([&](std::int64_t i) -> const void* { return args.c_of(i); }, args.ldc, stream);
  }

  // The operands of a slot as the launcher receives them (before the ops_n pre-pass).
  DeviceGemm view(const Slot& s) const {
    DeviceGemm dg{desc_, s.a.data(), s.a.ld, s.b.data(), s.b.ld, s.c.data(), s.c.ld};
    dg.stride_a = s.a.stride;
    dg.stride_b = s.b.stride;
    dg.stride_c = s.c.stride;
    dg.workspace = workspace_.get();
    dg.workspace_bytes = workspace_.bytes();
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
    const std::int64_t count = batch();
    if (!at_.buf.empty() && desc_.k > 0) {
      launch_transpose(t.a, s.a.data(), desc_.k, desc_.m, s.a.ld, at_.buf.get(), at_.ld, stream,
                       count, s.a.stride, at_.stride);
      dg.a = at_.buf.get();
      dg.lda = at_.ld;
      dg.stride_a = at_.stride;
    }
    if (!bt_.buf.empty() && desc_.k > 0) {
      launch_transpose(t.b, s.b.data(), desc_.n, desc_.k, s.b.ld, bt_.buf.get(), bt_.ld, stream,
                       count, s.b.stride, bt_.stride);
      dg.b = bt_.buf.get();
      dg.ldb = bt_.ld;
      dg.stride_b = bt_.stride;
    }
    // With k = 0 nothing is read: the launcher only needs to see op N.
    dg.desc.op_a = dg.desc.op_b = Op::N;
  }

  int ordinal_;
  GemmDesc desc_;
  Params params_;
  Launcher launcher_;
  PlanTraits traits_;
  GemmArgs args_;
  bool bound_ = false;                    // the operands came from bind(): runs on caller_stream_
  cudaStream_t caller_stream_ = nullptr;  // nullptr: the legacy default stream
  std::optional<Stream> stream_;          // load / run / fetch (see stream())
  std::optional<EventTimer> timer_;
  std::vector<Slot> slots_;  // load()'s
  // bind()'s operands: the caller's buffers (adopted_), or this plan's copies of them (staging_,
  // with raw_a_ / raw_b_ for the k-major form) when staged_.
  Slot adopted_, staging_;
  DeviceMatrix raw_a_, raw_b_;
  bool staged_ = false;
  std::optional<cudaStream_t> used_stream_;  // where this plan's last work was enqueued
  cudaEvent_t handover_ = nullptr;           // see follow()
  std::optional<DeviceGemm> prepared_;       // the view traits_.prepare last saw
  DeviceMatrix at_, bt_;
  DeviceBuffer workspace_;
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
