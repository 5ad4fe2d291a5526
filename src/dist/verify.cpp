// Freivalds' check of a distributed C = alpha A B + beta C0 without gathering anything: each rank
// multiplies its own blocks by the random vectors in float64, the partial vectors are summed
// over MPI, and every rank applies verify_gemm's per-row tolerance to the same sums.
#include <cmath>
#include <cstdio>
#include <random>

#include "core/verify_bound.hpp"
#include "dist/comm_impl.hpp"
#include "kafel/error.hpp"

namespace kafel::dist {

namespace {

// Row i of a local block widened to double (the common types without a call per element).
void row_as_double(const MatrixView& v, std::int64_t i, std::vector<double>& out) {
  out.resize(std::size_t(v.cols));
  if (v.dtype == DType::f32) {
    const float* p = &v.at<float>(i, 0);
    for (std::int64_t j = 0; j < v.cols; ++j) out[std::size_t(j)] = p[j];
  } else if (v.dtype == DType::f64) {
    const double* p = &v.at<double>(i, 0);
    for (std::int64_t j = 0; j < v.cols; ++j) out[std::size_t(j)] = p[j];
  } else {
    for (std::int64_t j = 0; j < v.cols; ++j) out[std::size_t(j)] = v.get(i, j);
  }
}

// Row i of an integer-valued block as 32-bit words (two's complement, as int32 kernels wrap).
void row_as_u32(const MatrixView& v, std::int64_t i, std::vector<std::uint32_t>& out) {
  std::vector<double> d;
  row_as_double(v, i, d);
  out.resize(d.size());
  for (std::size_t j = 0; j < d.size(); ++j) out[j] = std::uint32_t(std::int64_t(d[j]));
}

constexpr int kTrials = 2;

struct Blocks {
  const DistMatrix &A, &B, &C0, &C;
  bool beta;  // C0 takes part
};

// Float64 Freivalds: every sum this rank can form, as full-length vectors (0 where another rank
// owns the element), summed over the job.
VerifyResult check_float(const Communicator& comm, const GemmDesc& d, const Blocks& x,
                         std::uint64_t seed) {
  const Communicator::Impl& c = comm.impl();
  const BlockLayout &la = x.A.layout(), &lb = x.B.layout(), &lc = x.C.layout();
  const auto m = std::size_t(d.m), n = std::size_t(d.n), k = std::size_t(d.k);
  std::mt19937_64 rng(seed);
  std::vector<std::vector<double>> xs(kTrials, std::vector<double>(n));
  for (auto& v : xs)
    for (auto& e : v) e = (rng() & 1) ? 1.0 : -1.0;

  // Norms and |C| sums: [row_a^2 (m) | col_b^2 (n) | abs_c (m) | abs_c0 (m)], and B x per trial.
  std::vector<double> s1(3 * m + n + kTrials * k, 0.0), row;
  double* row_a = s1.data();
  double* col_b = row_a + m;
  double* abs_c = col_b + n;
  double* abs_c0 = abs_c + m;
  double* bx = abs_c0 + m;
  for (std::int64_t i = 0; i < x.A.local().rows(); ++i) {
    row_as_double(x.A.local().view(), i, row);
    double sq = 0;
    for (double v : row) sq += v * v;
    row_a[la.global_row(x.A.prow(), i)] += sq;
  }
  for (std::int64_t p = 0; p < x.B.local().rows(); ++p) {
    row_as_double(x.B.local().view(), p, row);
    const auto gp = std::size_t(lb.global_row(x.B.prow(), p));
    for (std::size_t j = 0; j < row.size(); ++j) {
      const auto gj = std::size_t(lb.global_col(x.B.pcol(), std::int64_t(j)));
      col_b[gj] += row[j] * row[j];
      for (int t = 0; t < kTrials; ++t) bx[t * k + gp] += row[j] * xs[std::size_t(t)][gj];
    }
  }
  // C x and C0 x per trial: [c x (m) | c0 x (m)] x trials.
  std::vector<double> s2(2 * kTrials * m, 0.0);
  for (std::int64_t i = 0; i < x.C.local().rows(); ++i) {
    const auto gi = std::size_t(lc.global_row(x.C.prow(), i));
    for (int which = 0; which < (x.beta ? 2 : 1); ++which) {
      row_as_double((which ? x.C0 : x.C).local().view(), i, row);
      for (std::size_t j = 0; j < row.size(); ++j) {
        const auto gj = std::size_t(lc.global_col(x.C.pcol(), std::int64_t(j)));
        (which ? abs_c0 : abs_c)[gi] += std::fabs(row[j]);
        for (int t = 0; t < kTrials; ++t)
          s2[(std::size_t(t) * 2 + std::size_t(which)) * m + gi] += row[j] * xs[std::size_t(t)][gj];
      }
    }
  }
  allreduce_sum(c, s1.data(), std::int64_t(s1.size()), c.world, "Freivalds' sums");
  // A (B x) per trial, now that B x is whole.
  std::vector<double> s3(kTrials * m, 0.0);
  for (std::int64_t i = 0; i < x.A.local().rows(); ++i) {
    row_as_double(x.A.local().view(), i, row);
    const auto gi = std::size_t(la.global_row(x.A.prow(), i));
    for (std::size_t p = 0; p < row.size(); ++p) {
      const auto gp = std::size_t(la.global_col(x.A.pcol(), std::int64_t(p)));
      for (int t = 0; t < kTrials; ++t) s3[std::size_t(t) * m + gi] += row[p] * bx[t * k + gp];
    }
  }
  allreduce_sum(c, s2.data(), std::int64_t(s2.size()), c.world, "Freivalds' sums");
  allreduce_sum(c, s3.data(), std::int64_t(s3.size()), c.world, "Freivalds' sums");

  VerifyResult r;
  r.method = "freivalds";
  const GemmBound bd = gemm_bound(d);
  double sum_nb = 0;
  for (std::size_t j = 0; j < n; ++j) sum_nb += std::sqrt(col_b[j]);
  long double err2 = 0, ref2 = 0;
  for (int t = 0; t < kTrials; ++t)
    for (std::size_t i = 0; i < m; ++i) {
      const double got = s2[(std::size_t(t) * 2) * m + i];
      const double c0x = x.beta ? s2[(std::size_t(t) * 2 + 1) * m + i] : 0.0;
      const double want = d.alpha * s3[std::size_t(t) * m + i] + (x.beta ? d.beta * c0x : 0.0);
      const double prod = std::fabs(d.alpha) * std::sqrt(row_a[i]) * sum_nb;
      const double tol = freivalds_tolerance(d, bd, prod, abs_c[i], abs_c0[i]);
      double err = std::fabs(got - want);
      if (!std::isfinite(err)) err = INFINITY;
      const double ratio = err == 0 ? 0 : (std::isfinite(err) && tol > 0 ? err / tol : INFINITY);
      if (ratio > r.worst_ratio || r.worst_i < 0) {
        r.worst_ratio = ratio;
        r.worst_i = std::int64_t(i);
      }
      r.max_abs_err = std::max(r.max_abs_err, err);
      err2 += (long double)err * err;
      if (std::isfinite(want)) ref2 += (long double)want * want;
    }
  r.rel_err = double(ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2));
  r.passed = r.worst_ratio <= 1.0;
  return r;
}

// Integer compute: the same products exactly, modulo 2^32 (sums of 32-bit words wrap).
VerifyResult check_integer(const Communicator& comm, const GemmDesc& d, const Blocks& x,
                           std::uint64_t seed) {
  const Communicator::Impl& c = comm.impl();
  const BlockLayout &la = x.A.layout(), &lb = x.B.layout(), &lc = x.C.layout();
  const auto m = std::size_t(d.m), n = std::size_t(d.n), k = std::size_t(d.k);
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::uint32_t>> xs(kTrials, std::vector<std::uint32_t>(n));
  for (auto& v : xs)
    for (auto& e : v) e = std::uint32_t(rng()) | 1u;
  std::vector<std::uint32_t> bx(kTrials * k, 0u), row;
  for (std::int64_t p = 0; p < x.B.local().rows(); ++p) {
    row_as_u32(x.B.local().view(), p, row);
    const auto gp = std::size_t(lb.global_row(x.B.prow(), p));
    for (std::size_t j = 0; j < row.size(); ++j) {
      const auto gj = std::size_t(lb.global_col(x.B.pcol(), std::int64_t(j)));
      for (int t = 0; t < kTrials; ++t) bx[t * k + gp] += row[j] * xs[std::size_t(t)][gj];
    }
  }
  std::vector<std::uint32_t> s2(2 * kTrials * m, 0u);
  for (std::int64_t i = 0; i < x.C.local().rows(); ++i) {
    const auto gi = std::size_t(lc.global_row(x.C.prow(), i));
    for (int which = 0; which < (x.beta ? 2 : 1); ++which) {
      row_as_u32((which ? x.C0 : x.C).local().view(), i, row);
      for (std::size_t j = 0; j < row.size(); ++j) {
        const auto gj = std::size_t(lc.global_col(x.C.pcol(), std::int64_t(j)));
        for (int t = 0; t < kTrials; ++t)
          s2[(std::size_t(t) * 2 + std::size_t(which)) * m + gi] += row[j] * xs[std::size_t(t)][gj];
      }
    }
  }
  allreduce_sum(c, bx.data(), std::int64_t(bx.size()), c.world, "Freivalds' sums");
  std::vector<std::uint32_t> s3(kTrials * m, 0u);
  for (std::int64_t i = 0; i < x.A.local().rows(); ++i) {
    row_as_u32(x.A.local().view(), i, row);
    const auto gi = std::size_t(la.global_row(x.A.prow(), i));
    for (std::size_t p = 0; p < row.size(); ++p) {
      const auto gp = std::size_t(la.global_col(x.A.pcol(), std::int64_t(p)));
      for (int t = 0; t < kTrials; ++t) s3[std::size_t(t) * m + gi] += row[p] * bx[t * k + gp];
    }
  }
  allreduce_sum(c, s2.data(), std::int64_t(s2.size()), c.world, "Freivalds' sums");
  allreduce_sum(c, s3.data(), std::int64_t(s3.size()), c.world, "Freivalds' sums");
  VerifyResult r;
  r.method = "freivalds";
  const auto al = std::uint32_t(std::int32_t(d.alpha)), be = std::uint32_t(std::int32_t(d.beta));
  for (int t = 0; t < kTrials && r.worst_i < 0; ++t)
    for (std::size_t i = 0; i < m; ++i) {
      const std::uint32_t got = s2[(std::size_t(t) * 2) * m + i];
      const std::uint32_t c0x = x.beta ? s2[(std::size_t(t) * 2 + 1) * m + i] : 0u;
      if (al * s3[std::size_t(t) * m + i] + be * c0x != got) {
        r.worst_ratio = r.max_abs_err = r.rel_err = INFINITY;
        r.worst_i = std::int64_t(i);
        break;
      }
    }
  r.passed = r.worst_i < 0;
  return r;
}

void check_same_layouts(const DistMatrix& a, const DistMatrix& b, const char* what) {
  const BlockLayout &x = a.layout(), &y = b.layout();
  if (x.rows != y.rows || x.cols != y.cols || x.mb != y.mb || x.nb != y.nb ||
      x.grid.rows != y.grid.rows || x.grid.cols != y.grid.cols || a.dtype() != b.dtype())
    throw InvalidArgument(std::string("dist_verify_gemm: ") + what + " (" + x.describe() + " " +
                          std::string(to_string(a.dtype())) + " vs " + y.describe() + " " +
                          std::string(to_string(b.dtype())) + ")");
}

}  // namespace

