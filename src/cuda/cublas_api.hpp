// cuBLAS and cuBLASLt, loaded when first used instead of linked: the two libraries are ~600 MB
// whose relocations cost every process that loads kafel ~70 ms, also where no GPU is present.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

namespace kafel::cuda {

// The two Ex calls with cublasComputeType_t (C++ also sees inline overloads taking the older
// cudaDataType compute type, which decltype cannot pick from).
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                                  cublasOperation_t, int, int, int, const void*,
                                                  const void*, cudaDataType, int, long long,
                                                  const void*, cudaDataType, int, long long,
                                                  const void*, void*, cudaDataType, int, long long,
                                                  int, cublasComputeType_t, cublasGemmAlgo_t);

// The functions kafel calls, by their exported names (the _v2 entry points behind the macros of
// cublas_v2.h).
struct CublasApi {
  decltype(&cublasCreate_v2) Create = nullptr;
  decltype(&cublasDestroy_v2) Destroy = nullptr;
  decltype(&cublasSetStream_v2) SetStream = nullptr;
  decltype(&cublasSetMathMode) SetMathMode = nullptr;
  decltype(&cublasGetStatusName) GetStatusName = nullptr;
  decltype(&cublasGetStatusString) GetStatusString = nullptr;
  decltype(&cublasSgemm_v2) Sgemm = nullptr;
  decltype(&cublasDgemm_v2) Dgemm = nullptr;
  decltype(&cublasSgemmStridedBatched) SgemmStridedBatched = nullptr;
  decltype(&cublasDgemmStridedBatched) DgemmStridedBatched = nullptr;
  GemmExFn GemmEx = nullptr;
  GemmStridedBatchedExFn GemmStridedBatchedEx = nullptr;
  decltype(&cublasSsyrk_v2) Ssyrk = nullptr;
  decltype(&cublasDsyrk_v2) Dsyrk = nullptr;
  decltype(&cublasLtCreate) LtCreate = nullptr;
  decltype(&cublasLtMatmulDescCreate) LtMatmulDescCreate = nullptr;
  decltype(&cublasLtMatmulDescDestroy) LtMatmulDescDestroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) LtMatmulDescSetAttribute = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) LtMatrixLayoutCreate = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) LtMatrixLayoutDestroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) LtMatrixLayoutSetAttribute = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) LtMatmulPreferenceCreate = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) LtMatmulPreferenceDestroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) LtMatmulPreferenceSetAttribute = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) LtMatmulAlgoGetHeuristic = nullptr;
  decltype(&cublasLtMatmul) LtMatmul = nullptr;
};

// Loads libcublas.so.<major> and libcublasLt.so.<major> of the headers kafel was built with on the
// first call (the library search path, then beside the CUDA runtime in use); throws DeviceError
// naming the library or function and dlerror() when one is missing.
const CublasApi& cublas_api();

}  // namespace kafel::cuda
