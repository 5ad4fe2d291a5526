// The benchmark harness: random operands, one verified run, then warm-up and timed runs.
// Nothing is timed before the result has been checked against the float64 reference.
#include "kafel/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <sstream>

#include "core/backend.hpp"
#include "core/thread_pool.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"
#include "kafel/kernels.hpp"
#include "kafel/matrix.hpp"

namespace kafel {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The operands of one benchmark, stored as the kernels see them (row-major, tight); a batch
// matrix after matrix in one allocation per operand, with a view of each matrix.
struct BenchOperands {
  Matrix a, b, c0, c;
  std::vector<MatrixView> va, vb, vc0, vc;
  GemmArgs args;
};

// Host memory for A, B, C0 and C, and device memory for one copy; throws OutOfMemory.
void check_fits(const Device& dev, const GemmDesc& d) {
  const double count = double(d.batch);
  const double c_bytes = count * double(d.m) * double(d.n) * double(dtype_size(d.types.c));
  const double bytes = count * double(d.m) * double(d.k) * double(dtype_size(d.types.a)) +
                       count * double(d.k) * double(d.n) * double(dtype_size(d.types.b)) + c_bytes;
  check_host_memory(bytes + c_bytes, "the operands of " + d.shape());
  if (dev.global_memory && bytes > double(dev.global_memory)) {
    throw OutOfMemory("the operands of " + d.shape() + " need " + human_bytes(bytes) + " but " +
                      dev.id + " has " + human_bytes(double(dev.global_memory)));
  }
}

// Matrix i of a stacked batch (rows x cols each).
std::vector<MatrixView> stacked_views(const Matrix& all, std::int64_t rows, std::int64_t count) {
  MatrixView first = all.view();
  first.rows = rows;
  return strided_views(first, rows * first.ld, count);
}

BenchOperands make_operands(const GemmDesc& d, std::uint64_t seed, bool integers) {
  BenchOperands o;
  const bool ta = d.op_a == Op::T, tb = d.op_b == Op::T;
  const std::int64_t a_rows = ta ? d.k : d.m, b_rows = tb ? d.n : d.k, count = d.batch;
  o.a = Matrix(d.types.a, a_rows * count, ta ? d.m : d.k);
  o.b = Matrix(d.types.b, b_rows * count, tb ? d.k : d.n);
  o.c0 = Matrix(d.types.c, d.m * count, d.n);
  std::mt19937_64 rng(seed);
  auto fill = [&](const Matrix& x) {
    if (integers)
      fill_random_integers(x, rng);
    else
      fill_random_normal(x, rng);
  };
  fill(o.a);
  fill(o.b);
  if (d.beta != 0) fill(o.c0);
  o.c = o.c0.clone();
  if (d.beta == 0) poison(o.c);  // beta == 0 must not read C; unwritten elements then fail
  o.va = stacked_views(o.a, a_rows, count);
  o.vb = stacked_views(o.b, b_rows, count);
  o.vc0 = stacked_views(o.c0, d.m, count);
  o.vc = stacked_views(o.c, d.m, count);
  o.args = GemmArgs{d, o.a.data(), o.a.cols(), o.b.data(), o.b.cols(), o.c.data(), o.c.cols()};
  if (count > 1) {
    for (std::int64_t i = 0; i < count; ++i) {
      o.args.batch_a.push_back(o.va[i].data);
      o.args.batch_b.push_back(o.vb[i].data);
      o.args.batch_c.push_back(o.vc[i].data);
    }
  }
  return o;
}

double gflops(double flops, double ms) {
  return ms > 0 ? flops / (ms * 1e6) : 0;
}

BenchRecord base_record(const Device& dev, const std::string& kernel, const GemmDesc& d) {
  BenchRecord r;
  r.kernel = kernel;
  r.baseline = !kernel.empty() && find_gemm_kernel(dev, kernel).baseline;
  r.device = dev.id;
  r.device_name = dev.name;
  r.type = d.types.name();
  r.a_type = std::string(to_string(d.types.a));
  r.b_type = std::string(to_string(d.types.b));
  r.c_type = std::string(to_string(d.types.c));
  r.compute = std::string(to_string(d.types.compute));
  r.m = d.m;
  r.n = d.n;
  r.k = d.k;
  r.batch = d.batch;
  r.op = std::string(to_string(d.op_a)) + std::string(to_string(d.op_b));
  return r;
}

void set_skipped(BenchRecord& r, const std::string& why) {
  r.status = "skipped";
  r.error = "skipped: " + why;
}

void set_failed(BenchRecord& r, const std::string& why) {
  r.status = "failed";
  r.error = why;
  r.median_ms = r.best_ms = r.gflops = r.best_gflops = r.peak_pct = r.total_ms = 0;
  r.peak_gflops = 0;
}

// Runs slot 0 once and checks it; returns false (record failed) when it does not verify.
bool verified_run(GemmPlan& plan, const GemmDesc& d, BenchOperands& o, const BenchOptions& opt,
                  BenchRecord& r) {
  plan.run(0);
  plan.fetch();
  VerifyResult v = d.batch == 1 ? verify_gemm(d, o.a, o.b, o.c0, o.c, opt.verify)
                                : verify_gemm_batch(d, o.va, o.vb, o.vc0, o.vc, opt.verify);
  r.verified = v.passed;
  r.verify_method = v.method;
  r.max_abs_err = v.max_abs_err;
  r.rel_err = v.rel_err;
  if (!v.passed) set_failed(r, "verification failed: " + v.message);
  return v.passed;
}

void timed_runs(GemmPlan& plan, int slots, const BenchOptions& opt, BenchRecord& r) {
  int next = 1 % slots;
  auto t0 = Clock::now();
  for (r.warmup = 0; r.warmup < opt.warmup && ms_since(t0) < opt.warmup_budget_ms; ++r.warmup) {
    plan.run(next);
    next = (next + 1) % slots;
  }
  std::vector<double> times;
  for (int i = 0; i < std::max(1, opt.reps); ++i) {
    times.push_back(plan.run(next));
    next = (next + 1) % slots;
  }
  r.reps = int(times.size());
  r.median_ms = median(times);
  r.best_ms = *std::min_element(times.begin(), times.end());
  r.spread = r.median_ms > 0 ? (quantile(times, 0.9) - quantile(times, 0.1)) / r.median_ms : 0;
}

// Load + run + fetch on a fresh plan, as a user calling kafel::gemm would see it.
double total_time(const Device& dev, const GemmKernel& kernel, const GemmDesc& d,
                  const Params& params, BenchOperands& o, int repeats) {
  std::vector<double> totals;
  for (int i = 0; i < repeats; ++i) {
    auto plan = kernel.plan(dev, d, params);
    if (d.beta != 0) copy(o.c0, o.c);
    auto t0 = Clock::now();
    plan->load(o.args, 1);
    plan->run(0);
    plan->fetch();
    totals.push_back(ms_since(t0));
  }
  return median(totals);  // repeats is odd (1 or 3): the middle run
}

// `given`: the kernel to run (a registered one, or a test's); null: choose_gemm decides.
void measure(const Device& dev, const GemmKernel* given, const GemmDesc& d, const BenchOptions& opt,
             BenchRecord& r) {
  const GemmChoice choice = given ? choose_params_for(*given, dev, d, opt.overrides)
                                  : choose_gemm(dev, d, r.kernel, opt.overrides);
  const GemmKernel& kernel = given ? *given : find_gemm_kernel(dev, choice.kernel);
  r.kernel = kernel.name;
  r.baseline = kernel.baseline;
  r.params = choice.params;
  r.params_source = choice.source;
  r.config = r.params.empty() ? "(" + r.params_source + ")"
                              : kernel.params.format(r.params) + " (" + r.params_source + ")";
  check_fits(dev, d);
  BenchOperands o = make_operands(d, opt.seed, opt.integer_values);
  double bytes = double(o.a.bytes() + o.b.bytes() + o.c.bytes());
  r.slots = opt.rotate ? rotation_slots(bytes, dev.cache_bytes) : 1;
  auto plan = kernel.plan(dev, d, r.params);
  r.timer = plan->timer();
  plan->load(o.args, r.slots);
  if (!verified_run(*plan, d, o, opt, r)) return;
  timed_runs(*plan, r.slots, opt, r);
  r.total_ms = total_time(dev, kernel, d, r.params, o, r.median_ms > 100 ? 1 : 3);
  r.gflops = gflops(d.flops(), r.median_ms);
  r.best_gflops = gflops(d.flops(), r.best_ms);
  r.peak_gflops = dev.peak_gflops(d.types);
  r.peak_pct = peak_share(r.gflops, r.peak_gflops);
  r.status = "ok";
}

}  // namespace

