// Shared test helpers: random GEMM problems in any layout and a poisoned, verified run.
// Keeping this in one place means every backend's suite checks results the same way.
#include "common/problems.hpp"

#include <cmath>
#include <string>

#include "kafel/bench.hpp"

namespace kafel::test {
namespace {

Matrix make(DType t, std::int64_t rows, std::int64_t cols, Layout layout, std::int64_t pad) {
  const std::int64_t tight = layout == Layout::RowMajor ? cols : rows;
  return Matrix(t, rows, cols, layout, std::max<std::int64_t>(tight, 1) + pad);
}

}  // namespace

std::vector<Shape> odd_shapes() {
  return {{1, 1, 1},    {13, 24, 35}, {35, 13, 24}, {127, 61, 257}, {61, 127, 1}, {3, 5, 0},
          {1, 67, 129}, {97, 1, 33},  {64, 64, 64}, {65, 33, 17},   {257, 7, 19}, {7, 263, 41}};
}

Problem make_problem(const GemmDesc& desc, const ProblemOptions& opt) {
  Problem p;
  p.desc = desc;
  const auto ar = desc.op_a == Op::N ? desc.m : desc.k, ac = desc.op_a == Op::N ? desc.k : desc.m;
  const auto br = desc.op_b == Op::N ? desc.k : desc.n, bc = desc.op_b == Op::N ? desc.n : desc.k;
  p.a = make(desc.types.a, ar, ac, opt.layout_a, opt.ld_pad);
  p.b = make(desc.types.b, br, bc, opt.layout_b, opt.ld_pad);
  p.c0 = make(desc.types.c, desc.m, desc.n, opt.layout_c, opt.ld_pad);
  std::mt19937_64 rng(opt.seed);
  if (opt.integer_values || desc.types.exact()) {
    fill_random_integers(p.a, rng);
    fill_random_integers(p.b, rng);
    fill_random_integers(p.c0, rng);
  } else {
    fill_random_normal(p.a, rng);
    fill_random_normal(p.b, rng);
    fill_random_normal(p.c0, rng);
  }
  p.c = p.c0.clone();
  return p;
}

double scalar_for(const GemmTypes& t, double v) {
  if (!t.exact() || v == std::trunc(v)) return v;
  return v < 0 ? std::floor(v) : std::ceil(v);
}

VerifyResult run_and_verify(const Device& device, const std::string& kernel, Problem& p,
                            const Params& params) {
  GemmOptions opt;
  opt.kernel = kernel;
  opt.params = params;
  return run_verified(device, p.desc, p.a, p.b, p.c0, p.c, opt).verify;
}

std::string describe(const std::string& kernel, const Problem& p, const ProblemOptions& opt) {
  return kernel + " " + p.desc.shape() + " alpha=" + std::to_string(p.desc.alpha) +
         " beta=" + std::to_string(p.desc.beta) + " layouts " +
         std::string(to_string(opt.layout_a)) + "/" + std::string(to_string(opt.layout_b)) + "/" +
         std::string(to_string(opt.layout_c)) + " ld+" + std::to_string(opt.ld_pad);
}

}  // namespace kafel::test
