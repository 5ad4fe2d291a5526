// Implementation of the shared CUDA GemmPlan (see plan.hpp): uploads with cudaMemcpy2D into
// padded device rows, per-slot copies for cache rotation, and event-timed runs.
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

// A row-major rows x cols matrix on the device with a padded leading dimension.
struct DeviceMatrix {
  DeviceBuffer buf;
  std::int64_t rows = 0, cols = 0, ld = 0;

  DeviceMatrix() = default;
  DeviceMatrix(DType t, std::int64_t r, std::int64_t c, const char* what)
      : buf(static_cast<std::size_t>(r * padded_ld(c, t)) * dtype_size(t), what),
        rows(r),
        cols(c),
        ld(padded_ld(c, t)) {}

  // Copies on the plan's stream; the caller synchronises it before the host relies on them.
  void upload(const void* host, std::int64_t host_ld, DType t, cudaStream_t s) {
    if (rows == 0 || cols == 0) return;
    const std::size_t es = dtype_size(t);
    KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(buf.get(), ld * es, host, host_ld * es, cols * es, rows,
                                       cudaMemcpyHostToDevice, s));
  }
  void download(void* host, std::int64_t host_ld, DType t, cudaStream_t s) const {
    if (rows == 0 || cols == 0) return;
    const std::size_t es = dtype_size(t);
    KAFEL_CUDA_CHECK(cudaMemcpy2DAsync(host, host_ld * es, buf.get(), ld * es, cols * es, rows,
                                       cudaMemcpyDeviceToHost, s));
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
        launcher_(launcher),
        traits_(traits) {}

  void load(const GemmArgs& args, int slots) override {
    DeviceGuard g(ordinal_);
    args_ = args;
    const DType t = desc_.dtype;
    const bool ta = desc_.op_a == Op::T, tb = desc_.op_b == Op::T;
    slots_.clear();
    for (int s = 0; s < std::max(slots, 1); ++s) {
      Slot slot{DeviceMatrix(t, ta ? desc_.k : desc_.m, ta ? desc_.m : desc_.k, "matrix A"),
                DeviceMatrix(t, tb ? desc_.n : desc_.k, tb ? desc_.k : desc_.n, "matrix B"),
                DeviceMatrix(t, desc_.m, desc_.n, "matrix C")};
      slot.a.upload(args.a, args.lda, t, stream_);
      slot.b.upload(args.b, args.ldb, t, stream_);
      slot.c.upload(args.c, args.ldc, t, stream_);
      stream_.synchronize();  // the host buffers may be reused as soon as load returns
      slots_.push_back(std::move(slot));
    }
    if (traits_.ops_n_only && ta) at_ = DeviceMatrix(t, desc_.m, desc_.k, "A transposed");
    if (traits_.ops_n_only && tb) bt_ = DeviceMatrix(t, desc_.k, desc_.n, "B transposed");
  }

  double run(int slot) override {
    DeviceGuard g(ordinal_);
    if (slot < 0 || slot >= static_cast<int>(slots_.size()))
      throw InvalidArgument("CUDA plan: slot " + std::to_string(slot) + " was not loaded");
    if (desc_.m == 0 || desc_.n == 0) return 0.0;  // nothing to do; a 0-sized grid is invalid
    Slot& s = slots_[slot];
    DeviceGemm dg{desc_, s.a.buf.get(), s.a.ld, s.b.buf.get(), s.b.ld, s.c.buf.get(), s.c.ld};
    launch_spin(stream_);
    timer_.start(stream_);
    if (!at_.buf.empty() && desc_.k > 0) {
      launch_transpose(desc_.dtype, s.a.buf.get(), desc_.k, desc_.m, s.a.ld, at_.buf.get(), at_.ld,
                       stream_);
      dg.a = at_.buf.get();
      dg.lda = at_.ld;
      dg.desc.op_a = Op::N;
    }
    if (!bt_.buf.empty() && desc_.k > 0) {
      launch_transpose(desc_.dtype, s.b.buf.get(), desc_.n, desc_.k, s.b.ld, bt_.buf.get(), bt_.ld,
                       stream_);
      dg.b = bt_.buf.get();
      dg.ldb = bt_.ld;
      dg.desc.op_b = Op::N;
    }
    if (traits_.ops_n_only && desc_.k == 0) dg.desc.op_a = dg.desc.op_b = Op::N;
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
    slots_[0].c.download(args_.c, args_.ldc, desc_.dtype, stream_);
    stream_.synchronize();
  }

  std::string timer() const override { return "cuda-events"; }

 private:
  int ordinal_;
  DeviceGuard guard_;  // the device is current while the stream and events are created
  GemmDesc desc_;
  Params params_;
  Launcher launcher_;
  PlanTraits traits_;
  GemmArgs args_;
  Stream stream_;
  EventTimer timer_;
  std::vector<Slot> slots_;
  DeviceMatrix at_, bt_;
};

}  // namespace

std::unique_ptr<GemmPlan> make_cuda_plan(const Device& device, const GemmDesc& desc,
                                         const Params& params, Launcher launcher,
                                         PlanTraits traits) {
  // Kernels index rows and columns with int and add tile sizes and grid strides to them, and
  // cuBLAS takes padded int leading dimensions: keep every dimension well below 2^31.
  constexpr std::int64_t kMax = std::int64_t(1) << 30;
  if (desc.m > kMax || desc.n > kMax || desc.k > kMax)
    throw Unsupported("CUDA kernels: " + desc.shape() + " has a dimension above 2^30");
  return std::make_unique<CudaGemmPlan>(device, desc, params, launcher, traits);
}

}  // namespace kafel::cuda
