// The cuBLAS comparison kernel (cuda.cublas): sgemm / dgemm in true FP32 / FP64 (no TF32).
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so operands are swapped.
#include <cublas_v2.h>

#include <map>
#include <mutex>
#include <string>

#include "cuda/kernels.hpp"
#include "cuda/runtime.hpp"

namespace kafel::cuda {
namespace {

void check_cublas(cublasStatus_t st, const char* call) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  const std::string msg = std::string("cuBLAS error: ") + call + ": " + cublasGetStatusName(st) +
                          ": " + cublasGetStatusString(st);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(msg);
  throw DeviceError(msg);
}

std::mutex g_mutex;
std::map<int, cublasHandle_t>& handles() {
  static std::map<int, cublasHandle_t> h;  // one per device for the life of the process
  return h;
}

cublasHandle_t handle_for(int ordinal) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = handles().find(ordinal);
  if (it != handles().end()) return it->second;
  DeviceGuard guard(ordinal);
  cublasHandle_t h = nullptr;
  check_cublas(cublasCreate(&h), "cublasCreate");
  // Default math is IEEE FP32 for sgemm (TF32 would need CUBLAS_TF32_TENSOR_OP_MATH).
  check_cublas(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  handles().emplace(ordinal, h);
  return h;
}

cublasOperation_t op_of(Op op) {
  return op == Op::T ? CUBLAS_OP_T : CUBLAS_OP_N;
}

}  // namespace

void prepare_cublas(int ordinal) {
  handle_for(ordinal);
}

void launch_cublas(const DeviceGemm& g, const Params&, cudaStream_t s) {
  int dev = 0;
  KAFEL_CUDA_CHECK(cudaGetDevice(&dev));
  cublasHandle_t h = handle_for(dev);
  check_cublas(cublasSetStream(h, s), "cublasSetStream");
  const auto m = static_cast<int>(g.desc.m), n = static_cast<int>(g.desc.n),
             k = static_cast<int>(g.desc.k);
  const auto lda = static_cast<int>(g.lda), ldb = static_cast<int>(g.ldb),
             ldc = static_cast<int>(g.ldc);
  const cublasOperation_t ta = op_of(g.desc.op_b), tb = op_of(g.desc.op_a);
  switch (g.desc.dtype) {
    case DType::f32: {
      const float alpha = static_cast<float>(g.desc.alpha), beta = static_cast<float>(g.desc.beta);
      check_cublas(
          cublasSgemm(h, ta, tb, n, m, k, &alpha, static_cast<const float*>(g.b), ldb,
                      static_cast<const float*>(g.a), lda, &beta, static_cast<float*>(g.c), ldc),
          "cublasSgemm");
      return;
    }
    case DType::f64: {
      const double alpha = g.desc.alpha, beta = g.desc.beta;
      check_cublas(
          cublasDgemm(h, ta, tb, n, m, k, &alpha, static_cast<const double*>(g.b), ldb,
                      static_cast<const double*>(g.a), lda, &beta, static_cast<double*>(g.c), ldc),
          "cublasDgemm");
      return;
    }
    default:
      throw Unsupported("cuda.cublas: only f32 and f64 (cublasSgemm / cublasDgemm)");
  }
}

}  // namespace kafel::cuda
