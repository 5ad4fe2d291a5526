// The float64 / int64 reference GEMM that every test and every verification trusts (the
// oracle, owned by core). Views in any layout and storage type; dense row-major m x n results.
#pragma once

#include <cstdint>
#include <vector>

#include "kafel/gemm.hpp"

namespace kafel {

// alpha op(A) op(B) + beta C0 accumulated in double (C0 not read when beta == 0).
std::vector<double> reference_f64(Op op_a, Op op_b, double alpha, const MatrixView& A,
                                  const MatrixView& B, double beta, const MatrixView& C0);

// The same for integer operands (i32, i8) with wrap-around modulo 2^32, as the integer
// kernels compute it.
std::vector<std::int32_t> reference_i32(Op op_a, Op op_b, double alpha, const MatrixView& A,
                                        const MatrixView& B, double beta, const MatrixView& C0);

}  // namespace kafel
