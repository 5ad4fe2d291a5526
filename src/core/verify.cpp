// Verification of a GEMM result against the float64 reference: exact for integer compute, a
// rigorous per-element rounding bound from the element roles for floats, or Freivalds' O(n^2)
// random-vector check when large.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/reference.hpp"
#include "core/thread_pool.hpp"
#include "core/verify_bound.hpp"
#include "kafel/error.hpp"
#include "kafel/gemm.hpp"

namespace kafel {
namespace {

struct Norms {
  std::vector<double> row_a;  // ||row i of op(A)||_2
  std::vector<double> col_b;  // ||column j of op(B)||_2
};

double op_get(const MatrixView& X, Op op, std::int64_t i, std::int64_t j) {
  return op == Op::N ? X.get(i, j) : X.get(j, i);
}

// Rows (or columns) per thread below which a pass over an operand stays on one thread.
constexpr std::int64_t kRowsPerThread = 64;

// The passes over operands below split their rows or columns between threads; each sum keeps
// its sequential order, so the results do not depend on the thread count.
Norms operand_norms(const GemmDesc& d, const MatrixView& A, const MatrixView& B) {
  Norms n{std::vector<double>(d.m, 0.0), std::vector<double>(d.n, 0.0)};
  parallel_rows(d.m, kRowsPerThread, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      double s = 0;
      for (std::int64_t p = 0; p < d.k; ++p) {
        const double v = op_get(A, d.op_a, i, p);
        s += v * v;
      }
      n.row_a[i] = std::sqrt(s);
    }
  });
  parallel_rows(d.n, kRowsPerThread, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t p = 0; p < d.k; ++p)
      for (std::int64_t j = lo; j < hi; ++j) {
        const double v = op_get(B, d.op_b, p, j);
        n.col_b[j] += v * v;
      }
    for (std::int64_t j = lo; j < hi; ++j) n.col_b[j] = std::sqrt(n.col_b[j]);
  });
  return n;
}

bool is_fp8(DType t) {
  return t == DType::e4m3 || t == DType::e5m2;
}

// The smallest positive value of a floating type (its subnormal floor).
double smallest(DType t) {
  switch (t) {
    case DType::f16:
      return std::ldexp(1.0, -24);
    case DType::bf16:
      return std::ldexp(1.0, -133);
    case DType::f32:
      return std::ldexp(1.0, -149);
    default:
      return 1e-300;
  }
}

std::string where(std::int64_t i, std::int64_t j) {
  return j < 0 ? "row " + std::to_string(i) + " of C*x"
               : "C(" + std::to_string(i) + "," + std::to_string(j) + ")";
}

// Sums of squares in long double (x86: exponent to 16383), so errors and references near the
// top of the double range do not overflow into inf / inf = NaN ("rel err -nan").
using SumSq = long double;

void finish(VerifyResult& r, SumSq err2, SumSq ref2, const std::string& what) {
  r.rel_err = double(ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2));
  r.passed = r.worst_ratio <= 1.0;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s: max abs err %.3g, rel err %.3g, worst %s at %.3g of tolerance",
                r.passed ? "PASS" : "FAIL", r.max_abs_err, r.rel_err,
                where(r.worst_i, r.worst_j).c_str(), r.worst_ratio);
  r.message = std::string(buf) + (what.empty() ? "" : " (" + what + ")");
}

// Accounts one element: NaN in the result where the reference is finite is an infinite error.
void account(VerifyResult& r, double got, double ref, double tol, std::int64_t i, std::int64_t j,
             SumSq& err2, SumSq& ref2) {
  double err = std::fabs(got - ref);
  if (std::isnan(ref) && std::isnan(got)) err = 0;
  if (std::isnan(err) || std::isinf(err)) err = INFINITY;
  // A non-finite error or tolerance (NaN/Inf in the result) can never pass.
  const double ratio = err == 0 ? 0 : (std::isfinite(err) && tol > 0 ? err / tol : INFINITY);
  if (ratio > r.worst_ratio || r.worst_i < 0) {
    r.worst_ratio = ratio;
    r.worst_i = i;
    r.worst_j = j;
  }
  r.max_abs_err = std::max(r.max_abs_err, err);
  err2 += SumSq(err) * SumSq(err);
  if (std::isfinite(ref)) ref2 += SumSq(ref) * SumSq(ref);
}

