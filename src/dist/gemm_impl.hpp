// What the distributed GEMM's engines share: the checked problem (roles of the panel GEMMs,
// the local kernel) and SUMMA's panel geometry. Engines: host memory + MPI (gemm.cpp), device
// memory + NCCL (nccl/gemm_cuda.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "kafel/dist.hpp"
#include "kafel/kernels.hpp"

namespace kafel::dist {

// A distributed GEMM after every check (agreed on all ranks).
struct GemmSetup {
  DistAlgorithm algorithm = DistAlgorithm::Summa;
  std::int64_t m = 0, n = 0, k = 0;
  double alpha = 1, beta = 0;
  GemmTypes types;  // the caller's roles
  // The panel GEMMs' roles: C in the accumulator's type when the caller's C is narrower (a bf16
  // C is summed over panels in f32 and rounded once at the end), else the caller's roles.
  GemmTypes panel;
  bool widened = false;
  GemmChoice choice;  // the local kernel and its parameters
  bool overlap = true;
};

// SUMMA's panel t: k range [t*kb, t*kb + width); A's columns on process column a_owner at local
// column a_col, B's rows on process row b_owner at local row b_row.
struct Panel {
  std::int64_t width = 0;
  int a_owner = 0, b_owner = 0;
  std::int64_t a_col = 0, b_row = 0;
};

inline std::int64_t panel_count(const GemmSetup& s, std::int64_t kb) {
  return (s.k + kb - 1) / kb;
}

inline Panel panel_of(const BlockLayout& a, const BlockLayout& b, std::int64_t t) {
  const std::int64_t kb = a.nb;
  Panel p;
  p.width = std::min(kb, a.cols - t * kb);
  p.a_owner = int(t % a.grid.cols);
  p.a_col = t / a.grid.cols * kb;
  p.b_owner = int(t % b.grid.rows);
  p.b_row = t / b.grid.rows * kb;
  return p;
}

// The local GEMM descriptor of one panel (or of the whole Rows product).
inline GemmDesc panel_desc(const GemmSetup& s, std::int64_t m, std::int64_t n, std::int64_t k,
                           double beta) {
  return GemmDesc{m, n, k, Op::N, Op::N, s.alpha, beta, s.panel};
}

// The job-wide figures every rank reports (slowest wall, its rate).
void finish_report(const Communicator& comm, const GemmSetup& s, DistGemmReport& r);

#ifdef KAFEL_HAVE_NCCL
// The CUDA engine (device-resident operands, NCCL broadcasts on their own stream).
DistGemmReport cuda_summa(const Communicator& comm, const GemmSetup& s, const DistMatrix& A,
                          const DistMatrix& B, DistMatrix& C);
DistGemmReport cuda_rows(const Communicator& comm, const GemmSetup& s, const DistMatrix& A,
                         const DistMatrix& B, DistMatrix& C);
#endif

}  // namespace kafel::dist
