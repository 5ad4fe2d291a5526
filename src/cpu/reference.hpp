// The float64 / int64 reference GEMM that every test and every verification trusts.
// Works on views in any layout; results come back as a dense row-major m x n array.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kafel/gemm.hpp"

namespace kafel::cpu {

// alpha op(A) op(B) + beta C0 accumulated in double (C0 not read when beta == 0).
std::vector<double> reference_f64(Op op_a, Op op_b, double alpha, const MatrixView& A,
                                  const MatrixView& B, double beta, const MatrixView& C0);

// The same for int32 operands with wrap-around modulo 2^32, as int32 kernels compute it.
std::vector<std::int32_t> reference_i32(Op op_a, Op op_b, double alpha, const MatrixView& A,
                                        const MatrixView& B, double beta, const MatrixView& C0);

// Splits [0, n) into chunks over the machine's cores and runs fn(begin, end) on each.
void parallel_rows(std::int64_t n, std::int64_t min_chunk,
                   const std::function<void(std::int64_t, std::int64_t)>& fn);

}  // namespace kafel::cpu