VerifyResult verify_exact(const GemmDesc& d, const MatrixView& A, const MatrixView& B,
                          const MatrixView& C0, const MatrixView& C) {
  VerifyResult r;
  r.method = "exact";
  const auto ref = reference_i32(d.op_a, d.op_b, d.alpha, A, B, d.beta, C0);
  SumSq err2 = 0, ref2 = 0;
  for (std::int64_t i = 0; i < d.m; ++i)
    for (std::int64_t j = 0; j < d.n; ++j) {
      const double want = ref[i * d.n + j], got = C.at<std::int32_t>(i, j);
      account(r, got, want, 0.5, i, j, err2, ref2);
    }
  finish(r, err2, ref2, "");
  return r;
}

VerifyResult verify_full(const GemmDesc& d, const MatrixView& A, const MatrixView& B,
                         const MatrixView& C0, const MatrixView& C, const VerifyOptions& /*opt*/) {
  VerifyResult r;
  r.method = "full";
  const auto ref = reference_f64(d.op_a, d.op_b, d.alpha, A, B, d.beta, C0);
  const Norms nrm = operand_norms(d, A, B);
  const GemmBound bd = gemm_bound(d);
  SumSq err2 = 0, ref2 = 0;
  for (std::int64_t i = 0; i < d.m; ++i)
    for (std::int64_t j = 0; j < d.n; ++j) {
      const double want = ref[i * d.n + j];
      const double c0 = d.beta != 0 ? std::fabs(d.beta * C0.get(i, j)) : 0.0;
      const double tol = bd.product * std::fabs(d.alpha) * nrm.row_a[i] * nrm.col_b[j] +
                         bd.scale * c0 + bd.output * std::fabs(want) + bd.floor;
      account(r, C.get(i, j), want, tol, i, j, err2, ref2);
    }
  finish(r, err2, ref2, "");
  return r;
}

// y = op(X) * x for a row-major or column-major view, in double.
std::vector<double> apply(const MatrixView& X, Op op, std::int64_t rows, std::int64_t cols,
                          const std::vector<double>& x) {
  std::vector<double> y(rows, 0.0);
  parallel_rows(rows, kRowsPerThread, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      double s = 0;
      for (std::int64_t j = 0; j < cols; ++j) s += op_get(X, op, i, j) * x[j];
      y[i] = s;
    }
  });
  return y;
}

// Integer Freivalds: exact in the ring of integers modulo 2^32.
VerifyResult verify_freivalds_int(const GemmDesc& d, const MatrixView& A, const MatrixView& B,
                                  const MatrixView& C0, const MatrixView& C, std::uint64_t seed) {
  VerifyResult r;
  r.method = "freivalds";
  std::mt19937_64 rng(seed);
  const auto al = static_cast<std::uint32_t>(static_cast<std::int32_t>(d.alpha));
  const auto be = static_cast<std::uint32_t>(static_cast<std::int32_t>(d.beta));
  // Any integer storage (i32, i8) through its exact double value.
  auto u32 = [](const MatrixView& X, Op op, std::int64_t i, std::int64_t j) {
    return static_cast<std::uint32_t>(
        static_cast<std::int64_t>(op == Op::N ? X.get(i, j) : X.get(j, i)));
  };
  for (int trial = 0; trial < 2; ++trial) {
    std::vector<std::uint32_t> x(d.n), bx(d.k, 0u);
    for (auto& v : x) v = static_cast<std::uint32_t>(rng()) | 1u;
    parallel_rows(d.k, kRowsPerThread, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t p = lo; p < hi; ++p)
        for (std::int64_t j = 0; j < d.n; ++j) bx[p] += u32(B, d.op_b, p, j) * x[j];
    });
    std::vector<char> wrong(d.m, 0);
    parallel_rows(d.m, kRowsPerThread, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i) {
        std::uint32_t want = 0, got = 0, c0x = 0;
        for (std::int64_t p = 0; p < d.k; ++p) want += u32(A, d.op_a, i, p) * bx[p];
        for (std::int64_t j = 0; j < d.n; ++j) {
          got += u32(C, Op::N, i, j) * x[j];
          if (d.beta != 0) c0x += u32(C0, Op::N, i, j) * x[j];
        }
        wrong[i] = al * want + be * c0x != got;
      }
    });
    for (std::int64_t i = 0; i < d.m; ++i) {
      if (wrong[i] && r.worst_ratio == 0) {
        r.worst_ratio = INFINITY;
        r.worst_i = i;
        r.max_abs_err = INFINITY;
      }
    }
  }
  finish(r, r.worst_ratio == 0 ? 0 : 1, 1, "modulo 2^32");
  return r;
}

