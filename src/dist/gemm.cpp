// The distributed GEMM: layouts, the checks every rank agrees on, and the host engine (panels in
// host memory, MPI broadcasts from a second thread while the local GEMM runs). CUDA ranks on
// NCCL go to nccl/gemm_cuda.cpp after the same checks.
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "core/backend.hpp"
#include "dist/comm_impl.hpp"
#include "dist/gemm_impl.hpp"
#include "kafel/error.hpp"

namespace kafel::dist {

std::string_view to_string(DistAlgorithm a) {
  return a == DistAlgorithm::Rows ? "rows" : "summa";
}

DistAlgorithm parse_dist_algorithm(std::string_view s) {
  if (s == "summa") return DistAlgorithm::Summa;
  if (s == "rows") return DistAlgorithm::Rows;
  throw InvalidArgument("unknown distributed GEMM algorithm '" + std::string(s) +
                        "' (summa, rows)");
}

DistGemmLayouts dist_gemm_layouts(DistAlgorithm algorithm, Grid grid, std::int64_t m,
                                  std::int64_t n, std::int64_t k, std::int64_t block) {
  if (m < 0 || n < 0 || k < 0) throw InvalidArgument("distributed GEMM sizes must not be negative");
  if (algorithm == DistAlgorithm::Summa) {
    if (block < 1)
      throw InvalidArgument("SUMMA block must be at least 1 (got " + std::to_string(block) + ")");
    return {{m, k, block, block, grid}, {k, n, block, block, grid}, {m, n, block, block, grid}};
  }
  if (grid.cols != 1)
    throw InvalidArgument("the rows algorithm splits by rows only: its grid is Px1 (got " +
                          grid.name() + ")");
  const int p = grid.rows;
  auto split = [p](std::int64_t rows) { return std::max<std::int64_t>(1, (rows + p - 1) / p); };
  auto whole = [](std::int64_t cols) { return std::max<std::int64_t>(1, cols); };
  return {{m, k, split(m), whole(k), grid},
          {k, n, split(k), whole(n), grid},
          {m, n, split(m), whole(n), grid}};
}

void finish_report(const Communicator& comm, const GemmSetup& s, DistGemmReport& r) {
  r.job_wall_ms = comm.max(r.wall_ms);
  r.job_gflops =
      r.job_wall_ms > 0 ? 2.0 * double(s.m) * double(s.n) * double(s.k) / (r.job_wall_ms * 1e6) : 0;
}

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string dims(std::int64_t r, std::int64_t c) {
  return std::to_string(r) + "x" + std::to_string(c);
}

// ---- checks ---------------------------------------------------------------------------------

void check_local(const DistMatrix& x, const char* name, const Communicator& comm) {
  const BlockLayout& l = x.layout();
  l.validate(name);
  if (l.grid.size() != comm.size())
    throw InvalidArgument(std::string(name) + ": process grid " + l.grid.name() +
                          " does not have the job's " + std::to_string(comm.size()) + " ranks");
  const std::int64_t r = l.local_rows(x.prow()), c = l.local_cols(x.pcol());
  if (x.local().rows() != r || x.local().cols() != c || x.local().layout() != Layout::RowMajor ||
      x.local().ld() != std::max<std::int64_t>(c, 1))
    throw InvalidArgument(std::string(name) + ": the local block is " +
                          dims(x.local().rows(), x.local().cols()) + " but " + l.describe() +
                          " gives this rank a tight row-major " + dims(r, c));
}

void check_shapes(DistAlgorithm alg, const BlockLayout& a, const BlockLayout& b,
                  const BlockLayout& c) {
  if (a.cols != b.rows || a.rows != c.rows || b.cols != c.cols)
    throw InvalidArgument("distributed GEMM shapes do not match: A " + dims(a.rows, a.cols) +
                          ", B " + dims(b.rows, b.cols) + ", C " + dims(c.rows, c.cols));
  if (a.grid.rows != b.grid.rows || a.grid.cols != b.grid.cols || a.grid.rows != c.grid.rows ||
      a.grid.cols != c.grid.cols)
    throw InvalidArgument("A, B and C must be on one process grid (A " + a.grid.name() + ", B " +
                          b.grid.name() + ", C " + c.grid.name() + ")");
  if (alg == DistAlgorithm::Summa) {
    if (a.nb != b.mb || a.mb != c.mb || b.nb != c.nb)
      throw InvalidArgument(
          "SUMMA needs A's column blocks = B's row blocks, A's row blocks = C's, B's column "
          "blocks = C's (A " +
          dims(a.mb, a.nb) + ", B " + dims(b.mb, b.nb) + ", C " + dims(c.mb, c.nb) + ")");
    return;
  }
  const int p = a.grid.rows;
  const bool one_block = a.grid.cols == 1 && a.nb >= std::max<std::int64_t>(a.cols, 1) &&
                         b.nb >= std::max<std::int64_t>(b.cols, 1) &&
                         c.nb >= std::max<std::int64_t>(c.cols, 1) && a.mb == c.mb &&
                         a.mb * p >= a.rows && b.mb * p >= b.rows;
  if (!one_block)
    throw InvalidArgument(
        "the rows algorithm needs dist_gemm_layouts' Rows layouts (one row "
        "block per rank on a Px1 grid); got A " +
        a.describe() + ", B " + b.describe() + ", C " + c.describe());
}

std::vector<double> signature(const DistMatrix& x) {
  const BlockLayout& l = x.layout();
  return {double(l.rows),      double(l.cols),      double(l.mb),     double(l.nb),
          double(l.grid.rows), double(l.grid.cols), double(x.dtype())};
}

GemmTypes roles_of(const DistMatrix& A, const DistMatrix& B, const DistMatrix& C,
                   const std::optional<Compute>& compute) {
  GemmTypes t;
  t.a = A.dtype();
  t.b = B.dtype();
  t.c = C.dtype();
  t.compute = compute ? *compute : default_compute(A.dtype());
  return t;
}

GemmSetup make_setup(const Communicator& comm, double alpha, const DistMatrix& A,
                     const DistMatrix& B, double beta, const DistMatrix& C,
                     const DistGemmOptions& opt) {
  GemmSetup s;
  s.algorithm = opt.algorithm;
  comm.collectively([&] {
    check_local(A, "A", comm);
    check_local(B, "B", comm);
    check_local(C, "C", comm);
    check_shapes(opt.algorithm, A.layout(), B.layout(), C.layout());
    s.m = C.layout().rows, s.n = C.layout().cols, s.k = A.layout().cols;
    s.alpha = alpha, s.beta = beta;
    s.types = roles_of(A, B, C, opt.compute);
    GemmDesc{s.m, s.n, s.k, Op::N, Op::N, alpha, beta, s.types}.validate();
  });
  std::vector<double> sig = signature(A);
  for (const auto* x : {&B, &C})
    for (double v : signature(*x)) sig.push_back(v);
  sig.insert(sig.end(), {alpha, beta, double(s.types.compute), double(opt.algorithm)});
  check_same_everywhere(comm, sig, "matrices, layouts, alpha, beta or algorithm");
  return s;
}

// The local kernel, chosen for the panel shape of process (0, 0) (the largest) so every rank
// runs the same one, then checked on this rank's own shapes.
void choose_kernel(const Communicator& comm, GemmSetup& s, const DistMatrix& A, const DistMatrix& C,
                   const DistGemmOptions& opt) {
  comm.collectively([&] {
    const Device& dev = comm.device();
    const DType acc = compute_info(s.types.compute).accumulator;
    s.panel = s.types;
    s.widened = s.algorithm == DistAlgorithm::Summa && s.types.c != acc;
    if (s.widened) s.panel.c = acc;
    const std::int64_t kb = s.algorithm == DistAlgorithm::Summa ? A.layout().nb : s.k;
    const GemmDesc rep = panel_desc(s, C.layout().local_rows(0), C.layout().local_cols(0),
                                    std::min(kb, s.k), s.beta);
    s.choice = choose_gemm(dev, rep, opt.kernel, opt.params);
    const std::int64_t m = C.local().rows(), n = C.local().cols();
    if (m == 0 || n == 0 || s.k == 0) return;
    for (std::int64_t w : {std::min(kb, s.k), s.k - (panel_count(s, kb) - 1) * kb})
      choose_gemm(dev, panel_desc(s, m, n, w, 1.0), s.choice.kernel, s.choice.params);
  });
  s.overlap = opt.overlap && s.algorithm == DistAlgorithm::Summa;
}

// ---- the host engine --------------------------------------------------------------------------

// Local GEMMs through the chosen kernel's plans (one per panel width and beta), on host memory.
class HostGemm {
 public:
  HostGemm(const Device& dev, const GemmSetup& s) : dev_(dev), s_(s) {}

