// Shared test helpers: random GEMM problems in any layout and element roles. The checked run
// itself is the library's run_verified (kafel/bench.hpp), the same check the benchmarks use.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/gemm.hpp"
#include "kafel/matrix.hpp"

namespace kafel::test {

struct Shape {
  std::int64_t m, n, k;
};

// Sizes that hit the usual edge cases: 1x1x1, the lecture's 13x24x35, primes, k = 0, skinny.
std::vector<Shape> odd_shapes();

// The operands of one GEMM, with C0 kept for verification.
struct Problem {
  GemmDesc desc;
  Matrix a, b, c0, c;
};

struct ProblemOptions {
  Layout layout_a = Layout::RowMajor, layout_b = Layout::RowMajor, layout_c = Layout::RowMajor;
  std::int64_t ld_pad = 0;      // ld = tight + ld_pad
  bool integer_values = false;  // small integers: results are exact in every type
  std::uint64_t seed = 1;
};

Problem make_problem(const GemmDesc& desc, const ProblemOptions& opt = {});

// A test's alpha or beta made valid for the roles: integer GEMM takes integers only, so a
// fraction becomes the next integer away from zero (-1.5 -> -2, 0.25 -> 1).
double scalar_for(const GemmTypes& t, double v);

// run_verified (kafel/bench.hpp) on a Problem with kernel `kernel` and `params`: C poisoned or
// reset to C0, the GEMM run through kafel::gemm, the result verified.
VerifyResult run_and_verify(const Device& device, const std::string& kernel, Problem& p,
                            const Params& params = {});

// A readable description: "cpu.naive 13x24x35 NT f32 alpha=2 beta=0.5 row/col/row ld+3".
std::string describe(const std::string& kernel, const Problem& p, const ProblemOptions& opt);

}  // namespace kafel::test
