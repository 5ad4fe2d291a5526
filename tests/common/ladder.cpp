// The shared GEMM ladder test bodies (see ladder.hpp): cases come from the registry, so a new
// kernel or a new element-role combination is tested the moment its file registers it.
#include "common/ladder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "common/problems.hpp"
#include "core/backend.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"

namespace kafel::test {
namespace {

// Shapes that straddle the 16 / 32 / 64 / 128 / 256 tiles of the faster rungs.
std::vector<Shape> tile_edge_shapes() {
  return {{129, 257, 33}, {200, 130, 70}, {255, 129, 17}, {131, 263, 129}};
}

bool fits(const LadderCase& c, const Shape& s) {
  return c.kernel != "cuda.oneblock" || s.m * s.n <= 1024;
}

// Runs one problem and expects it to verify; any kafel error is a failure naming the case.
void check(const Device& dev, const LadderCase& c, const GemmDesc& d, const ProblemOptions& opt,
           const Params& params) {
  auto p = make_problem(d, opt);
  GemmOptions go;
  go.kernel = c.kernel;
  go.params = params;
  try {
    const CheckedRun r = run_verified(dev, d, p.a, p.b, p.c0, p.c, go);
    EXPECT_TRUE(r.verify.passed) << describe(c.kernel, p, opt) << " " << format_params(params)
                                 << ": " << r.verify.message;
  } catch (const Error& e) {
    ADD_FAILURE() << describe(c.kernel, p, opt) << " " << format_params(params) << ": " << e.what();
  }
}

// For a case the registry says this device cannot run: the kernel must refuse it with
// Unsupported naming what is missing, before anything runs.
void expect_refusal(const Device& dev, const LadderCase& c) {
  const GemmDesc d{13, 24, 35, Op::N, Op::N, 1.0, 0.0, c.types};
  try {
    choose_gemm(dev, d, c.kernel);
    ADD_FAILURE() << c.kernel << " " << c.types.name() << " on " << dev.id
                  << " was accepted, but the registry says: " << c.unsupported;
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("needs"), std::string::npos) << e.what();
  }
}

// Sets up a case: false (and the test skipped or the refusal checked) when it cannot run.
bool ready(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) {
    ADD_FAILURE_AT(__FILE__, __LINE__) << "internal: ready() without a device";
    return false;
  }
  if (c.absent) {
    [&] { GTEST_SKIP() << c.unsupported; }();
    return false;
  }
  if (!c.unsupported.empty()) {
    expect_refusal(*dev, c);
    return false;
  }
  return true;
}

double alpha_of(std::uint64_t seed, const GemmTypes& t) {
  return scalar_for(t, seed % 3 == 0 ? 1.0 : -1.5);
}
double beta_of(std::uint64_t seed, const GemmTypes& t) {
  return scalar_for(t, seed % 2 ? 0.0 : 0.5);
}

}  // namespace

std::vector<LadderCase> ladder_cases(const std::optional<Device>& device) {
  if (!device) return {{"none.none", GemmTypes{}, {}, "no device"}};
  std::vector<LadderCase> out;
  for (const auto& k : gemm_kernels(*device))
    for (const auto& s : k.types) {
      LadderCase c{k.name, s.types, {}, k.runs(s.types, *device)};
      // Is the library there at all? (64^3: a shape every baseline takes.)
      if (k.baseline && c.unsupported.empty()) try {
          choose_gemm(*device, {64, 64, 64, Op::N, Op::N, 1.0, 0.0, s.types}, k.name);
        } catch (const Unsupported& e) {
          c.unsupported = e.what();
          c.absent = true;
        }
      out.push_back(c);
    }
  return out;
}

std::string ladder_case_name(const LadderCase& c) {
  std::string n = c.kernel.substr(c.kernel.find('.') + 1) + "_" + c.types.name();
  for (const auto& [k, v] : c.params) n += "_" + k + std::to_string(v);
  std::string out;
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (n.compare(i, 2, "->") == 0) {
      out += "_to_";
      ++i;
    } else {
      out += std::isalnum(static_cast<unsigned char>(n[i])) ? n[i] : '_';
    }
  }
  return out;
}

void ladder_odd_shapes(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  if (!ready(dev, c)) return;
  std::uint64_t seed = 11;
  auto shapes = odd_shapes();
  for (const auto& s : tile_edge_shapes()) shapes.push_back(s);
  for (const auto& s : shapes) {
    if (!fits(c, s)) continue;
    for (Op oa : {Op::N, Op::T})
      for (Op ob : {Op::N, Op::T}) {
        ++seed;
        ProblemOptions opt;
        opt.seed = seed;
        check(*dev, c,
              {s.m, s.n, s.k, oa, ob, alpha_of(seed, c.types), beta_of(seed, c.types), c.types},
              opt, c.params);
      }
  }
}

void ladder_layouts(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  if (!ready(dev, c)) return;
  const Layout R = Layout::RowMajor, C = Layout::ColMajor;
  std::uint64_t seed = 100;
  const double alpha = 2.0, beta = scalar_for(c.types, -0.75);
  for (Layout la : {R, C})
    for (Layout lb : {R, C})
      for (Layout lc : {R, C}) {
        ProblemOptions opt{la, lb, lc, 3, false, ++seed};
        check(*dev, c, {29, 17, 23, Op::N, Op::T, alpha, beta, c.types}, opt, c.params);
      }
}

