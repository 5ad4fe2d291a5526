// The shape suite (see shapes.hpp): edge sizes, split-K counts and their exactness and
// determinism, batched GEMM and its refusals, for every kernel a backend registers.
#include "common/shapes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/problems.hpp"
#include "core/backend.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"

namespace kafel::test {
namespace {

enum class Outcome { verified, refused, failed };

// Runs one problem with `kernel` ("" = the default choice) and `params`; Unsupported before the
// run is a refusal (the kernel's limits), anything else that goes wrong a failure.
Outcome check(const Device& dev, const std::string& kernel, const GemmDesc& d, const Params& params,
              const ProblemOptions& opt) {
  try {
    choose_gemm(dev, d, kernel, params);
  } catch (const Unsupported& e) {
    GTEST_LOG_(INFO) << kernel << " " << d.shape() << " " << format_params(params)
                     << " refused: " << e.what();
    return Outcome::refused;
  }
  auto p = make_problem(d, opt);
  GemmOptions go;
  go.kernel = kernel;
  go.params = params;
  try {
    const CheckedRun r = run_verified(dev, d, p.a, p.b, p.c0, p.c, go);
    EXPECT_TRUE(r.verify.passed) << describe(kernel, p, opt) << " " << format_params(params) << " ("
                                 << r.report.config << "): " << r.verify.message;
    return r.verify.passed ? Outcome::verified : Outcome::failed;
  } catch (const Error& e) {
    ADD_FAILURE() << describe(kernel, p, opt) << " " << format_params(params) << ": " << e.what();
    return Outcome::failed;
  }
}

bool ready(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) return false;
  return c.unsupported.empty();  // the ladder suite checks the refusal of these cases
}

const GemmKernel* split_kernel(const Device& dev, const LadderCase& c) {
  const GemmKernel& k = find_gemm_kernel(dev, c.kernel);
  return k.params.has("SPLITK") ? &k : nullptr;
}

// The tiles of a kernel's space (SPLITK excluded) when there are a few, as cuda.pipelined's
// compiled shapes; else (OpenCL: thousands of points, a compile each) its defaults only.
std::vector<Params> tiles_of(const GemmKernel& k) {
  std::vector<Params> out;
  for (Params p : k.params.enumerate()) {
    p.erase("SPLITK");
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    if (out.size() > 8) {
      Params defaults = k.params.defaults();
      defaults.erase("SPLITK");
      return {defaults};
    }
  }
  return out;
}

// C's elements as bytes, row by row (the padding between rows left out).
std::vector<unsigned char> bits_of(const Matrix& c) {
  std::vector<unsigned char> out;
  const std::size_t row = static_cast<std::size_t>(c.cols()) * dtype_size(c.dtype());
  for (std::int64_t i = 0; i < c.rows(); ++i) {
    const auto* p = static_cast<const unsigned char*>(c.view().address(i, 0));
    out.insert(out.end(), p, p + row);
  }
  return out;
}

double alpha_for(const GemmTypes& t) {
  return scalar_for(t, 1.5);
}
double beta_for(const GemmTypes& t) {
  return scalar_for(t, 0.5);
}

// ---- batches ---------------------------------------------------------------------------------

// A batch stored with `stride` elements between matrices of each operand (>= the span), the
// gaps filled with a sentinel that must survive.
struct StridedBatch {
  GemmDesc desc;
  Matrix a, b, c0, c;  // one row-major buffer each; rows hold `batch` matrices plus gaps
  std::int64_t sa = 0, sb = 0, sc = 0;
  std::vector<MatrixView> va, vb, vc0, vc;
};

MatrixView first_view(const Matrix& all, std::int64_t rows, std::int64_t cols, Layout layout) {
  MatrixView v = all.view();
  v.rows = rows;
  v.cols = cols;
  v.layout = layout;
  v.ld = layout == Layout::RowMajor ? cols : rows;
  return v;
}

// Buffers of `count` matrices of rows x cols (tight ld) with `gap` spare elements after each.
Matrix batch_buffer(DType t, std::int64_t rows, std::int64_t cols, std::int64_t count,
                    std::int64_t gap, std::int64_t& stride) {
  stride = rows * cols + gap;
  return Matrix(t, 1, std::max<std::int64_t>(1, stride * count));
}

StridedBatch make_batch(const GemmDesc& d, Layout layout_c, std::int64_t gap, std::uint64_t seed,
                        bool integers) {
  StridedBatch s;
  s.desc = d;
  const bool ta = d.op_a == Op::T, tb = d.op_b == Op::T;
  const std::int64_t ar = ta ? d.k : d.m, ac = ta ? d.m : d.k;
  const std::int64_t br = tb ? d.n : d.k, bc = tb ? d.k : d.n;
  s.a = batch_buffer(d.types.a, ar, ac, d.batch, gap, s.sa);
  s.b = batch_buffer(d.types.b, br, bc, d.batch, gap, s.sb);
  s.c0 = batch_buffer(d.types.c, d.m, d.n, d.batch, gap, s.sc);
  std::mt19937_64 rng(seed);
  for (Matrix* x : {&s.a, &s.b, &s.c0}) {
    if (integers || d.types.exact())
      fill_random_integers(*x, rng);
    else
      fill_random_normal(*x, rng);
  }
  s.c = s.c0.clone();
  s.va = strided_views(first_view(s.a, ar, ac, Layout::RowMajor), s.sa, d.batch);
  s.vb = strided_views(first_view(s.b, br, bc, Layout::RowMajor), s.sb, d.batch);
  s.vc0 = strided_views(first_view(s.c0, d.m, d.n, layout_c), s.sc, d.batch);
  s.vc = strided_views(first_view(s.c, d.m, d.n, layout_c), s.sc, d.batch);
  return s;
}

// Every element of C's buffer outside the matrices still holds C0's value.
void expect_gaps_untouched(const StridedBatch& s, const std::string& what) {
  const std::int64_t span = s.desc.m * s.desc.n;
  for (std::int64_t i = 0; i < s.desc.batch; ++i)
    for (std::int64_t g = span; g < s.sc; ++g) {
      const std::int64_t at = i * s.sc + g;
      ASSERT_EQ(s.c.get(0, at), s.c0.get(0, at))
          << what << ": gap element " << g << " after matrix " << i << " was written";
    }
}

void run_batch(const Device& dev, const std::string& kernel, StridedBatch& s,
               const std::string& what) {
  GemmOptions go;
  go.kernel = kernel;
  try {
    const CheckedRun r = run_verified_batch(dev, s.desc, s.va, s.vb, s.vc0, s.vc, go);
    EXPECT_TRUE(r.verify.passed) << what << " (" << r.report.kernel << " " << r.report.config
                                 << "): " << r.verify.message;
    expect_gaps_untouched(s, what);
  } catch (const Unsupported& e) {
    GTEST_LOG_(INFO) << what << " refused: " << e.what();
  } catch (const Error& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

// The same batch as a pointer array in shuffled memory order, through gemm_batched.
void run_shuffled(const Device& dev, const std::string& kernel, StridedBatch& s,
                  const std::string& what) {
  std::vector<std::size_t> order(static_cast<std::size_t>(s.desc.batch));
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  std::vector<MatrixView> a, b, c0, c;
  for (std::size_t i : order) {
    a.push_back(s.va[i]);
    b.push_back(s.vb[i]);
    c0.push_back(s.vc0[i]);
    c.push_back(s.vc[i]);
  }
  GemmOptions go;
  go.kernel = kernel;
  try {
    const CheckedRun r = run_verified_batch(dev, s.desc, a, b, c0, c, go);
    EXPECT_TRUE(r.verify.passed) << what << " (pointer array): " << r.verify.message;
  } catch (const Unsupported& e) {
    GTEST_LOG_(INFO) << what << " refused: " << e.what();
  } catch (const Error& e) {
    ADD_FAILURE() << what << " (pointer array): " << e.what();
  }
}

template <class F>
std::string invalid_argument(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

void shapes_edge_sizes(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  if (!ready(dev, c)) GTEST_SKIP() << c.unsupported;
  const std::vector<Shape> shapes = {
      {1, 1, 1},     {2, 2, 2},     {3, 3, 3},     {1, 2, 3},     {3, 1, 2},    {2, 3, 1},
      {1, 7, 64},    {5, 1, 1000},  {7, 11, 13},   {31, 37, 41},  {61, 59, 1},  {127, 1, 127},
      {1, 131, 257}, {2, 3, 20011}, {1, 1, 65537}, {4, 5, 30011}, {3, 2, 4099}, {17, 19, 8191}};
  std::uint64_t seed = 300;
  int verified = 0;
  for (const Shape& s : shapes) {
    ++seed;
    const Op oa = seed % 2 ? Op::N : Op::T;
    const GemmDesc d{s.m, s.n, s.k, oa, Op::N, alpha_for(c.types), beta_for(c.types), c.types};
    ProblemOptions opt;
    opt.seed = seed;
    verified += check(*dev, c.kernel, d, c.params, opt) == Outcome::verified;
  }
  EXPECT_GT(verified, 0) << c.kernel << " ran none of the edge sizes";
}

void shapes_split_counts(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  if (!ready(dev, c)) GTEST_SKIP() << c.unsupported;
  const GemmKernel* k = split_kernel(*dev, c);
  if (!k) GTEST_SKIP() << c.kernel << " has no SPLITK parameter";
  const std::vector<GemmDesc> problems = {
      {67, 45, 1031, Op::N, Op::N, alpha_for(c.types), beta_for(c.types), c.types},
      {33, 129, 777, Op::T, Op::N, 1.0, 0.0, c.types},
      {130, 260, 2100, Op::N, Op::T, alpha_for(c.types), 1.0, c.types}};
  std::uint64_t seed = 400;
  int verified = 0;
  for (const Params& tile : tiles_of(*k))
    for (const std::int64_t s : k->params.get("SPLITK").candidates) {
      Params p = tile;
      p["SPLITK"] = s;
      ProblemOptions opt;
      opt.seed = ++seed;
      verified +=
          check(*dev, c.kernel, problems[seed % problems.size()], p, opt) == Outcome::verified;
    }
  for (const std::int64_t s : {3, 5, 7, 33, 256})
    for (const GemmDesc& d : problems) {
      ProblemOptions opt;
      opt.seed = ++seed;
      verified += check(*dev, c.kernel, d, {{"SPLITK", s}}, opt) == Outcome::verified;
    }
  EXPECT_GT(verified, 0) << c.kernel << ": no split count ran";
}

void shapes_split_exact(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  if (!ready(dev, c)) GTEST_SKIP() << c.unsupported;
  if (!split_kernel(*dev, c)) GTEST_SKIP() << c.kernel << " has no SPLITK parameter";
  const GemmDesc d{70, 50, 3001, Op::N, Op::N, 1.0, 1.0, c.types};
  // |sum| <= 16 k + |c0| must be exact in the accumulator (f32: 2^24; not half).
  const int acc_bits = type_info(compute_info(c.types.compute).accumulator).precision;
  if (16.0 * double(d.k) + 16.0 >= std::ldexp(1.0, acc_bits))
    GTEST_SKIP() << c.types.name() << ": sums of this size are not exact in the accumulator";
  ProblemOptions opt;
  opt.integer_values = true;
  opt.seed = 500;
  auto p = make_problem(d, opt);
  const Matrix expected = p.c0.clone();
  reference_gemm(d.op_a, d.op_b, d.alpha, p.a, p.b, d.beta, expected);
  for (const std::int64_t s : {1, 2, 3, 7, 16}) {
    GemmOptions go;
    go.kernel = c.kernel;
    go.params = {{"SPLITK", s}};
    try {
      run_verified(*dev, d, p.a, p.b, p.c0, p.c, go);
    } catch (const Unsupported& e) {
      GTEST_LOG_(INFO) << c.kernel << " SPLITK=" << s << " refused: " << e.what();
      continue;
    } catch (const Error& e) {
      ADD_FAILURE() << c.kernel << " SPLITK=" << s << ": " << e.what();
      continue;
    }
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j)
        ASSERT_EQ(p.c.get(i, j), expected.get(i, j))
            << c.kernel << " SPLITK=" << s << " " << d.shape() << " at (" << i << "," << j << ")";
  }
}

void shapes_deterministic(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  if (!ready(dev, c)) GTEST_SKIP() << c.unsupported;
  if (find_gemm_kernel(*dev, c.kernel).baseline) GTEST_SKIP() << "a baseline, not ours";
  const GemmDesc d{97, 83, 4111, Op::N, Op::N, alpha_for(c.types), beta_for(c.types), c.types};
  std::vector<Params> settings = {c.params};
  if (split_kernel(*dev, c))
    for (const std::int64_t s : {1, 4, 7}) settings.push_back({{"SPLITK", s}});
  for (const Params& params : settings) {
    ProblemOptions opt;
    opt.seed = 600;
    auto p = make_problem(d, opt);
    GemmOptions go;
    go.kernel = c.kernel;
    go.params = params;
    try {
      run_verified(*dev, d, p.a, p.b, p.c0, p.c, go);
      const auto first = bits_of(p.c);
      const CheckedRun again = run_verified(*dev, d, p.a, p.b, p.c0, p.c, go);
      EXPECT_TRUE(again.verify.passed) << again.verify.message;
      EXPECT_TRUE(first == bits_of(p.c)) << c.kernel << " " << format_params(params)
                                         << ": two runs of " << d.shape() << " gave different bits";
    } catch (const Unsupported& e) {
      GTEST_LOG_(INFO) << c.kernel << " refused " << d.shape() << ": " << e.what();
    } catch (const Error& e) {
      ADD_FAILURE() << c.kernel << " " << format_params(params) << ": " << e.what();
    }
  }
}

void shapes_batched(const std::optional<Device>& dev, const LadderCase& c) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  if (!ready(dev, c)) GTEST_SKIP() << c.unsupported;
  const GemmKernel& k = find_gemm_kernel(*dev, c.kernel);
  std::vector<std::pair<GemmDesc, Layout>> cases = {
      {{13, 7, 29, Op::N, Op::N, alpha_for(c.types), 0.0, c.types, 1}, Layout::RowMajor},
      {{13, 7, 29, Op::T, Op::N, alpha_for(c.types), beta_for(c.types), c.types, 3},
       Layout::RowMajor},
      {{5, 11, 3, Op::N, Op::T, 1.0, beta_for(c.types), c.types, 3}, Layout::ColMajor},
      {{1, 1, 1, Op::N, Op::N, 1.0, 1.0, c.types, 3}, Layout::RowMajor}};
  if (k.batches) {
    cases.push_back({{9, 7, 5, Op::N, Op::N, alpha_for(c.types), beta_for(c.types), c.types, 1000},
                     Layout::RowMajor});
    cases.push_back(
        {{33, 17, 65, Op::T, Op::T, alpha_for(c.types), 0.0, c.types, 1000}, Layout::ColMajor});
  }
  std::uint64_t seed = 700;
  for (const auto& [d, layout_c] : cases) {
    StridedBatch s = make_batch(d, layout_c, 3, ++seed, false);
    const std::string what = c.kernel + " " + d.shape();
    run_batch(*dev, c.kernel, s, what);
    if (d.batch <= 3) run_shuffled(*dev, c.kernel, s, what);
  }
}

void shapes_batched_default(const std::optional<Device>& dev) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  for (DType t : {DType::f32, DType::f64, DType::i32}) {
    const GemmTypes types = GemmTypes::of(t);
    const GemmDesc d{17,    9,   33, Op::N, Op::N, scalar_for(types, 1.5), scalar_for(types, -0.5),
                     types, 1000};
    try {
      choose_gemm(*dev, d);
    } catch (const Unsupported& e) {
      GTEST_LOG_(INFO) << "no default kernel for " << d.shape() << ": " << e.what();
      continue;
    }
    StridedBatch s = make_batch(d, Layout::RowMajor, 1, 800, false);
    run_batch(*dev, "", s, "default choice " + d.shape());
  }
}

void shapes_batch_refusals(const std::optional<Device>& dev) {
  if (!dev) GTEST_SKIP() << "no device of this backend present";
  const Matrix a(DType::f32, 3 * 16, 4), b(DType::f32, 3 * 16, 4), c(DType::f32, 3 * 16, 4);
  MatrixView a0 = a.view(), b0 = b.view(), c0 = c.view();
  a0.rows = b0.rows = c0.rows = 4;
  auto strided = [&](std::int64_t sc, MatrixView cv) {
    return invalid_argument(
        [&] { gemm_strided_batched(*dev, Op::N, Op::N, 1.0, a0, 16, b0, 16, 0.0, cv, sc, 3); });
  };
  EXPECT_NE(strided(0, c0).find("C[0] and C[1] share elements"), std::string::npos)
      << strided(0, c0);
  EXPECT_NE(strided(8, c0).find("overlap"), std::string::npos) << strided(8, c0);
  EXPECT_NE(strided(15, c0).find("stride_c = 15"), std::string::npos) << strided(15, c0);
  EXPECT_NE(strided(-16, c0).find("negative"), std::string::npos) << strided(-16, c0);
  EXPECT_EQ(strided(16, c0), "");  // back to back
  // Side by side: three 4x4 matrices in one 4x12 row-major array (ld 12, stride 4) interleave
  // without sharing an element; a stride of 3 makes them share.
  MatrixView wide = c.view();
  wide.rows = 4;
  wide.cols = 4;
  wide.ld = 12;
  EXPECT_EQ(strided(4, wide), "");
  EXPECT_NE(strided(3, wide).find("share elements"), std::string::npos);
  // Pointer arrays: the same C twice; lists of different lengths; matrices of different forms.
  const std::vector<MatrixView> as = {a0, a0}, bs = {b0, b0};
  const std::string twice = invalid_argument([&] {
    gemm_batched(*dev, Op::N, Op::N, 1.0, as, bs, 0.0, {c0, c0});
  });
  EXPECT_NE(twice.find("C[0] and C[1] share elements"), std::string::npos) << twice;
  const std::string lengths = invalid_argument([&] {
    gemm_batched(*dev, Op::N, Op::N, 1.0, as, {b0}, 0.0, {c0, c0});
  });
  EXPECT_NE(lengths.find("equally long"), std::string::npos) << lengths;
  MatrixView other = c0;
  other.data = static_cast<float*>(c.data()) + 32;
  other.ld = 5;
  other.cols = 4;
  const std::string forms = invalid_argument([&] {
    gemm_batched(*dev, Op::N, Op::N, 1.0, as, bs, 0.0, {c0, other});
  });
  EXPECT_NE(forms.find("C[1]"), std::string::npos) << forms;
  // An empty batch does nothing.
  EXPECT_NO_THROW(gemm_strided_batched(*dev, Op::N, Op::N, 1.0, a0, 16, b0, 16, 0.0, c0, 0, 0));
}

}  // namespace kafel::test