VerifyResult verify_freivalds(const GemmDesc& d, const MatrixView& A, const MatrixView& B,
                              const MatrixView& C0, const MatrixView& C, const VerifyOptions& opt) {
  if (d.types.exact()) return verify_freivalds_int(d, A, B, C0, C, opt.seed);
  VerifyResult r;
  r.method = "freivalds";
  std::mt19937_64 rng(opt.seed);
  const Norms nrm = operand_norms(d, A, B);
  const GemmBound bd = gemm_bound(d);
  double sum_nb = 0;
  for (double v : nrm.col_b) sum_nb += v;
  SumSq err2 = 0, ref2 = 0;
  for (int trial = 0; trial < 2; ++trial) {
    std::vector<double> x(d.n);
    for (auto& v : x) v = (rng() & 1) ? 1.0 : -1.0;
    const auto bx = apply(B, d.op_b, d.k, d.n, x);
    const auto abx = apply(A, d.op_a, d.m, d.k, bx);
    struct Row {
      double got = 0, c0x = 0, abs_c = 0, abs_c0 = 0;
    };
    std::vector<Row> rows(d.m);
    parallel_rows(d.m, kRowsPerThread, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i) {
        Row& w = rows[i];
        for (std::int64_t j = 0; j < d.n; ++j) {
          const double c = C.get(i, j);
          w.got += c * x[j];
          w.abs_c += std::fabs(c);
          if (d.beta != 0) {
            const double c0 = C0.get(i, j);
            w.c0x += c0 * x[j];
            w.abs_c0 += std::fabs(c0);
          }
        }
      }
    });
    for (std::int64_t i = 0; i < d.m; ++i) {
      const Row& w = rows[i];
      const double want = d.alpha * abx[i] + (d.beta != 0 ? d.beta * w.c0x : 0.0);
      const double prod = std::fabs(d.alpha) * nrm.row_a[i] * sum_nb;
      const double tol = freivalds_tolerance(d, bd, prod, w.abs_c, w.abs_c0);
      account(r, w.got, want, tol, i, -1, err2, ref2);
    }
  }
  finish(r, err2, ref2, "");
  return r;
}

}  // namespace

GemmBound gemm_bound(const GemmDesc& d) {
  const DType acc = compute_info(d.types.compute).accumulator;
  double u = unit_roundoff(acc);
  // fp8 products on tensor cores are summed in an accumulator that keeps about 14 significant
  // bits, not binary32's 24 (DeepSeek-V3 report, H800; on the lent H100 cuBLASLt and our wgmma
  // kernels alike exceeded the binary32 bound by 1-2x at k = 64). Verified with 2^-14 instead.
  if (is_fp8(d.types.a) || is_fp8(d.types.b)) u = std::max(u, std::ldexp(1.0, -14));
  const double ku = double(d.k + 2) * u;
  const double gamma = ku / std::max(1e-3, 1.0 - ku);
  const double out = unit_roundoff(d.types.c);
  // Subnormal rounding: of the output, and of every partial sum in a narrow accumulator.
  const double floor = std::max(smallest(d.types.c), double(d.k + 1) * smallest(acc));
  // Factor 2 covers the alpha and beta multiplications and the final addition.
  return {2.0 * (gamma + 2.0 * d.types.input_roundoff()), 4.0 * u, 2.0 * out, floor};
}