void ladder_exact(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  if (!ready(dev, c)) return;
  const int acc_bits = type_info(compute_info(c.types.compute).accumulator).precision;
  for (const Shape& s : {Shape{13, 24, 35}, Shape{200, 136, 264}, Shape{257, 263, 129}}) {
    if (!fits(c, s)) continue;
    // |sum| <= 16 k + |beta c0| must be exact in the accumulator.
    if (16.0 * double(s.k) + 16.0 >= std::ldexp(1.0, acc_bits)) continue;
    for (Op ob : {Op::N, Op::T}) {
      const GemmDesc d{s.m, s.n, s.k, Op::N, ob, 1.0, 1.0, c.types};
      ProblemOptions opt;
      opt.integer_values = true;
      auto p = make_problem(d, opt);
      const Matrix expected = p.c0.clone();
      reference_gemm(d.op_a, d.op_b, d.alpha, p.a, p.b, d.beta, expected);
      GemmOptions go;
      go.kernel = c.kernel;
      go.params = c.params;
      try {
        run_verified(*dev, d, p.a, p.b, p.c0, p.c, go);
      } catch (const Error& e) {
        ADD_FAILURE() << c.kernel << " " << d.shape() << ": " << e.what();
        continue;
      }
      // The sum is exact; storing it in a C narrower than the accumulator rounds it once, and
      // on a tie kernels may round either way (cuBLAS's bf16 epilogue does): one step of C.
      const int c_bits = type_info(c.types.c).precision;
      for (std::int64_t i = 0; i < d.m; ++i)
        for (std::int64_t j = 0; j < d.n; ++j) {
          const double want = expected.get(i, j);
          const double step =
              c_bits < acc_bits && want != 0 ? std::ldexp(1.0, std::ilogb(want) - c_bits + 1) : 0;
          ASSERT_LE(std::abs(p.c.get(i, j) - want), step)
              << c.kernel << " " << d.shape() << " at (" << i << "," << j << "): " << p.c.get(i, j)
              << " vs " << want;
        }
    }
  }
}

void ladder_large(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  if (c.kernel == "cuda.oneblock") GTEST_SKIP() << "one block holds at most 1024 threads";
  if (!ready(dev, c)) return;
  ProblemOptions opt;
  opt.seed = 5;
  check(*dev, c, {517, 389, 1031, Op::N, Op::N, scalar_for(c.types, 0.5), 0.0, c.types}, opt,
        c.params);
  check(*dev, c, {388, 516, 260, Op::T, Op::T, 1.0, 2.0, c.types}, opt, c.params);
}

void ladder_sampled_params(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  if (!ready(dev, c)) return;
  const GemmKernel& k = find_gemm_kernel(*dev, c.kernel);
  bool tunable = false;
  for (const auto& d : k.params.params) tunable = tunable || !d.candidates.empty();
  if (!tunable) GTEST_SKIP() << c.kernel << " has no tunable parameters";
  // Parameters are sampled with the kernel's first (primary) roles only: the other roles run
  // the same code paths with the defaults in every other body, and each sampled point is a
  // fresh compile on OpenCL (seconds to a minute on PoCL).
  if (c.types != k.types.front().types)
    GTEST_SKIP() << "parameters are sampled with " << c.kernel << "'s primary roles ("
                 << k.types.front().types.name() << ")";
  std::mt19937_64 rng(std::hash<std::string>{}(c.kernel + c.types.name()));
  int found = 0;
  for (int tries = 0; tries < 2000 && found < 3; ++tries) {
    Params p = k.params.defaults();
    for (const auto& d : k.params.params)
      if (!d.candidates.empty()) p[d.name] = d.candidates[rng() % d.candidates.size()];
    if (!k.params.check(p).empty()) continue;
    ++found;
    const GemmDesc d{
        37, 45, 29, Op::N, Op::T, scalar_for(c.types, 1.5), scalar_for(c.types, 0.25), c.types};
    // A valid point may still exceed this device's limits: it must be refused with
    // Unsupported before anything is launched (never a DeviceError or a build log).
    try {
      choose_gemm(*dev, d, c.kernel, p);
    } catch (const Unsupported& e) {
      GTEST_LOG_(INFO) << c.kernel << " " << k.params.format(p) << ": " << e.what();
      continue;
    }
    ProblemOptions opt;
    opt.seed = rng();
    auto prob = make_problem(d, opt);
    GemmOptions go;
    go.kernel = c.kernel;
    go.params = p;
    try {
      const CheckedRun r = run_verified(*dev, d, prob.a, prob.b, prob.c0, prob.c, go);
      EXPECT_TRUE(r.verify.passed)
          << c.kernel << " " << k.params.format(p) << ": " << r.verify.message;
    } catch (const Unsupported& e) {  // a limit only the built kernel reveals (OpenCL)
      GTEST_LOG_(INFO) << c.kernel << " " << k.params.format(p) << ": " << e.what();
    } catch (const Error& e) {
      ADD_FAILURE() << c.kernel << " " << k.params.format(p) << ": " << e.what();
    }
  }
  EXPECT_GT(found, 0) << c.kernel << ": no valid point found in its parameter space";
}

}  // namespace kafel::test