void check_environment() {
  default_threads();  // throws for a malformed or out-of-range $KAFEL_NUM_THREADS
}

int rotation_slots(double bytes, std::uint64_t cache_bytes) {
  const double twice_cache = 2.0 * double(cache_bytes);
  if (cache_bytes == 0 || bytes <= 0 || bytes >= twice_cache) return 1;
  return int(std::min(8.0, std::ceil(twice_cache / bytes)));
}

namespace {

BenchRecord bench(const Device& device, const GemmKernel* given, const std::string& kernel,
                  const GemmDesc& desc, const BenchOptions& opt) {
  desc.validate();
  if (desc.batch < 1)
    throw InvalidArgument("bench: the batch count must be at least 1 (got " +
                          std::to_string(desc.batch) + ")");
  if (opt.reps < 1 || opt.warmup < 0)
    throw InvalidArgument("bench: reps must be >= 1 and warmup >= 0 (got " +
                          std::to_string(opt.reps) + ", " + std::to_string(opt.warmup) + ")");
  BenchRecord r = base_record(device, given ? "" : kernel, desc);  // unknown names throw here
  if (given) {
    r.kernel = given->name;
    r.baseline = given->baseline;
  }
  r.params = opt.overrides;  // what was asked for, kept when the kernel skips it
  try {
    measure(device, given, desc, opt, r);
  } catch (const Unsupported& e) {
    set_skipped(r, e.what());
  } catch (const OutOfMemory& e) {
    set_skipped(r, e.what());
  } catch (const InvalidArgument& e) {
    set_skipped(r, std::string("invalid parameters: ") + e.what());
  } catch (const std::exception& e) {
    set_failed(r, e.what());
  }
  return r;
}

}  // namespace

