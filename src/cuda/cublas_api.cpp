// Loading cuBLAS / cuBLASLt on first use (cublas_api.hpp): dlopen by soname, then from the
// directory of the CUDA runtime this process runs, every function looked up once.
#include "cuda/cublas_api.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <string>

#include "kafel/error.hpp"

namespace kafel::cuda {
namespace {

void* open_library(const std::string& soname) {
  if (void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  const char* err = dlerror();
  const std::string why = err ? err : "not found";
  // An install whose runtime was found through the executable's RUNPATH: the same directory.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) && info.dli_fname) {
    const std::string path = info.dli_fname;
    const std::string dir = path.substr(0, path.rfind('/') + 1);
    if (!dir.empty())
      if (void* h = dlopen((dir + soname).c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  }
  throw DeviceError("cuBLAS: cannot load " + soname + ": " + why);
}

template <class Fn>
void find(void* library, const std::string& soname, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (!fn) throw DeviceError("cuBLAS: " + soname + " has no " + name);
}

CublasApi load() {
  const std::string major = std::to_string(CUBLAS_VER_MAJOR);
  const std::string blas_name = "libcublas.so." + major, lt_name = "libcublasLt.so." + major;
  void* lt = open_library(lt_name);
  void* blas = open_library(blas_name);
  CublasApi a;
  find(blas, blas_name, "cublasCreate_v2", a.Create);
  find(blas, blas_name, "cublasDestroy_v2", a.Destroy);
  find(blas, blas_name, "cublasSetStream_v2", a.SetStream);
  find(blas, blas_name, "cublasSetMathMode", a.SetMathMode);
  find(blas, blas_name, "cublasGetStatusName", a.GetStatusName);
  find(blas, blas_name, "cublasGetStatusString", a.GetStatusString);
  find(blas, blas_name, "cublasSgemm_v2", a.Sgemm);
  find(blas, blas_name, "cublasDgemm_v2", a.Dgemm);
  find(blas, blas_name, "cublasSgemmStridedBatched", a.SgemmStridedBatched);
  find(blas, blas_name, "cublasDgemmStridedBatched", a.DgemmStridedBatched);
  find(blas, blas_name, "cublasGemmEx", a.GemmEx);
  find(blas, blas_name, "cublasGemmStridedBatchedEx", a.GemmStridedBatchedEx);
  find(blas, blas_name, "cublasSsyrk_v2", a.Ssyrk);
  find(blas, blas_name, "cublasDsyrk_v2", a.Dsyrk);
  find(lt, lt_name, "cublasLtCreate", a.LtCreate);
  find(lt, lt_name, "cublasLtMatmulDescCreate", a.LtMatmulDescCreate);
  find(lt, lt_name, "cublasLtMatmulDescDestroy", a.LtMatmulDescDestroy);
  find(lt, lt_name, "cublasLtMatmulDescSetAttribute", a.LtMatmulDescSetAttribute);
  find(lt, lt_name, "cublasLtMatrixLayoutCreate", a.LtMatrixLayoutCreate);
  find(lt, lt_name, "cublasLtMatrixLayoutDestroy", a.LtMatrixLayoutDestroy);
  find(lt, lt_name, "cublasLtMatrixLayoutSetAttribute", a.LtMatrixLayoutSetAttribute);
  find(lt, lt_name, "cublasLtMatmulPreferenceCreate", a.LtMatmulPreferenceCreate);
  find(lt, lt_name, "cublasLtMatmulPreferenceDestroy", a.LtMatmulPreferenceDestroy);
  find(lt, lt_name, "cublasLtMatmulPreferenceSetAttribute", a.LtMatmulPreferenceSetAttribute);
  find(lt, lt_name, "cublasLtMatmulAlgoGetHeuristic", a.LtMatmulAlgoGetHeuristic);
  find(lt, lt_name, "cublasLtMatmul", a.LtMatmul);
  return a;
}

}  // namespace

const CublasApi& cublas_api() {
  static const CublasApi api = load();
  return api;
}

}  // namespace kafel::cuda
