// GEMM: C = alpha * op(A) * op(B) + beta * C on any device, any layout and leading dimension,
// with element roles (storage of A, B, C and the compute mode). Also the float64 reference
// (the oracle of every test) and the verification of a result.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/matrix.hpp"
#include "kafel/params.hpp"
#include "kafel/types.hpp"

namespace kafel {

struct GemmChoice;  // kernels.hpp: the kernel and parameters choose_gemm picked

// m x n x k of a problem (op(A) m x k, op(B) k x n).
struct GemmSize {
  std::int64_t m = 0, n = 0, k = 0;
};

// The operation, independent of where the operands live. op(A) is m x k, op(B) k x n, C m x n.
struct GemmDesc {
  std::int64_t m = 0, n = 0, k = 0;
  Op op_a = Op::N, op_b = Op::N;
  double alpha = 1.0, beta = 0.0;
  GemmTypes types;

  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  // Fewest bytes a device must move: A and B read once, C written (and read when beta != 0).
  double min_bytes() const;
  // "1024x1024x1024 NN f32" (m x n x k, ops, element roles).
  std::string shape() const;
  // Throws InvalidArgument for negative sizes, sizes whose element counts overflow, non-finite
  // scalars, impossible element roles, and integer compute with alpha/beta that are not
  // integers in the int32 range (they would be truncated).
  void validate() const;
};

struct GemmOptions {
  std::string kernel;  // e.g. "cpu.naive"; empty = the best kernel that can run this here
  Params params;       // overrides of the kernel's parameters (else tuned, else heuristic)
  // Compute mode; empty = the natural one of A's storage type (default_compute).
  std::optional<Compute> compute;
};

struct GemmReport {
  std::string kernel;
  std::string config;    // parameters used and where they came from
  double kernel_ms = 0;  // the kernel alone (device events where the backend has them)
  double total_ms = 0;   // including transfers to and from the device
};

// Runs the GEMM. A, B, C may each be row- or column-major with any valid ld; their element
// types are the roles (A and B inputs, C output). Shapes: op(A) m x k, op(B) k x n, C m x n;
// anything else throws InvalidArgument. The kernel is chosen by choose_gemm (kernels.hpp).
GemmReport gemm(const Device& device, Op op_a, Op op_b, double alpha, const MatrixView& A,
                const MatrixView& B, double beta, const MatrixView& C, const GemmOptions& opt = {});

// Where a GEMM's operands live. Host: host memory; gemm() copies them to the device and the
// result back. Device: the memory of the device the GEMM runs on (CUDA: device pointers of that
// GPU, such as a torch or cupy tensor's data; CPU: host memory), used in place: no copy goes
// through the host.
enum class Residence { Host, Device };

// One GEMM prepared for operands of one geometry: the kernel and its parameters chosen
// (choose_gemm) and the backend's plan made once; run() then takes new operands of the same
// shapes, element types, layouts and ops any number of times, without choosing again.
class PreparedGemm {
 public:
  // The views give the geometry (their data may be null). Throws as gemm() does.
  PreparedGemm(const Device& device, Op op_a, Op op_b, double alpha, const MatrixView& A,
               const MatrixView& B, double beta, const MatrixView& C, const GemmOptions& opt = {},
               Residence residence = Residence::Host);
  PreparedGemm(PreparedGemm&&) noexcept;
  PreparedGemm& operator=(PreparedGemm&&) noexcept;
  ~PreparedGemm();

  // Runs on these operands; InvalidArgument when their geometry differs from the prepared one.
  // Host: returns when C holds the result. Device: enqueued on `stream` (CUDA: a cudaStream_t,
  // nullptr = the legacy default stream) after the work already there, and returns without
  // waiting, as CUDA libraries do (kernel_ms is 0; the caller's later work on `stream` sees C).
  GemmReport run(const MatrixView& A, const MatrixView& B, const MatrixView& C,
                 void* stream = nullptr);

  const GemmDesc& desc() const;  // as kernels see it (row-major normalised)
  const GemmChoice& choice() const;
  Residence residence() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// gemm() on operands that already live in `device`'s memory (Residence::Device), ordered on
// `stream` as PreparedGemm::run. Throws Unsupported where the backend's plans only take host
// memory (OpenCL buffers are not pointers).
GemmReport gemm_device(const Device& device, Op op_a, Op op_b, double alpha, const MatrixView& A,
                       const MatrixView& B, double beta, const MatrixView& C,
                       const GemmOptions& opt = {}, void* stream = nullptr);

// Float64 reference: accumulates in double (int64 for integer compute, then wraps to 32 bits,
// as int32 kernels do) from the stored inputs and rounds once into C's type. Any layouts.
void reference_gemm(Op op_a, Op op_b, double alpha, const MatrixView& A, const MatrixView& B,
                    double beta, const MatrixView& C);

enum class VerifyMethod { Auto, Full, Freivalds };

struct VerifyOptions {
  VerifyMethod method = VerifyMethod::Auto;
  std::uint64_t seed = 12345;
  // Auto uses Freivalds above this many multiply-adds (m*n*k).
  double full_limit = 1.2e9;
};

struct VerifyResult {
  bool passed = false;
  std::string method;      // "exact", "full" or "freivalds"
  double max_abs_err = 0;  // over C (full) or over C*x (Freivalds)
  double rel_err = 0;      // ||C - C_ref||_F / ||C_ref||_F in float64 (same for C*x)
  double worst_ratio = 0;  // max over elements of error / tolerance (passes when <= 1)
  std::int64_t worst_i = -1, worst_j = -1;  // where the worst ratio is (j = -1 for Freivalds)
  std::string message;                      // one line, names the element on failure
};

// Checks `C` = alpha op(A) op(B) + beta C0. C0 is C before the call (ignored when beta == 0).
// The rounding model comes from desc.types: the accumulator's unit roundoff u, the compute
// mode's extra input rounding u_in (tf32 2^-11 ...) and C's storage u_out. Per element,
// (gamma_k(u) + 2 u_in) |alpha| ||a_i|| ||b_j|| + 2u |beta c0| + u_out |c_ref|; integer compute
// must be exact (modulo 2^32).
VerifyResult verify_gemm(const GemmDesc& desc, const MatrixView& A, const MatrixView& B,
                         const MatrixView& C0, const MatrixView& C, const VerifyOptions& opt = {});

}  // namespace kafel