  // C (m x n, ldc) = alpha A (m x k, lda) B (k x n, ldb) + beta C, in the panel roles.
  void run(std::int64_t m, std::int64_t n, std::int64_t k, const void* a, std::int64_t lda,
           const void* b, std::int64_t ldb, void* c, std::int64_t ldc, double beta) {
    if (m == 0 || n == 0) return;
    const GemmDesc d = panel_desc(s_, m, n, k, beta);
    GemmPlan& plan = plan_for(d);
    plan.load(GemmArgs{d, a, lda, b, ldb, c, ldc}, 1);
    plan.run(0);
    plan.fetch();
  }
  // Makes the plans of every shape up front (their failures are agreed before any broadcast).
  void prepare(std::int64_t m, std::int64_t n, const std::vector<std::int64_t>& widths) {
    if (m == 0 || n == 0) return;
    for (std::int64_t w : widths)
      for (double beta : {s_.beta, 1.0}) plan_for(panel_desc(s_, m, n, w, beta));
  }

 private:
  GemmPlan& plan_for(const GemmDesc& d) {
    const auto key = std::make_tuple(d.m, d.n, d.k, d.beta);
    auto it = plans_.find(key);
    if (it == plans_.end()) {
      const GemmKernel& kernel = find_gemm_kernel(dev_, s_.choice.kernel);
      it = plans_.emplace(key, kernel.make_plan(dev_, d, s_.choice.params)).first;
    }
    return *it->second;
  }

