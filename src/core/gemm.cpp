// The GEMM entry point: validates shapes and roles, normalises layouts, runs the chosen plan.
// Normalisation lets every kernel assume row-major operands with op N or T.
#include "kafel/gemm.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "core/backend.hpp"
#include "kafel/error.hpp"

namespace kafel {
namespace {

std::string format_scalar(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string dims(std::int64_t r, std::int64_t c) {
  return std::to_string(r) + "x" + std::to_string(c);
}

// A column-major operand seen row-major is its transpose, so its op flips.
void to_row_major(MatrixView& v, Op& op) {
  if (v.layout == Layout::ColMajor) {
    v = v.transposed();
    op = op == Op::N ? Op::T : Op::N;
  }
}

}  // namespace

double GemmDesc::min_bytes() const {
  const double c_passes = beta != 0.0 ? 2.0 : 1.0;
  return double(batch) * (double(dtype_size(types.a)) * double(m) * double(k) +
                          double(dtype_size(types.b)) * double(k) * double(n) +
                          double(dtype_size(types.c)) * c_passes * double(m) * double(n));
}

std::string GemmDesc::shape() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " +
         std::string(to_string(op_a)) + std::string(to_string(op_b)) + " " + types.name() +
         (batch != 1 ? " batch " + std::to_string(batch) : "");
}

void GemmDesc::validate() const {
  if (m < 0 || n < 0 || k < 0)
    throw InvalidArgument("GEMM sizes must not be negative (m=" + std::to_string(m) +
                          ", n=" + std::to_string(n) + ", k=" + std::to_string(k) + ")");
  if (batch < 0)
    throw InvalidArgument("the batch count must not be negative (batch=" + std::to_string(batch) +
                          ")");
  const double limit = double(std::numeric_limits<std::int64_t>::max()) / 16;
  const double count = std::max(1.0, double(batch));
  if (count * double(m) * double(k) > limit || count * double(k) * double(n) > limit ||
      count * double(m) * double(n) > limit)
    throw InvalidArgument("GEMM sizes m=" + std::to_string(m) + ", n=" + std::to_string(n) +
                          ", k=" + std::to_string(k) + ", batch=" + std::to_string(batch) +
                          " are too large to address");
  if (!std::isfinite(alpha) || !std::isfinite(beta))
    throw InvalidArgument("alpha and beta must be finite");
  if (const std::string why = types.check(); !why.empty()) throw InvalidArgument(why);
  if (types.exact()) {
    // Integer GEMM: alpha and beta are int32 values, never silently truncated (0.5 -> 0).
    for (auto [v, what] : {std::pair{alpha, "alpha"}, {beta, "beta"}})
      if (v != std::nearbyint(v) || std::fabs(v) > 2147483647.0)
        throw InvalidArgument(std::string(what) + " = " + format_scalar(v) +
                              " is not an int32 value, as integer GEMM (" + types.name() +
                              ") needs");
  }
}

GemmArgs normalize_gemm(Op op_a, Op op_b, double alpha, const MatrixView& A_in,
                        const MatrixView& B_in, double beta, const MatrixView& C_in,
                        Compute compute) {
  A_in.validate("A");
  B_in.validate("B");
  C_in.validate("C");
  const std::int64_t m = op_a == Op::N ? A_in.rows : A_in.cols;
  const std::int64_t ka = op_a == Op::N ? A_in.cols : A_in.rows;
  const std::int64_t kb = op_b == Op::N ? B_in.rows : B_in.cols;
  const std::int64_t n = op_b == Op::N ? B_in.cols : B_in.rows;
  if (ka != kb)
    throw InvalidArgument("inner dimensions differ: op(A) is " + dims(m, ka) + ", op(B) is " +
                          dims(kb, n));
  if (C_in.rows != m || C_in.cols != n)
    throw InvalidArgument("C is " + dims(C_in.rows, C_in.cols) + " but op(A)*op(B) is " +
                          dims(m, n));

  GemmTypes types;
  types.a = A_in.dtype;
  types.b = B_in.dtype;
  types.c = C_in.dtype;
  types.compute = compute;
  MatrixView A = A_in, B = B_in, C = C_in;
  if (C.layout == Layout::ColMajor) {
    // C^T = op(B)^T op(A)^T, with C^T row-major: swap operands, each seen transposed.
    C = C.transposed();
    MatrixView a2 = B.transposed(), b2 = A.transposed();
    std::swap(op_a, op_b);
    std::swap(types.a, types.b);
    A = a2;
    B = b2;
  }
  to_row_major(A, op_a);
  to_row_major(B, op_b);

  GemmArgs args;
  args.desc = GemmDesc{C.rows, C.cols, ka, op_a, op_b, alpha, beta, types};
  args.desc.validate();
  args.a = A.data;
  args.lda = A.ld;
  args.b = B.data;
  args.ldb = B.ld;
  args.c = C.data;
  args.ldc = C.ld;
  return args;
}

GemmReport run_gemm(const Device& device, const GemmArgs& args, const GemmOptions& opt,
                    std::chrono::steady_clock::time_point start) {
  const GemmChoice choice = choose_gemm(device, args.desc, opt.kernel, opt.params);
  GemmReport report;
  report.kernel = choice.kernel;
  report.config = choice.config();
  const GemmDesc& d = args.desc;
  if (d.m == 0 || d.n == 0 || d.batch == 0) return report;  // nothing to compute or write
  auto plan = find_gemm_kernel(device, choice.kernel).plan(device, d, choice.params);
  plan->load(args, 1);
  report.kernel_ms = plan->run(0);
  plan->fetch();
  report.total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return report;
}

void GemmPlan::bind(const GemmArgs& args, void* /*stream*/) {
  throw Unsupported("this device's GEMM plans take host memory only (" + args.desc.shape() +
                    "): pass host operands");
}

namespace {

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

bool same_problem(const GemmDesc& x, const GemmDesc& y) {
  return x.m == y.m && x.n == y.n && x.k == y.k && x.op_a == y.op_a && x.op_b == y.op_b &&
         x.alpha == y.alpha && x.beta == y.beta && x.types == y.types;
}

}  // namespace

struct PreparedGemm::Impl {
  Device device;
  Op op_a, op_b;
  GemmArgs args;  // the prepared geometry (pointers of the views it was made from)
  GemmChoice choice;
  GemmReport named;  // kernel and config, formatted once: run() only adds the times
  Residence residence;
  std::unique_ptr<GemmPlan> plan;  // null when there is nothing to compute (m or n is 0)
};

PreparedGemm::PreparedGemm(const Device& device, Op op_a, Op op_b, double alpha,
                           const MatrixView& A, const MatrixView& B, double beta,
                           const MatrixView& C, const GemmOptions& opt, Residence residence)
    : impl_(std::make_unique<Impl>()) {
  const Compute compute = opt.compute ? *opt.compute : default_compute(A.dtype);
  Impl& p = *impl_;
  p.device = device;
  p.op_a = op_a;
  p.op_b = op_b;
  p.residence = residence;
  p.args = normalize_gemm(op_a, op_b, alpha, A, B, beta, C, compute);
  p.choice = choose_gemm(device, p.args.desc, opt.kernel, opt.params);
  p.named.kernel = p.choice.kernel;
  p.named.config = p.choice.config();
  if (p.args.desc.m == 0 || p.args.desc.n == 0) return;  // nothing to compute or write
  p.plan =
      find_gemm_kernel(device, p.choice.kernel).make_plan(device, p.args.desc, p.choice.params);
}

PreparedGemm::PreparedGemm(PreparedGemm&&) noexcept = default;
PreparedGemm& PreparedGemm::operator=(PreparedGemm&&) noexcept = default;
PreparedGemm::~PreparedGemm() = default;

const GemmDesc& PreparedGemm::desc() const {
  return impl_->args.desc;
}
const GemmChoice& PreparedGemm::choice() const {
  return impl_->choice;
}
Residence PreparedGemm::residence() const {
  return impl_->residence;
}

GemmReport PreparedGemm::run(const MatrixView& A, const MatrixView& B, const MatrixView& C,
                             void* stream) {
  const auto start = std::chrono::steady_clock::now();
  Impl& p = *impl_;
  const GemmDesc& prepared = p.args.desc;
  const GemmArgs args = normalize_gemm(p.op_a, p.op_b, prepared.alpha, A, B, prepared.beta, C,
                                       prepared.types.compute);
  if (!same_problem(args.desc, prepared))
    throw InvalidArgument("operands of " + args.desc.shape() + " given to a GEMM prepared for " +
                          prepared.shape());
  GemmReport report = p.named;
  if (!p.plan) return report;
  // The CPU computes in place on the caller's memory: host memory is its device memory.
  if (p.residence == Residence::Device && p.device.backend != "cpu")
    p.plan->bind(args, stream);
  else
    p.plan->load(args, 1);
  report.kernel_ms = p.plan->run(0);
  p.plan->fetch();
  report.total_ms = elapsed_ms(start);
  return report;
}

GemmReport gemm(const Device& device, Op op_a, Op op_b, double alpha, const MatrixView& A,
                const MatrixView& B, double beta, const MatrixView& C, const GemmOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  PreparedGemm prepared(device, op_a, op_b, alpha, A, B, beta, C, opt);
  GemmReport report = prepared.run(A, B, C);
  report.total_ms = elapsed_ms(start);  // choosing and making the plan count too
  return report;
}

GemmReport gemm_device(const Device& device, Op op_a, Op op_b, double alpha, const MatrixView& A,
                       const MatrixView& B, double beta, const MatrixView& C,
                       const GemmOptions& opt, void* stream) {
  PreparedGemm prepared(device, op_a, op_b, alpha, A, B, beta, C, opt, Residence::Device);
  return prepared.run(A, B, C, stream);
}

}  // namespace kafel
