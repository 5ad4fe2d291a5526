// The `cpu.openblas` comparison baseline: sgemm/dgemm (and sbgemm, bf16 -> f32, where built in)
// through CBLAS on the normalised operands (a batch: a loop of calls), OpenBLAS set to cpu.packed's
// thread count so the two compare fairly. Built when KAFEL_HAVE_OPENBLAS is set; a baseline is not
// a rung: `kafel bench --vs openblas`. Its caveat says which kernel set OpenBLAS runs here.
#include "cpu/openblas.hpp"

#ifdef KAFEL_HAVE_OPENBLAS
#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/registry.hpp"
#include "core/thread_pool.hpp"
#include "cpu/cpu_features.hpp"
#include "cpu/host_plan.hpp"
#include "kafel/error.hpp"

namespace kafel::cpu {

const OpenblasCore& openblas_core() {
  static const OpenblasCore c = [] {
    OpenblasCore r;
    std::istringstream config(openblas_get_config());  // "OpenBLAS 0.3.21 NO_LAPACKE ..."
    std::string name, version;
    config >> name >> version;
    r.core = openblas_get_corename();
    const std::string& core = r.core;
    r.text = "OpenBLAS " + version + ", " + core + " kernels";
    const Isa cpu = cpu_isa(), lib = openblas_core_isa(core);
    if (lib >= cpu || cpu == Isa::generic) return r;
    const char* fix = cpu == Isa::avx2        ? "Haswell"
                      : cpu_has_avx512_bf16() ? "Cooperlake"
                                              : "SkylakeX";
    r.warning = "the OpenBLAS baseline runs its " + core + " kernels (" +
                std::string(to_string(lib)) + ") on this " + std::string(to_string(cpu)) + " CPU" +
                (std::getenv("OPENBLAS_CORETYPE") ? " as $OPENBLAS_CORETYPE asks"
                                                  : " (its CPU table predates the CPU)") +
                "; OPENBLAS_CORETYPE=" + fix + " runs its " + std::string(to_string(cpu)) +
                " kernels";
    return r;
  }();
  return c;
}

namespace {

CBLAS_TRANSPOSE to_cblas(Op op) {
  return op == Op::T ? CblasTrans : CblasNoTrans;
}

// cblas_sbgemm exists only in OpenBLAS builds with BUILD_BFLOAT16 (Debian's 0.3.21 declares it
// in cblas.h but does not export it), so it is looked up at run time.
using SbgemmFn = decltype(&cblas_sbgemm);
SbgemmFn find_sbgemm() {
  static const auto fn = reinterpret_cast<SbgemmFn>(dlsym(RTLD_DEFAULT, "cblas_sbgemm"));
  return fn;
}

GemmTypes bf16_to_f32() {
  GemmTypes t = DType::bf16;
  t.c = DType::f32;
  return t;
}

void openblas_gemm(const GemmArgs& g) {
  const GemmDesc& d = g.desc;
  if (d.m == 0 || d.n == 0) return;
  // CBLAS rejects ld < 1 even when k == 0 makes the operand empty.
  const auto lda = static_cast<blasint>(std::max<std::int64_t>(1, g.lda));
  const auto ldb = static_cast<blasint>(std::max<std::int64_t>(1, g.ldb));
  const auto ldc = static_cast<blasint>(std::max<std::int64_t>(1, g.ldc));
  const auto m = static_cast<blasint>(d.m), n = static_cast<blasint>(d.n),
             k = static_cast<blasint>(d.k);
  if (d.types.a == DType::bf16)
    find_sbgemm()(CblasRowMajor, to_cblas(d.op_a), to_cblas(d.op_b), m, n, k,
                  static_cast<float>(d.alpha), static_cast<const bfloat16*>(g.a), lda,
                  static_cast<const bfloat16*>(g.b), ldb, static_cast<float>(d.beta),
                  static_cast<float*>(g.c), ldc);
  else if (d.types.a == DType::f32)
    cblas_sgemm(CblasRowMajor, to_cblas(d.op_a), to_cblas(d.op_b), m, n, k,
                static_cast<float>(d.alpha), static_cast<const float*>(g.a), lda,
                static_cast<const float*>(g.b), ldb, static_cast<float>(d.beta),
                static_cast<float*>(g.c), ldc);
  else
    cblas_dgemm(CblasRowMajor, to_cblas(d.op_a), to_cblas(d.op_b), m, n, k, d.alpha,
                static_cast<const double*>(g.a), lda, static_cast<const double*>(g.b), ldb, d.beta,
                static_cast<double*>(g.c), ldc);
}

// A batch is a loop of calls: the baseline batched GEMM of the issue (no batched CBLAS call).
void openblas_batch(const GemmArgs& g) {
  if (g.desc.batch == 1) return openblas_gemm(g);
  for (std::int64_t i = 0; i < g.desc.batch; ++i) openblas_gemm(g.matrix(i));
}

GemmKernel openblas_gemm_kernel() {
  GemmKernel k;
  k.name = "cpu.openblas";
  k.summary = openblas_core().text +
              ": sgemm/dgemm (sbgemm where built in) through CBLAS (comparison baseline)";
  k.caveat = openblas_core().warning;
  k.rung = 100;
  k.types = natural_types({DType::f32, DType::f64});
  if (find_sbgemm()) k.types.push_back({bf16_to_f32(), {}});
  k.params.params = {param("threads", 0, {}, 0, kMaxThreads,
                           "OpenBLAS threads, 0 = as cpu.packed ($KAFEL_NUM_THREADS or all)")};
  k.baseline = true;
  k.batches = true;
  k.make_plan = [](const Device&, const GemmDesc&, const Params& p) {
    // The thread count is process-wide in OpenBLAS: set it for each run, not per plan.
    const int threads = p.at("threads") > 0 ? static_cast<int>(p.at("threads")) : default_threads();
    return std::make_unique<HostPlan>([threads](const GemmArgs& args) {
      openblas_set_num_threads(threads);
      openblas_batch(args);
    });
  };
  return k;
}

const Register registered{openblas_gemm_kernel()};

}  // namespace
}  // namespace kafel::cpu

#else

namespace kafel::cpu {
const OpenblasCore& openblas_core() {
  static const OpenblasCore none;
  return none;
}
}  // namespace kafel::cpu

#endif

namespace kafel::cpu {
Isa openblas_core_isa(std::string_view core) {
  for (std::string_view n : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (core == n) return Isa::avx512;
  for (std::string_view n : {"Haswell", "Zen", "Excavator"})
    if (core == n) return Isa::avx2;
  return Isa::generic;
}
}  // namespace kafel::cpu