  const Device& dev_;
  const GemmSetup& s_;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, double>, std::unique_ptr<GemmPlan>>
      plans_;
};

std::size_t bytes_of(std::int64_t rows, std::int64_t cols, DType t) {
  return std::size_t(rows * cols) * dtype_size(t);
}

// C = acc + beta C0, rounded once into C's type (the widened SUMMA's last step), or C = beta C
// for k = 0. Integer C wraps modulo 2^32 as the kernels do.
void finish_widened(const Matrix& acc, double beta, Matrix& c) {
  for (std::int64_t i = 0; i < c.rows(); ++i)
    for (std::int64_t j = 0; j < c.cols(); ++j) {
      const double base = acc.rows() ? acc.get(i, j) : 0.0;
      if (c.dtype() == DType::i32) {
        const auto v = std::uint32_t(std::int64_t(base)) +
                       std::uint32_t(std::int64_t(beta)) * std::uint32_t(c.at<std::int32_t>(i, j));
        c.at<std::int32_t>(i, j) = std::int32_t(v);
      } else {
        c.set(i, j, base + (beta != 0 ? beta * c.get(i, j) : 0.0));
      }
    }
}

struct PanelBuffers {
  Matrix a[2], b[2];
  const void* b_ptr[2] = {nullptr, nullptr};
};

DistGemmReport host_summa(const Communicator& comm, const GemmSetup& s, const DistMatrix& A,
                          const DistMatrix& B, DistMatrix& C) {
  Communicator::Impl& c = comm.impl();
  const GridComms& g = c.grid(A.layout().grid);
  const std::int64_t m = C.local().rows(), n = C.local().cols(), kb = A.layout().nb;
  const std::int64_t panels = panel_count(s, kb);
  const std::size_t ea = dtype_size(s.types.a), eb = dtype_size(s.types.b);
  PanelBuffers buf;
  Matrix acc;
  HostGemm gemm(comm.device(), s);
  comm.collectively([&] {
    for (int i = 0; i < 2; ++i) {
      buf.a[i] = Matrix(s.types.a, m, std::min(kb, s.k));
      buf.b[i] = Matrix(s.types.b, std::min(kb, s.k), n);
    }
    if (s.widened) acc = Matrix(s.panel.c, m, n);
    if (panels > 0) gemm.prepare(m, n, {std::min(kb, s.k), s.k - (panels - 1) * kb});
  });
  int row_size = 1, col_size = 1;
  MPI_Comm_size(g.row, &row_size);
  MPI_Comm_size(g.col, &col_size);

  DistGemmReport r;
  // Panel t into slot t % 2: A's columns packed by their owner and broadcast along the process
  // row, B's rows broadcast along the process column straight from the owner's block.
  auto fetch = [&](std::int64_t t) {
    const auto t0 = Clock::now();
    const int slot = int(t % 2);
    const Panel p = panel_of(A.layout(), B.layout(), t);
    Matrix& ap = buf.a[slot];
    const std::size_t a_bytes = std::size_t(m * p.width) * ea,
                      b_bytes = std::size_t(p.width * n) * eb;
    if (g.pcol == p.a_owner)
      for (std::int64_t i = 0; i < m; ++i)
        std::memcpy(static_cast<char*>(ap.data()) + std::size_t(i * p.width) * ea,
                    A.local().view().address(i, p.a_col), std::size_t(p.width) * ea);
    void* bp = g.prow == p.b_owner ? B.local().view().address(p.b_row, 0) : buf.b[slot].data();
    buf.b_ptr[slot] = bp;
    std::vector<MPI_Request> reqs;
    if (a_bytes) start_bcast(ap.data(), a_bytes, p.a_owner, g.row, reqs);
    if (b_bytes) start_bcast(bp, b_bytes, p.b_owner, g.col, reqs);
    wait_all(c, reqs, "SUMMA broadcast of panel " + std::to_string(t));
    r.bytes += double(row_size > 1 ? a_bytes : 0) + double(col_size > 1 ? b_bytes : 0);
    r.comm_ms += ms_since(t0);
  };
  void* target = s.widened ? acc.data() : C.local().data();
  const std::int64_t ldt = std::max<std::int64_t>(n, 1);
  auto compute = [&](std::int64_t t) {
    const auto t0 = Clock::now();
    const int slot = int(t % 2);
    const Panel p = panel_of(A.layout(), B.layout(), t);
    const double beta = t > 0 ? 1.0 : s.widened ? 0.0 : s.beta;
    gemm.run(m, n, p.width, buf.a[slot].data(), p.width, buf.b_ptr[slot],
             std::max<std::int64_t>(n, 1), target, ldt, beta);
    r.compute_ms += ms_since(t0);
  };

  const auto start = Clock::now();
  if (panels > 0) fetch(0);
  for (std::int64_t t = 0; t < panels; ++t) {
    const bool next = t + 1 < panels;
    std::exception_ptr comm_error;
    std::thread mover;
    if (next && s.overlap)
      mover = std::thread([&] {
        try {
          fetch(t + 1);
        } catch (...) {
          comm_error = std::current_exception();
        }
      });
    compute(t);
    if (mover.joinable()) mover.join();
    if (comm_error) std::rethrow_exception(comm_error);
    if (next && !s.overlap) fetch(t + 1);
  }
  if (s.widened || panels == 0) {
    const auto t0 = Clock::now();
    finish_widened(acc, s.beta, C.local());
    r.compute_ms += ms_since(t0);
  }
  r.wall_ms = ms_since(start);
  r.panels = panels;
  return r;
}

// The 1-D rung: B gathered whole on every rank (one broadcast per rank's rows), one local GEMM.
DistGemmReport host_rows(const Communicator& comm, const GemmSetup& s, const DistMatrix& A,
                         const DistMatrix& B, DistMatrix& C) {
  Communicator::Impl& c = comm.impl();
  const BlockLayout& bl = B.layout();
  const std::size_t eb = dtype_size(s.types.b);
  Matrix whole;
  HostGemm gemm(comm.device(), s);
  comm.collectively([&] {
    whole = Matrix(s.types.b, s.k, s.n);
    if (s.k > 0) gemm.prepare(C.local().rows(), s.n, {s.k});
  });
  DistGemmReport r;
  const auto start = Clock::now();
  std::vector<MPI_Request> reqs;
  for (int rank = 0; rank < comm.size(); ++rank) {
    const std::int64_t rows = bl.local_rows(rank);
    if (rows == 0 || s.n == 0) continue;
    void* dst = whole.view().address(rank * bl.mb, 0);
    if (rank == comm.rank()) std::memcpy(dst, B.local().data(), bytes_of(rows, s.n, s.types.b));
    start_bcast(dst, std::size_t(rows * s.n) * eb, rank, c.world, reqs);
    if (comm.size() > 1) r.bytes += double(rows * s.n) * double(eb);
  }
  wait_all(c, reqs, "all-gather of B");
  r.comm_ms = ms_since(start);
  const auto t0 = Clock::now();
  if (s.k > 0)
    gemm.run(C.local().rows(), s.n, s.k, A.local().data(), std::max<std::int64_t>(s.k, 1),
             whole.data(), std::max<std::int64_t>(s.n, 1), C.local().data(),
             std::max<std::int64_t>(s.n, 1), s.beta);
  else
    finish_widened(Matrix(), s.beta, C.local());
  r.compute_ms = ms_since(t0);
  r.wall_ms = ms_since(start);
  r.panels = 1;
  return r;
}

}  // namespace

DistGemmReport dist_gemm(const Communicator& comm, double alpha, const DistMatrix& A,
                         const DistMatrix& B, double beta, DistMatrix& C,
                         const DistGemmOptions& opt) {
  GemmSetup s = make_setup(comm, alpha, A, B, beta, C, opt);
  choose_kernel(comm, s, A, C, opt);
  s.overlap = s.overlap && (comm.transport() == "nccl" || comm.threads_ok());
  const bool rows = s.algorithm == DistAlgorithm::Rows;
  DistGemmReport r;
#ifdef KAFEL_HAVE_NCCL
  if (comm.transport() == "nccl")
    r = rows ? cuda_rows(comm, s, A, B, C) : cuda_summa(comm, s, A, B, C);
  else
#endif
    r = rows ? host_rows(comm, s, A, B, C) : host_summa(comm, s, A, B, C);
  r.algorithm = std::string(to_string(s.algorithm));
  r.grid = A.layout().grid.name();
  r.kernel = s.choice.kernel;
  r.config = s.choice.config();
  r.transport = comm.transport();
  r.overlap = s.overlap;
  finish_report(comm, s, r);
  return r;
}

}  // namespace kafel::dist