double freivalds_tolerance(const GemmDesc& d, const GemmBound& b, double prod, double abs_c,
                           double abs_c0) {
  const double u64 = std::ldexp(1.0, -52) * double(d.n + d.k + 2);
  const double scaled_c0 = std::fabs(d.beta) * abs_c0;
  return b.product * prod + b.scale * scaled_c0 + b.output * abs_c +
         u64 * (prod + abs_c + scaled_c0) + b.floor * double(d.n);
}

VerifyResult verify_gemm(const GemmDesc& d, const MatrixView& A, const MatrixView& B,
                         const MatrixView& C0, const MatrixView& C, const VerifyOptions& opt) {
  d.validate();
  if (A.dtype != d.types.a || B.dtype != d.types.b || C.dtype != d.types.c ||
      (d.beta != 0 && C0.dtype != d.types.c))
    throw InvalidArgument("verify: the matrices' element types do not match " + d.types.name());
  if (C.rows != d.m || C.cols != d.n || C0.rows != d.m || C0.cols != d.n)
    throw InvalidArgument("verify: C is " + std::to_string(C.rows) + "x" + std::to_string(C.cols) +
                          ", expected " + std::to_string(d.m) + "x" + std::to_string(d.n));
  if (d.m == 0 || d.n == 0) {
    VerifyResult r;
    r.passed = true;
    r.method = "empty";
    r.message = "PASS: empty result";
    return r;
  }
  const double work = double(d.m) * double(d.n) * double(d.k);
  const bool freivalds = opt.method == VerifyMethod::Freivalds ||
                         (opt.method == VerifyMethod::Auto && work > opt.full_limit);
  if (freivalds) return verify_freivalds(d, A, B, C0, C, opt);
  if (d.types.exact()) return verify_exact(d, A, B, C0, C);
  return verify_full(d, A, B, C0, C, opt);
}

VerifyResult verify_gemm_batch(const GemmDesc& desc, const std::vector<MatrixView>& A,
                               const std::vector<MatrixView>& B, const std::vector<MatrixView>& C0,
                               const std::vector<MatrixView>& C, const VerifyOptions& opt) {
  desc.validate();
  const auto count = static_cast<std::size_t>(desc.batch);
  if (A.size() != count || B.size() != count || C.size() != count ||
      (desc.beta != 0 && C0.size() != count))
    throw InvalidArgument("verify: a batch of " + std::to_string(count) +
                          " needs that many matrices of A, B, C (and C0 when beta != 0)");
  VerifyResult worst;
  worst.passed = true;
  worst.method = "empty";
  worst.message = "PASS: empty batch";
  if (count == 0) return worst;
  VerifyOptions o = opt;
  const double work = double(desc.m) * double(desc.n) * double(desc.k) * double(count);
  if (opt.method == VerifyMethod::Auto && work > opt.full_limit) o.method = VerifyMethod::Freivalds;
  const GemmDesc one = desc.single();
  std::vector<VerifyResult> results(count);
  std::vector<std::string> errors(count);
  parallel_parts(static_cast<int>(count), default_threads(), [&](int i, int) {
    VerifyOptions mine = o;
    mine.seed = o.seed + static_cast<std::uint64_t>(i);
    try {
      results[i] = verify_gemm(one, A[i], B[i], desc.beta != 0 ? C0[i] : C[i], C[i], mine);
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  });
  for (std::size_t i = 0; i < count; ++i)
    if (!errors[i].empty())
      throw InvalidArgument("verify: matrix " + std::to_string(i) + ": " + errors[i]);
  std::size_t at = 0;
  for (std::size_t i = 0; i < count; ++i) {
    worst.max_abs_err = std::max(worst.max_abs_err, results[i].max_abs_err);
    worst.rel_err = std::max(worst.rel_err, results[i].rel_err);
    if (results[i].worst_ratio > results[at].worst_ratio) at = i;
  }
  const VerifyResult& w = results[at];
  worst.passed = w.passed;
  worst.method = w.method;
  worst.worst_ratio = w.worst_ratio;
  worst.worst_i = w.worst_i;
  worst.worst_j = w.worst_j;
  worst.worst_matrix = static_cast<std::int64_t>(at);
  worst.message =
      "matrix " + std::to_string(at) + " of " + std::to_string(count) + ": " + w.message;
  return worst;
}

}  // namespace kafel