VerifyResult dist_verify_gemm(const Communicator& comm, const GemmDesc& d, const DistMatrix& A,
                              const DistMatrix& B, const DistMatrix& C0, const DistMatrix& C,
                              std::uint64_t seed) {
  comm.collectively([&] {
    d.validate();
    const BlockLayout &la = A.layout(), &lb = B.layout(), &lc = C.layout();
    if (la.rows != d.m || la.cols != d.k || lb.rows != d.k || lb.cols != d.n || lc.rows != d.m ||
        lc.cols != d.n)
      throw InvalidArgument("dist_verify_gemm: the matrices are not " + d.shape());
    if (A.dtype() != d.types.a || B.dtype() != d.types.b || C.dtype() != d.types.c)
      throw InvalidArgument("dist_verify_gemm: the matrices' types do not match " + d.types.name());
    if (la.grid.size() != comm.size() || la.grid.rows != lb.grid.rows ||
        la.grid.rows != lc.grid.rows || la.grid.cols != lb.grid.cols ||
        la.grid.cols != lc.grid.cols)
      throw InvalidArgument("dist_verify_gemm: A, B and C must be on the job's process grid");
    if (d.beta != 0) check_same_layouts(C0, C, "C0 must be distributed like C");
  });
  const Blocks blocks{A, B, C0, C, d.beta != 0};
  VerifyResult r =
      d.types.exact() ? check_integer(comm, d, blocks, seed) : check_float(comm, d, blocks, seed);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s: max abs err %.3g, rel err %.3g, worst row %lld of C*x at %.3g of tolerance",
                r.passed ? "PASS" : "FAIL", r.max_abs_err, r.rel_err, (long long)r.worst_i,
                r.worst_ratio);
  r.message = std::string(buf) + (d.types.exact() ? " (modulo 2^32)" : "") + " (distributed)";
  return r;
}

}  // namespace kafel::dist
