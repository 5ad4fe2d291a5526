// The rounding bound behind verify_gemm (kafel/gemm.hpp), shared with the distributed Freivalds
// check (src/dist/verify.cpp) so that both accept exactly the same results.
#pragma once

#include "kafel/gemm.hpp"

namespace kafel {

// Rounding constants of the per-element bound documented in gemm.hpp.
struct GemmBound {
  double product;  // multiplies |alpha| ||a_i|| ||b_j||
  double scale;    // multiplies |beta c0|
  double output;   // multiplies |c_ref|
  double floor;    // absolute floor (subnormal rounding of the output type)
};
GemmBound gemm_bound(const GemmDesc& d);

// Freivalds' tolerance for row i of C x, x in {-1, 1}^n: prod = |alpha| ||a_i|| sum_j ||b_j||,
// abs_c = sum_j |c_ij|, abs_c0 = sum_j |c0_ij| (float64 sums of n + k terms included).
double freivalds_tolerance(const GemmDesc& d, const GemmBound& b, double prod, double abs_c,
                           double abs_c0);

}  // namespace kafel
