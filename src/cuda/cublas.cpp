// The cuBLAS comparison kernel (cuda.cublas), one entry per element-role combination: sgemm /
// dgemm (IEEE, no TF32), cublasGemmEx for tf32, f16 and bf16, cuBLASLt for i8 -> i32 and fp8;
// batches through the strided-batched calls (cublasSgemmStridedBatched, Lt layout batches).
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so the operands are swapped.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/registry.hpp"
#include "cuda/cublas_api.hpp"
#include "cuda/plan.hpp"
#include "cuda/runtime.hpp"

namespace kafel::cuda {
namespace {

// cuBLASLt's recommended workspace for Hopper (its documentation: 32 MiB).
constexpr std::size_t kLtWorkspace = std::size_t(32) << 20;

void check_cublas(cublasStatus_t st, const char* call) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  const std::string msg = std::string("cuBLAS error: ") + call + ": " +
                          cublas_api().GetStatusName(st) + ": " + cublas_api().GetStatusString(st);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(msg);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) throw Unsupported(msg);
  throw DeviceError(msg);
}

// One handle of each kind per device for the life of the process, created outside run().
std::mutex g_mutex;

cublasHandle_t blas_handle(int ordinal) {
  static std::map<int, cublasHandle_t> handles;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = handles.find(ordinal);
  if (it != handles.end()) return it->second;
  DeviceGuard guard(ordinal);
  cublasHandle_t h = nullptr;
  check_cublas(cublas_api().Create(&h), "cublasCreate");
  // IEEE FP32 for sgemm (TF32 is its own entry, through cublasGemmEx's compute type).
  check_cublas(cublas_api().SetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  return handles.emplace(ordinal, h).first->second;
}

cublasLtHandle_t lt_handle(int ordinal) {
  static std::map<int, cublasLtHandle_t> handles;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = handles.find(ordinal);
  if (it != handles.end()) return it->second;
  DeviceGuard guard(ordinal);
  cublasLtHandle_t h = nullptr;
  check_cublas(cublas_api().LtCreate(&h), "cublasLtCreate");
  return handles.emplace(ordinal, h).first->second;
}

cublasOperation_t op_of(Op op) {
  return op == Op::T ? CUBLAS_OP_T : CUBLAS_OP_N;
}

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::f32:
      return CUDA_R_32F;
    case DType::f64:
      return CUDA_R_64F;
    case DType::f16:
      return CUDA_R_16F;
    case DType::bf16:
      return CUDA_R_16BF;
    case DType::i8:
      return CUDA_R_8I;
    case DType::i32:
      return CUDA_R_32I;
    case DType::e4m3:
      return CUDA_R_8F_E4M3;
    case DType::e5m2:
      return CUDA_R_8F_E5M2;
    default:
      throw Unsupported("cuda.cublas: no cuBLAS data type for " + std::string(to_string(t)));
  }
}

bool is_fp8(DType t) {
  return t == DType::e4m3 || t == DType::e5m2;
}

// i8 and fp8 go through cuBLASLt (k-major operands); everything else through cuBLAS.
bool uses_lt(const GemmTypes& t) {
  return t.a == DType::i8 || is_fp8(t.a) || is_fp8(t.b);
}

