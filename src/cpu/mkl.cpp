// The `cpu.mkl` comparison baseline: Intel MKL's sgemm / dgemm, bf16 -> f32 and i8 -> i32 GEMMs,
// loaded at run time from $KAFEL_MKL or libmkl_rt.so.3 / .so.2 (`pip install mkl` ships it), so
// that kafel neither builds nor ships against MKL: `kafel bench --vs mkl` where it is present.
#if defined(__linux__)
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "core/thread_pool.hpp"
#include "cpu/host_plan.hpp"
#include "kafel/error.hpp"

namespace kafel::cpu {
namespace {

// MKL's LP64 CBLAS interface (mkl_cblas.h): enums are ints, MKL_INT is int.
using MklInt = int;
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112, kFixOffset = 173;

using SgemmFn = void (*)(int, int, int, MklInt, MklInt, MklInt, float, const float*, MklInt,
                         const float*, MklInt, float, float*, MklInt);
using DgemmFn = void (*)(int, int, int, MklInt, MklInt, MklInt, double, const double*, MklInt,
                         const double*, MklInt, double, double*, MklInt);
using Bf16Fn = void (*)(int, int, int, MklInt, MklInt, MklInt, float, const std::uint16_t*, MklInt,
                        const std::uint16_t*, MklInt, float, float*, MklInt);
// C = alpha (op(A) + oa)(op(B) + ob) + beta C + oc. Row-major: A is unsigned, B signed (checked
// on MKL 2026.2 with 1 x 1 products; column-major swaps the two).
using S8u8Fn = void (*)(int, int, int, int, MklInt, MklInt, MklInt, float, const void*, MklInt,
                        std::int8_t, const void*, MklInt, std::int8_t, float, std::int32_t*, MklInt,
                        const std::int32_t*);
using SetThreadsFn = void (*)(int);

struct Mkl {
  std::string error;  // why MKL is not usable, "" when it is
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  Bf16Fn bf16 = nullptr;
  S8u8Fn s8u8 = nullptr;
  SetThreadsFn set_threads = nullptr;
};

const Mkl& mkl() {
  static const Mkl lib = [] {
    Mkl m;
    const char* env = std::getenv("KAFEL_MKL");
    std::vector<std::string> names;
    if (env && *env)
      names = {env};
    else
      names = {"libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so"};
    void* handle = nullptr;
    std::string tried;
    for (const auto& n : names) {
      if ((handle = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
      const char* why = dlerror();
      tried += (tried.empty() ? "" : "; ") + (why ? std::string(why) : n);
    }
    if (!handle) {
      m.error = "Intel MKL not found (" + tried +
                "); `pip install mkl` and set $KAFEL_MKL to its lib/libmkl_rt.so.3";
      return m;
    }
    m.sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
    m.dgemm = reinterpret_cast<DgemmFn>(dlsym(handle, "cblas_dgemm"));
    m.bf16 = reinterpret_cast<Bf16Fn>(dlsym(handle, "cblas_gemm_bf16bf16f32"));
    m.s8u8 = reinterpret_cast<S8u8Fn>(dlsym(handle, "cblas_gemm_s8u8s32"));
    m.set_threads = reinterpret_cast<SetThreadsFn>(dlsym(handle, "MKL_Set_Num_Threads"));
    if (!m.sgemm || !m.dgemm || !m.set_threads)
      m.error = "the library MKL was loaded from lacks cblas_sgemm / cblas_dgemm";
    return m;
  }();
  return lib;
}

int to_cblas(Op op) {
  return op == Op::T ? kTrans : kNoTrans;
}

MklInt dim(std::int64_t v, const char* what) {
  if (v > 2147483647) throw Unsupported(std::string("cpu.mkl: ") + what + " beyond MKL's LP64 int");
  return static_cast<MklInt>(v);
}
// CBLAS rejects a leading dimension below 1 even when k == 0 leaves the operand empty.
MklInt ld(std::int64_t v, const char* what) {
  return dim(std::max<std::int64_t>(1, v), what);
}

// i8 x i8 through s8u8s32: A is copied as unsigned (each byte + 128) and the offset -128 taken
// back by MKL; the copy is part of the baseline's time, as it is of any caller's.
void s8s8(const Mkl& lib, const GemmArgs& g) {
  const GemmDesc& d = g.desc;
  const std::int64_t rows = d.op_a == Op::N ? d.m : d.k, cols = d.op_a == Op::N ? d.k : d.m;
  thread_local std::vector<std::uint8_t> a_u8;
  a_u8.resize(std::size_t(rows > 0 ? (rows - 1) * g.lda + cols : 0));
  const auto* a = static_cast<const std::uint8_t*>(g.a);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      a_u8[std::size_t(i * g.lda + j)] = std::uint8_t(a[i * g.lda + j] ^ 0x80u);
  const std::int32_t zero = 0;
  lib.s8u8(kRowMajor, to_cblas(d.op_a), to_cblas(d.op_b), kFixOffset, dim(d.m, "m"), dim(d.n, "n"),
           dim(d.k, "k"), float(d.alpha), a_u8.data(), ld(g.lda, "lda"), std::int8_t(-128), g.b,
           ld(g.ldb, "ldb"), std::int8_t(0), float(d.beta), static_cast<std::int32_t*>(g.c),
           ld(g.ldc, "ldc"), &zero);
}

void mkl_gemm(const GemmArgs& g) {
  const Mkl& lib = mkl();
  const GemmDesc& d = g.desc;
  if (d.m == 0 || d.n == 0) return;
  const int ta = to_cblas(d.op_a), tb = to_cblas(d.op_b);
  const MklInt m = dim(d.m, "m"), n = dim(d.n, "n"), k = dim(d.k, "k");
  const MklInt lda = ld(g.lda, "lda"), ldb = ld(g.ldb, "ldb"), ldc = ld(g.ldc, "ldc");
  switch (d.types.a) {
    case DType::f32:
      return lib.sgemm(kRowMajor, ta, tb, m, n, k, float(d.alpha), static_cast<const float*>(g.a),
                       lda, static_cast<const float*>(g.b), ldb, float(d.beta),
                       static_cast<float*>(g.c), ldc);
    case DType::f64:
      return lib.dgemm(kRowMajor, ta, tb, m, n, k, d.alpha, static_cast<const double*>(g.a), lda,
                       static_cast<const double*>(g.b), ldb, d.beta, static_cast<double*>(g.c),
                       ldc);
    case DType::bf16:
      return lib.bf16(kRowMajor, ta, tb, m, n, k, float(d.alpha),
                      static_cast<const std::uint16_t*>(g.a), lda,
                      static_cast<const std::uint16_t*>(g.b), ldb, float(d.beta),
                      static_cast<float*>(g.c), ldc);
    case DType::i8:
      return s8s8(lib, g);
    default:
      throw Unsupported("cpu.mkl: no MKL routine for " + d.types.name());
  }
}

GemmKernel mkl_gemm_kernel() {
  GemmKernel k;
  k.name = "cpu.mkl";
  k.summary =
      "Intel MKL sgemm/dgemm, bf16->f32, i8->i32 (s8u8s32), loaded at run time "
      "(comparison baseline)";
  k.rung = 101;
  k.types = natural_types({DType::f32, DType::f64, DType::i8});
  GemmTypes bf16 = DType::bf16;
  bf16.c = DType::f32;
  k.types.push_back({bf16, {}});
  k.params.params = {param("threads", 0, {}, 0, kMaxThreads,
                           "MKL threads, 0 = as cpu.packed ($KAFEL_NUM_THREADS or all)")};
  k.baseline = true;
  k.can_implement = [](const Device&, const GemmDesc& d, const Params&) -> std::string {
    const Mkl& lib = mkl();
    if (!lib.error.empty()) return lib.error;
    if (d.types.a == DType::bf16 && !lib.bf16) return "this MKL lacks cblas_gemm_bf16bf16f32";
    if (d.types.a == DType::i8 && !lib.s8u8) return "this MKL lacks cblas_gemm_s8u8s32";
    return "";
  };
  k.make_plan = [](const Device&, const GemmDesc&, const Params& p) {
    const int threads = p.at("threads") > 0 ? static_cast<int>(p.at("threads")) : default_threads();
    return std::make_unique<HostPlan>([threads](const GemmArgs& args) {
      mkl().set_threads(threads);  // process-wide in MKL: set for each run
      if (args.desc.batch == 1) return mkl_gemm(args);
      for (std::int64_t i = 0; i < args.desc.batch; ++i) mkl_gemm(args.matrix(i));
    });
  };
  return k;
}

const Register registered{mkl_gemm_kernel()};

}  // namespace
}  // namespace kafel::cpu
#endif
