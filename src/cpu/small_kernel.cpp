// The `cpu.small` kernel: the direct, unpacked GEMM for small matrices (the default below a
// measured size, docs/cpu.md) and for batches of them, whose matrices run in parallel.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "core/thread_pool.hpp"
#include "cpu/cpu_features.hpp"
#include "cpu/host_plan.hpp"
#include "cpu/small_gemm.hpp"

namespace kafel::cpu {
namespace {

// The default takes cpu.small while m * n * k is at most 96^3 (f32) or 80^3 (f64) per matrix,
// where cpu.packed (two threads) overtakes it on the 2-core Zen 4 development machine
// (docs/cpu.md), and while C has at most 256^2 elements: a large C with a tiny k is a memory-
// bound outer product that cpu.packed's threads stream faster.
constexpr double kSmallWorkF32 = 96.0 * 96.0 * 96.0;
constexpr double kSmallWorkF64 = 80.0 * 80.0 * 80.0;
constexpr double kSmallOutput = 256.0 * 256.0;

bool small_problem(const GemmDesc& d) {
  const double limit = d.types.a == DType::f64 ? kSmallWorkF64 : kSmallWorkF32;
  return double(d.m) * double(d.n) * double(d.k) <= limit &&
         double(d.m) * double(d.n) <= kSmallOutput;
}

const SmallKernels& kernels_for(Isa isa) {
  const SmallKernels* k = isa == Isa::avx512 ? small_kernels_avx512()
                          : isa == Isa::avx2 ? small_kernels_avx2()
                                             : nullptr;
  return k ? *k : small_kernels_generic();
}

// One matrix of the batch. op(B) = B^T is copied into `scratch` as k x n first (the kernels read
// B along rows); op(A) is read in place through strides either way.
template <class T>
void one_matrix(const GemmArgs& g, std::int64_t i, SmallFn<T> fn, std::vector<T>& scratch) {
  const GemmDesc& d = g.desc;
  const T* a = static_cast<const T*>(g.a_of(i));
  const T* b = static_cast<const T*>(g.b_of(i));
  T* c = static_cast<T*>(g.c_of(i));
  std::int64_t ldb = g.ldb;
  if (d.op_b == Op::T && d.k > 0) {
    scratch.resize(static_cast<std::size_t>(d.k * d.n));
    for (std::int64_t p = 0; p < d.k; ++p)
      for (std::int64_t j = 0; j < d.n; ++j) scratch[p * d.n + j] = b[j * g.ldb + p];
    b = scratch.data();
    ldb = d.n;
  }
  const std::int64_t ars = d.op_a == Op::N ? g.lda : 1, acs = d.op_a == Op::N ? 1 : g.lda;
  fn(d.m, d.n, d.k, a, ars, acs, b, ldb, c, g.ldc, static_cast<T>(d.alpha), static_cast<T>(d.beta));
}

// Touches the lines of a rows x cols block (leading dimension ld elements), for writing or not.
template <class T>
void prefetch_block(const void* p, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                    bool write) {
  const auto* base = static_cast<const char*>(p);
  const std::int64_t bytes = cols * std::int64_t(sizeof(T));
  for (std::int64_t r = 0; r < rows; ++r) {
    const char* row = base + r * ld * std::int64_t(sizeof(T));
    const auto first = reinterpret_cast<std::uintptr_t>(row) & ~std::uintptr_t(63);
    for (std::uintptr_t line = first; line < reinterpret_cast<std::uintptr_t>(row + bytes);
         line += 64) {
      if (write)
        __builtin_prefetch(reinterpret_cast<const void*>(line), 1, 3);
      else
        __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 3);
    }
  }
}

// Matrix i's A, B and C, fetched while an earlier one computes: in a batch that streams from
// memory each matrix's misses would otherwise stall its own tiles, which keep few loads in
// flight (C for writing, so its stores do not wait for the line either).
template <class T>
void prefetch_matrix(const GemmArgs& g, std::int64_t i) {
  const GemmDesc& d = g.desc;
  if (d.op_a == Op::N)
    prefetch_block<T>(g.a_of(i), d.m, d.k, g.lda, false);
  else
    prefetch_block<T>(g.a_of(i), d.k, d.m, g.lda, false);
  if (d.op_b == Op::N)
    prefetch_block<T>(g.b_of(i), d.k, d.n, g.ldb, false);
  else
    prefetch_block<T>(g.b_of(i), d.n, d.k, g.ldb, false);
  prefetch_block<T>(g.c_of(i), d.m, d.n, g.ldc, true);
}

// A batch: threads claim runs of consecutive matrices (so each knows which comes next and its
// accesses stream; the pool's caller may end up running every run alone), prefetching `ahead`
// matrices ahead within a run (0: none). Zen 4, 2 cores, 10,000 x 32^3 f32 from memory: 55-82
// GFLOP/s with one matrix per claim, 100-160 so (docs/BENCHMARKS.md, session 21).
template <class T>
void run(const GemmArgs& g, SmallFn<T> fn, int threads, int ahead) {
  const GemmDesc& d = g.desc;
  if (d.m == 0 || d.n == 0) return;
  const std::int64_t count = std::max<std::int64_t>(1, d.batch);
  if (count == 1) {
    std::vector<T> scratch;
    one_matrix<T>(g, 0, fn, scratch);
    return;
  }
  const int workers = static_cast<int>(std::clamp<std::int64_t>(threads, 1, count));
  // Runs of up to 64 matrices, at least 8 per thread when the batch allows.
  const std::int64_t run_length = std::clamp<std::int64_t>(count / (8 * workers), 1, 64);
  const auto runs = static_cast<int>((count + run_length - 1) / run_length);
  std::vector<std::vector<T>> scratch(static_cast<std::size_t>(workers));
  parallel_parts(runs, workers, [&](int r, int tid) {
    const std::int64_t begin = r * run_length, end = std::min(count, begin + run_length);
    for (std::int64_t i = begin; i < std::min(end, begin + ahead); ++i) prefetch_matrix<T>(g, i);
    for (std::int64_t i = begin; i < end; ++i) {
      if (ahead > 0 && i + ahead < end) prefetch_matrix<T>(g, i + ahead);
      one_matrix<T>(g, i, fn, scratch[static_cast<std::size_t>(tid)]);
    }
  });
}

ParamSpace small_params() {
  ParamSpace s;
  s.params = {
      choice("isa", 0, {"auto", "generic", "avx2", "avx512"}, false,
             "kernels: auto = the best this CPU has (or $KAFEL_CPU_ISA)"),
      param("threads", 0, {}, 0, kMaxThreads,
            "threads over the matrices of a batch, 0 = $KAFEL_NUM_THREADS or one per core"),
      param("PF", 1, {0, 1, 2, 4}, 0, 64,
            "batches: prefetch the operands of the matrix this many ahead (0: off)"),
  };
  return s;
}

GemmKernel small_gemm_kernel() {
  GemmKernel k;
  k.name = "cpu.small";
  k.summary =
      "direct small-matrix GEMM: register tiles read straight from A and B, no packing; "
      "batches in parallel";
  k.rung = 4;
  k.types = natural_types({DType::f32, DType::f64});
  k.params = small_params();
  k.batches = true;
  // Above cpu.packed (10) for small matrices, batches of them included.
  k.preference = [](const Device&, const GemmDesc& d) { return small_problem(d) ? 20 : 0; };
  k.can_implement = [](const Device&, const GemmDesc& d, const Params& p) -> std::string {
    const auto isa = static_cast<Isa>(p.at("isa"));
    if (isa != Isa::automatic && !isa_supported(isa))
      return "this CPU (or this build) has no " + std::string(to_string(isa)) + " kernels";
    if (d.batch > 2147483647) return "batches of more than 2^31-1 matrices";
    return "";
  };
  k.make_plan = [](const Device&, const GemmDesc& d, const Params& p) {
    const SmallKernels& ks = kernels_for(resolve_isa(static_cast<Isa>(p.at("isa"))));
    const int threads = p.at("threads") > 0 ? static_cast<int>(p.at("threads")) : default_threads();
    const int ahead = static_cast<int>(p.at("PF"));
    const bool dbl = d.types.a == DType::f64;
    return std::make_unique<HostPlan>([&ks, threads, ahead, dbl](const GemmArgs& a) {
      if (dbl)
        run<double>(a, ks.f64, threads, ahead);
      else
        run<float>(a, ks.f32, threads, ahead);
    });
  };
  return k;
}

const Register registered{small_gemm_kernel()};

}  // namespace
}  // namespace kafel::cpu