// sgemm / dgemm for the natural f32 / f64 roles, cublasGemmEx for the rest (f32 compute, or
// CUBLAS_COMPUTE_32F_FAST_TF32 for f32/tf32); every scalar in float there. A batch goes through
// the strided-batched forms of the same calls (cublasSgemmStridedBatched ...), one call.
void launch_blas(const DeviceGemm& g, const Params&, cudaStream_t s) {
  int dev = 0;
  KAFEL_CUDA_CHECK(cudaGetDevice(&dev));
  cublasHandle_t h = blas_handle(dev);
  check_cublas(cublas_api().SetStream(h, s), "cublasSetStream");
  const auto m = static_cast<int>(g.desc.m), n = static_cast<int>(g.desc.n),
             k = static_cast<int>(g.desc.k);
  const auto lda = static_cast<int>(g.lda), ldb = static_cast<int>(g.ldb),
             ldc = static_cast<int>(g.ldc);
  const cublasOperation_t ta = op_of(g.desc.op_b), tb = op_of(g.desc.op_a);
  const GemmTypes& t = g.desc.types;
  const auto count = static_cast<int>(g.desc.batch);
  const bool batched = count > 1;
  if (t == GemmTypes::of(DType::f64)) {
    const double alpha = g.desc.alpha, beta = g.desc.beta;
    const auto* A = static_cast<const double*>(g.a);
    const auto* B = static_cast<const double*>(g.b);
    auto* C = static_cast<double*>(g.c);
    if (batched)
      check_cublas(
          cublas_api().DgemmStridedBatched(h, ta, tb, n, m, k, &alpha, B, ldb, g.stride_b, A, lda,
                                           g.stride_a, &beta, C, ldc, g.stride_c, count),
          "cublasDgemmStridedBatched");
    else
      check_cublas(cublas_api().Dgemm(h, ta, tb, n, m, k, &alpha, B, ldb, A, lda, &beta, C, ldc),
                   "cublasDgemm");
    return;
  }
  const float alpha = static_cast<float>(g.desc.alpha), beta = static_cast<float>(g.desc.beta);
  if (t == GemmTypes::of(DType::f32)) {
    const auto* A = static_cast<const float*>(g.a);
    const auto* B = static_cast<const float*>(g.b);
    auto* C = static_cast<float*>(g.c);
    if (batched)
      check_cublas(
          cublas_api().SgemmStridedBatched(h, ta, tb, n, m, k, &alpha, B, ldb, g.stride_b, A, lda,
                                           g.stride_a, &beta, C, ldc, g.stride_c, count),
          "cublasSgemmStridedBatched");
    else
      check_cublas(cublas_api().Sgemm(h, ta, tb, n, m, k, &alpha, B, ldb, A, lda, &beta, C, ldc),
                   "cublasSgemm");
    return;
  }
  const cublasComputeType_t compute =
      t.compute == Compute::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (batched)
    check_cublas(cublas_api().GemmStridedBatchedEx(h, ta, tb, n, m, k, &alpha, g.b, cuda_type(t.b),
                                                   ldb, g.stride_b, g.a, cuda_type(t.a), lda,
                                                   g.stride_a, &beta, g.c, cuda_type(t.c), ldc,
                                                   g.stride_c, count, compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmStridedBatchedEx");
  else
    check_cublas(cublas_api().GemmEx(h, ta, tb, n, m, k, &alpha, g.b, cuda_type(t.b), ldb, g.a,
                                     cuda_type(t.a), lda, &beta, g.c, cuda_type(t.c), ldc, compute,
                                     CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
}

// One cuBLASLt matmul prepared once per plan (descriptors, layouts, the heuristic's algorithm,
// the workspace), so that run() times cublasLtMatmul alone, as a cuBLASLt user calls it.
// Operands arrive k-major (OperandForm::k_major): with the operand swap, cuBLASLt's A is our
// B (np x kp, transposed: "T") and its B is our A (kp x mp column-major: "N"), the "TN" form its
// fp8 and int8 (IMMA) kernels require, with every extent a multiple of 16 bytes.
class LtMatmul {
 public:
  explicit LtMatmul(int ordinal)
      : handle_(lt_handle(ordinal)), workspace_(kLtWorkspace, "cuBLASLt workspace") {}
  ~LtMatmul() { release(); }
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  void prepare(const DeviceGemm& g) {
    release();
    const GemmTypes& t = g.desc.types;
    integer_ = t.compute == Compute::i32;
    const cublasComputeType_t compute = integer_ ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F;
    const cudaDataType_t scale = integer_ ? CUDA_R_32I : CUDA_R_32F;
    check_cublas(cublas_api().LtMatmulDescCreate(&op_, compute, scale), "cublasLtMatmulDescCreate");
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    set_desc(CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    set_desc(CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    const auto m = static_cast<std::uint64_t>(g.desc.m), n = static_cast<std::uint64_t>(g.desc.n),
               k = static_cast<std::uint64_t>(g.desc.k);
    check_cublas(cublas_api().LtMatrixLayoutCreate(&a_, cuda_type(t.b), k, n, g.ldb),
                 "cublasLtMatrixLayoutCreate");
    check_cublas(cublas_api().LtMatrixLayoutCreate(&b_, cuda_type(t.a), k, m, g.lda),
                 "cublasLtMatrixLayoutCreate");
    check_cublas(cublas_api().LtMatrixLayoutCreate(&c_, cuda_type(t.c), n, m, g.ldc),
                 "cublasLtMatrixLayoutCreate");
    if (g.desc.batch > 1) {
      set_batch(a_, g.desc.batch, g.stride_b);
      set_batch(b_, g.desc.batch, g.stride_a);
      set_batch(c_, g.desc.batch, g.stride_c);
    }
    choose_algorithm(g);
  }

  void run(const DeviceGemm& g, cudaStream_t s) const {
    if (!op_) throw InvalidArgument("cuda.cublas: cuBLASLt matmul run before it was prepared");
    const float falpha = static_cast<float>(g.desc.alpha), fbeta = static_cast<float>(g.desc.beta);
    // Integer GEMM: alpha and beta are int32 values (GemmDesc::validate checked them).
    const auto ialpha = static_cast<std::int32_t>(g.desc.alpha),
               ibeta = static_cast<std::int32_t>(g.desc.beta);
    const void* alpha = integer_ ? static_cast<const void*>(&ialpha) : &falpha;
    const void* beta = integer_ ? static_cast<const void*>(&ibeta) : &fbeta;
    check_cublas(cublas_api().LtMatmul(handle_, op_, alpha, g.b, a_, g.a, b_, beta, g.c, c_, g.c,
                                       c_, &algo_, workspace_.get(), workspace_.bytes(), s),
                 "cublasLtMatmul");
  }

 private:
  void set_desc(cublasLtMatmulDescAttributes_t attr, const void* v, std::size_t size) {
    check_cublas(cublas_api().LtMatmulDescSetAttribute(op_, attr, v, size),
                 "cublasLtMatmulDescSetAttribute");
  }

  // A strided batch: the layout's count and the distance between its matrices in elements.
  static void set_batch(cublasLtMatrixLayout_t layout, std::int64_t count, std::int64_t stride) {
    const auto n = static_cast<std::int32_t>(count);
    check_cublas(cublas_api().LtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                         &n, sizeof n),
                 "cublasLtMatrixLayoutSetAttribute");
    check_cublas(cublas_api().LtMatrixLayoutSetAttribute(
                     layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
                 "cublasLtMatrixLayoutSetAttribute");
  }

  void choose_algorithm(const DeviceGemm& g) {
    cublasLtMatmulPreference_t pref = nullptr;
    check_cublas(cublas_api().LtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const std::uint64_t ws = workspace_.bytes();
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasStatus_t st = cublas_api().LtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublas_api().LtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, c_, c_, pref, 1, &result,
                                                 &found);
    cublas_api().LtMatmulPreferenceDestroy(pref);
    check_cublas(st, "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS)
      throw Unsupported("cuda.cublas: cuBLASLt has no algorithm for " + g.desc.shape() +
                        " (k-major operands)");
    algo_ = result.algo;
  }

  void release() noexcept {
    if (a_) cublas_api().LtMatrixLayoutDestroy(a_);
    if (b_) cublas_api().LtMatrixLayoutDestroy(b_);
    if (c_) cublas_api().LtMatrixLayoutDestroy(c_);
    if (op_) cublas_api().LtMatmulDescDestroy(op_);
    a_ = b_ = c_ = nullptr;
    op_ = nullptr;
  }

  cublasLtHandle_t handle_;
  DeviceBuffer workspace_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool integer_ = false;
};

std::unique_ptr<GemmPlan> make_plan(const Device& d, const GemmDesc& desc, const Params& p) {
  const int ordinal = ordinal_of(d);
  DeviceGuard guard(ordinal);
  if (!uses_lt(desc.types)) {
    blas_handle(ordinal);  // handle creation stays out of run()
    return make_cuda_plan(d, desc, p, launch_blas);
  }
  auto lt = std::make_shared<LtMatmul>(ordinal);
  PlanTraits traits{OperandForm::k_major, [lt](const DeviceGemm& g) { lt->prepare(g); }, {}};
  return make_cuda_plan(
      d, desc, p, [lt](const DeviceGemm& g, const Params&, cudaStream_t s) { lt->run(g, s); },
      traits);
}

// cuBLASLt's fp8 kernels exist from compute capability 8.9 (Ada, Hopper) on; the other roles'
// needs are the capabilities of the type list.
std::string limits(const Device& d, const GemmDesc& desc, const Params&) {
  if (std::string why = dims_fit(desc); !why.empty()) return why;
  if ((is_fp8(desc.types.a) || is_fp8(desc.types.b)) && d.sm_version < 89)
    return "cuBLASLt's fp8 GEMM needs compute capability 8.9 or later; " + d.id + " is sm_" +
           std::to_string(d.sm_version);
  return "";
}

// The roles cuBLAS / cuBLASLt document for these calls. Not listed, so refused by the registry
// with the list: e5m2 x e5m2 (cuBLASLt has no such fp8 kernel), i32 x i32 (no integer GEMM in
// cuBLAS), i8 with other C than i32, fp8 with C in f16 or fp8 (not roles kafel defines).
std::vector<TypeSupport> cublas_types() {
  const Caps mma = Cap::mma_sm80;
  std::vector<TypeSupport> v = {
      {GemmTypes::of(DType::f32), {}},
      {GemmTypes::of(DType::f64), {}},
      {GemmTypes::of(DType::f32, Compute::tf32), mma},
      {GemmTypes::of(DType::i8), mma},
  };
  for (DType t : {DType::f16, DType::bf16}) {
    GemmTypes to_f32 = GemmTypes::of(t);
    to_f32.c = DType::f32;
    v.push_back({GemmTypes::of(t), mma});
    v.push_back({to_f32, mma});
  }
  const std::pair<DType, DType> fp8_pairs[] = {
      {DType::e4m3, DType::e4m3}, {DType::e4m3, DType::e5m2}, {DType::e5m2, DType::e4m3}};
  for (const auto& [a, b] : fp8_pairs)
    for (DType c : {DType::bf16, DType::f32}) {
      GemmTypes t = GemmTypes::of(a);
      t.b = b;
      t.c = c;
      v.push_back({t, mma});
    }
  return v;
}

GemmKernel cublas_kernel() {
  GemmKernel k;
  k.name = "cuda.cublas";
  k.summary =
      "cuBLAS: sgemm/dgemm (IEEE, no TF32), GemmEx tf32/f16/bf16, cuBLASLt i8->i32 and fp8 "
      "(k-major copies made in load)";
  k.rung = 100;  // after the ladder
  k.types = cublas_types();
  k.baseline = true;
  k.batches = true;  // strided-batched calls (cublasSgemmStridedBatched ...), one per batch
  k.make_plan = make_plan;
  k.can_implement = limits;
  return k;
}

const Register registered{cublas_kernel()};

}  // namespace
}  // namespace kafel::cuda
