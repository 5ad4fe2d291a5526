// Batched GEMM in the core: the strided and pointer-array entry points, their normalisation to
// the row-major GemmArgs (with the refusal of overlapping outputs), and the per-matrix plan that
// lets every kernel run a batch, also those that know nothing of batches.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "kafel/error.hpp"

namespace kafel {
namespace {

std::string describe_view(const MatrixView& v) {
  return std::string(to_string(v.dtype)) + " " + std::to_string(v.rows) + "x" +
         std::to_string(v.cols) + (v.layout == Layout::RowMajor ? " row-major" : " column-major") +
         " ld " + std::to_string(v.ld);
}

// Every matrix of a batch operand must look like matrix 0 (one ld, one layout): what kernels
// and device copies assume.
void check_uniform(const std::vector<MatrixView>& list, const char* what) {
  for (std::size_t i = 1; i < list.size(); ++i) {
    const MatrixView& v = list[i];
    const MatrixView& f = list[0];
    if (v.dtype != f.dtype || v.rows != f.rows || v.cols != f.cols || v.ld != f.ld ||
        v.layout != f.layout)
      throw InvalidArgument(std::string("batched GEMM: ") + what + "[" + std::to_string(i) +
                            "] is " + describe_view(v) + " but " + what + "[0] is " +
                            describe_view(f) + " (every matrix of a batch has one form)");
    v.validate(what);
  }
}

template <class P>
std::vector<P> data_of(const std::vector<MatrixView>& list) {
  std::vector<P> out;
  out.reserve(list.size());
  for (const auto& v : list) out.push_back(static_cast<P>(v.data));
  return out;
}

// Whether element offsets {r * ld + c : r < rows, c < cols} and the same set moved by d share
// an element: d = dr * ld + dc with |dr| < rows, |dc| < cols.
bool lattice_meets(std::int64_t d, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  const std::int64_t q = ld > 0 ? d / ld : 0;
  for (std::int64_t dr : {q - 1, q, q + 1}) {
    if (dr <= -rows || dr >= rows) continue;
    const std::int64_t dc = d - dr * ld;
    if (dc > -cols && dc < cols) return true;
  }
  return false;
}

// One GemmPlan per matrix, for kernels without batch support: the framework's loop.
class PerMatrixPlan final : public GemmPlan {
 public:
  PerMatrixPlan(const GemmKernel& kernel, const Device& device, const GemmDesc& desc,
                const Params& params) {
    plans_.reserve(static_cast<std::size_t>(desc.batch));
    for (std::int64_t i = 0; i < desc.batch; ++i)
      plans_.push_back(kernel.make_plan(device, desc.single(), params));
  }
  void load(const GemmArgs& args, int slots) override {
    for (std::size_t i = 0; i < plans_.size(); ++i)
      plans_[i]->load(args.matrix(static_cast<std::int64_t>(i)), slots);
  }
  double run(int slot) override {
    double ms = 0;
    for (auto& p : plans_) ms += p->run(slot);
    return ms;
  }
  void fetch() override {
    for (auto& p : plans_) p->fetch();
  }
  std::string timer() const override {
    return plans_.empty() ? "steady-clock" : plans_.front()->timer() + " (sum over matrices)";
  }

 private:
  std::vector<std::unique_ptr<GemmPlan>> plans_;
};

}  // namespace

GemmArgs GemmArgs::matrix(std::int64_t i) const {
  GemmArgs one;
  one.desc = desc.single();
  one.a = a_of(i);
  one.lda = lda;
  one.b = b_of(i);
  one.ldb = ldb;
  one.c = c_of(i);
  one.ldc = ldc;
  return one;
}

std::unique_ptr<GemmPlan> GemmKernel::plan(const Device& device, const GemmDesc& desc,
                                           const Params& params) const {
  if (desc.batch == 1 || batches) return make_plan(device, desc, params);
  return std::make_unique<PerMatrixPlan>(*this, device, desc, params);
}

std::string output_overlap(const std::vector<void*>& starts, std::int64_t rows, std::int64_t cols,
                           std::int64_t ld, std::size_t elem_size) {
  if (rows <= 0 || cols <= 0 || starts.size() < 2) return "";
  const auto span = static_cast<std::uintptr_t>(((rows - 1) * ld + cols) * std::int64_t(elem_size));
  std::vector<std::size_t> order(starts.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto addr = [&](std::size_t i) { return reinterpret_cast<std::uintptr_t>(starts[i]); };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return addr(x) < addr(y); });
  // Only matrices whose byte ranges overlap can share an element; side-by-side layouts (ld a
  // multiple of the width, stride = the width) interleave without sharing.
  for (std::size_t s = 0; s < order.size(); ++s)
    for (std::size_t t = s + 1; t < order.size() && addr(order[t]) < addr(order[s]) + span; ++t) {
      const std::uintptr_t diff = addr(order[t]) - addr(order[s]);
      const bool shared =
          diff % elem_size != 0 ||
          lattice_meets(static_cast<std::int64_t>(diff / elem_size), rows, cols, ld);
      if (shared) {
        const auto [i, j] = std::minmax(order[s], order[t]);
        return "C[" + std::to_string(i) + "] and C[" + std::to_string(j) + "] share elements";
      }
    }
  return "";
}