BenchRecord bench_gemm(const Device& device, const std::string& kernel, const GemmDesc& desc,
                       const BenchOptions& opt) {
  return bench(device, nullptr, kernel, desc, opt);
}

BenchRecord bench_kernel(const Device& device, const GemmKernel& kernel, const GemmDesc& desc,
                         const BenchOptions& opt) {
  return bench(device, &kernel, kernel.name, desc, opt);
}

CheckedRun run_verified(const Device& device, const GemmDesc& desc, const MatrixView& A,
                        const MatrixView& B, const MatrixView& C0, const MatrixView& C,
                        const GemmOptions& opt) {
  // With beta == 0, C must not be read: poison it so a kernel that reads it produces NaN (or a
  // sentinel for integers), and one that skips an element fails.
  if (desc.beta == 0.0)
    poison(C);
  else
    copy(C0, C);
  GemmOptions o = opt;
  o.compute = desc.types.compute;
  CheckedRun out;
  out.report = gemm(device, desc.op_a, desc.op_b, desc.alpha, A, B, desc.beta, C, o);
  out.verify = verify_gemm(desc, A, B, C0, C);
  return out;
}

CheckedRun run_verified_batch(const Device& device, const GemmDesc& desc,
                              const std::vector<MatrixView>& A, const std::vector<MatrixView>& B,
                              const std::vector<MatrixView>& C0, const std::vector<MatrixView>& C,
                              const GemmOptions& opt) {
  if (desc.beta != 0.0 && C0.size() != C.size())
    throw InvalidArgument("run_verified_batch: beta != 0 needs one C0 per C");
  for (std::size_t i = 0; i < C.size(); ++i) {
    if (desc.beta == 0.0)
      poison(C[i]);
    else
      copy(C0[i], C[i]);
  }
  GemmOptions o = opt;
  o.compute = desc.types.compute;
  CheckedRun out;
  out.report = gemm_batched(device, desc.op_a, desc.op_b, desc.alpha, A, B, desc.beta, C, o);
  out.verify = verify_gemm_batch(desc, A, B, C0, C);
  return out;
}

std::string progress_line(int index, int total, const std::string& kernel, const GemmDesc& desc,
                          const Params& params) {
  std::ostringstream os;
  os << '[' << index << '/' << total << "] " << (kernel.empty() ? "(default)" : kernel) << ' '
     << desc.m << 'x' << desc.n << 'x' << desc.k << ' ' << desc.types.name();
  if (desc.batch != 1) os << " batch " << desc.batch;
  if (desc.op_a != Op::N || desc.op_b != Op::N)
    os << ' ' << to_string(desc.op_a) << to_string(desc.op_b);
  if (!params.empty()) os << ' ' << format_params(params);
  os << " ...";
  return os.str();
}

}  // namespace kafel