GemmArgs normalize_gemm_batch(Op op_a, Op op_b, double alpha, const std::vector<MatrixView>& A,
                              const std::vector<MatrixView>& B, double beta,
                              const std::vector<MatrixView>& C, Compute compute) {
  if (A.size() != C.size() || B.size() != C.size())
    throw InvalidArgument("batched GEMM: the lists of A, B and C hold " + std::to_string(A.size()) +
                          ", " + std::to_string(B.size()) + " and " + std::to_string(C.size()) +
                          " matrices; they must be equally long");
  if (C.empty()) {
    GemmArgs none;
    none.desc.batch = 0;
    return none;
  }
  check_uniform(A, "A");
  check_uniform(B, "B");
  check_uniform(C, "C");
  GemmArgs args = normalize_gemm(op_a, op_b, alpha, A[0], B[0], beta, C[0], compute);
  args.desc.batch = static_cast<std::int64_t>(C.size());
  if (C.size() == 1) return args;
  // A column-major C swapped the operands (normalize_gemm): the lists follow.
  const bool swapped = C[0].layout == Layout::ColMajor;
  args.batch_a = data_of<const void*>(swapped ? B : A);
  args.batch_b = data_of<const void*>(swapped ? A : B);
  args.batch_c = data_of<void*>(C);
  const std::string why = output_overlap(args.batch_c, args.desc.m, args.desc.n, args.ldc,
                                         dtype_size(args.desc.types.c));
  if (!why.empty())
    throw InvalidArgument("batched GEMM: the output matrices overlap: " + why + " (" +
                          describe_view(C[0]) + " each); every C must have its own elements");
  return args;
}

std::vector<MatrixView> strided_views(const MatrixView& first, std::int64_t stride,
                                      std::int64_t count) {
  if (stride < 0 || count < 0)
    throw InvalidArgument(
        "batched GEMM: strides and the batch count must not be negative (stride " +
        std::to_string(stride) + ", batch " + std::to_string(count) + ")");
  std::vector<MatrixView> out;
  out.reserve(static_cast<std::size_t>(count));
  const auto step = stride * static_cast<std::int64_t>(dtype_size(first.dtype));
  for (std::int64_t i = 0; i < count; ++i) {
    MatrixView v = first;
    v.data = static_cast<char*>(first.data) + i * step;
    out.push_back(v);
  }
  return out;
}

GemmReport gemm_batched(const Device& device, Op op_a, Op op_b, double alpha,
                        const std::vector<MatrixView>& A, const std::vector<MatrixView>& B,
                        double beta, const std::vector<MatrixView>& C, const GemmOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  const Compute compute =
      opt.compute ? *opt.compute : default_compute(A.empty() ? DType::f32 : A[0].dtype);
  const GemmArgs args = normalize_gemm_batch(op_a, op_b, alpha, A, B, beta, C, compute);
  if (args.desc.batch == 0) return {};
  return run_gemm(device, args, opt, start);
}

GemmReport gemm_strided_batched(const Device& device, Op op_a, Op op_b, double alpha,
                                const MatrixView& A, std::int64_t stride_a, const MatrixView& B,
                                std::int64_t stride_b, double beta, const MatrixView& C,
                                std::int64_t stride_c, std::int64_t batch, const GemmOptions& opt) {
  if (batch < 0)
    throw InvalidArgument("batched GEMM: the batch count must not be negative (" +
                          std::to_string(batch) + ")");
  try {
    return gemm_batched(device, op_a, op_b, alpha, strided_views(A, stride_a, batch),
                        strided_views(B, stride_b, batch), beta, strided_views(C, stride_c, batch),
                        opt);
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    if (what.find("output matrices overlap") == std::string::npos) throw;
    throw InvalidArgument(what + "; stride_c = " + std::to_string(stride_c) + " elements");
  }
}

}  // namespace kafel
