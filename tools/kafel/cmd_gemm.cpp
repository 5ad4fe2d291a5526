// `kafel gemm`: one GEMM from matmul.dat, .npy files or random inputs, timed and verified.
// Exit 0 only when the result passes verification (3 when it does not).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <random>

#include "cli_util.hpp"
#include "commands.hpp"
#include "core/bench.hpp"
#include "kafel/error.hpp"
#include "kafel/gemm.hpp"
#include "kafel/io.hpp"

namespace kafel::cli {

namespace {

struct GemmCli {
  std::string input, a_path, b_path, c_ref_path, out_path, json;
  std::int64_t m = 0, n = 0, k = 0;
  std::string device, kernel, type, layout = "row", params;
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 0.0;
  int threads = 0;
  std::uint64_t seed = 1;
};

// The problem as given: A (m x k), B (k x n), maybe a reference C, in the files' own type.
struct Given {
  Matrix a, b;
  std::optional<Matrix> c_ref;
  std::string source;
};

std::string dims(const Matrix& x) {
  return std::to_string(x.rows()) + "x" + std::to_string(x.cols());
}

Given from_npy(const GemmCli& o) {
  if (o.a_path.empty() || o.b_path.empty()) throw InvalidArgument("--a and --b go together");
  Given g{read_npy(o.a_path), read_npy(o.b_path), std::nullopt, o.a_path + ", " + o.b_path};
  check_finite(g.a, "'" + o.a_path + "'");
  check_finite(g.b, "'" + o.b_path + "'");
  if (g.a.cols() != g.b.rows()) {
    throw InvalidArgument("A (" + o.a_path + ") is " + dims(g.a) + " but B (" + o.b_path + ") is " +
                          dims(g.b) + ": A's columns must equal B's rows");
  }
  if (g.a.dtype() != g.b.dtype() && o.type.empty()) {
    throw InvalidArgument("A is " + std::string(to_string(g.a.dtype())) + " but B is " +
                          std::string(to_string(g.b.dtype())) + "; choose one with --type");
  }
  if (!o.c_ref_path.empty()) {
    g.c_ref = read_npy(o.c_ref_path);
    check_finite(*g.c_ref, "'" + o.c_ref_path + "'");
    if (g.c_ref->rows() != g.a.rows() || g.c_ref->cols() != g.b.cols()) {
      throw InvalidArgument("--c-ref " + o.c_ref_path + " is " + dims(*g.c_ref) + " but A*B is " +
                            std::to_string(g.a.rows()) + "x" + std::to_string(g.b.cols()));
    }
  }
  return g;
}

Given from_sizes(const GemmCli& o, DType type) {
  std::int64_t n = o.n ? o.n : o.m, k = o.k ? o.k : o.m;
  if (o.m <= 0 || n <= 0 || k <= 0) throw InvalidArgument("--m, --n and --k must be positive");
  const double elems =
      double(o.m) * double(k) + double(k) * double(n) + 2.0 * double(o.m) * double(n);
  check_host_memory(
      elems * double(dtype_size(type)),
      "a " + std::to_string(o.m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " problem");
  Given g{Matrix(type, o.m, k), Matrix(type, k, n), std::nullopt, "random inputs"};
  std::mt19937_64 rng(o.seed);
  fill_random_normal(g.a, rng);
  fill_random_normal(g.b, rng);
  return g;
}

Given load_given(const GemmCli& o, DType type) {
  int modes = !o.input.empty() + (!o.a_path.empty() || !o.b_path.empty()) + (o.m != 0);
  if (modes != 1) {
    throw InvalidArgument("give exactly one of --input FILE, --a A.npy --b B.npy, or --m/--n/--k");
  }
  if (!o.c_ref_path.empty() && o.a_path.empty()) {
    throw InvalidArgument("--c-ref goes with --a/--b");
  }
  if (!o.input.empty()) {
    MatmulData d = read_matmul_dat(o.input);
    check_finite(d.a, "'" + o.input + "': A");
    check_finite(d.b, "'" + o.input + "': B");
    check_finite(d.c, "'" + o.input + "': C");
    return {std::move(d.a), std::move(d.b), std::move(d.c), o.input};
  }
  return o.m != 0 ? from_sizes(o, type) : from_npy(o);
}

// The operand in the requested type and layout; with `trans` it is stored transposed (and
// passed with op T) so the product computed stays the same.
Matrix arrange(const Matrix& src, DType type, Layout layout, bool trans) {
  MatrixView s = trans ? src.view().transposed() : src.view();
  Matrix out(type, s.rows, s.cols, layout);
  copy(s, out);
  return out;
}

struct Comparison {
  double max_abs = 0, rel = 0;
  bool enforced = false, passed = true;
};

// C against alpha * C_ref + beta * C0, in float64. Not enforced when the inputs were rounded to
// f16 or i32 on the way in: the stored product then no longer applies.
Comparison compare_stored(const Matrix& c, const Matrix& c_ref, const Matrix& c0, const GemmDesc& d,
                          DType given) {
  Comparison r;
  double err2 = 0, ref2 = 0;
  for (std::int64_t i = 0; i < c.rows(); ++i) {
    for (std::int64_t j = 0; j < c.cols(); ++j) {
      double want = d.alpha * c_ref.get(i, j) + (d.beta != 0 ? d.beta * c0.get(i, j) : 0.0);
      double e = std::fabs(c.get(i, j) - want);
      if (std::isnan(e)) e = INFINITY;
      r.max_abs = std::max(r.max_abs, e);
      err2 += e * e;
      ref2 += want * want;
    }
  }
  r.rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  bool narrowed = (d.dtype == DType::f16 || d.dtype == DType::i32) && given != d.dtype;
  r.enforced = !narrowed;
  double u = std::max({unit_roundoff(d.dtype), unit_roundoff(given), std::ldexp(1.0, -24)});
  double tol = 10 * u * std::sqrt(double(std::max<std::int64_t>(d.k, 1))) + 1e-6;
  r.passed = !r.enforced || r.rel <= tol;
  return r;
}

Params gemm_params(const GemmCli& o, const GemmKernel& kernel) {
  Params p = o.params.empty() ? Params{} : parse_params(o.params);
  if (o.threads > 0) {
    if (kernel.params.has("threads")) {
      p["threads"] = o.threads;
    } else {
      std::cerr << "kafel: note: " << kernel.name
                << " has no 'threads' parameter; --threads ignored\n";
    }
  }
  return p;
}

void print_report(const Device& dev, const GemmReport& rep, const GemmDesc& d, Layout layout,
                  const std::string& source, const VerifyResult& v) {
  auto line = [](const char* key, const std::string& value) {
    std::cout << key << std::string(14 - std::string(key).size(), ' ') << value << '\n';
  };
  double gf = rep.kernel_ms > 0 ? d.flops() / (rep.kernel_ms * 1e6) : 0;
  double peak = dev.peak_gflops(d.dtype);
  line("device", dev.id + "  " + dev.name);
  line("kernel", rep.kernel + "  " + rep.config);
  line("problem", d.shape() + "  (m x n x k; lecture m=" + std::to_string(d.m) +
                      " p=" + std::to_string(d.k) + " n=" + std::to_string(d.n) + ")");
  line("operands", std::string(layout == Layout::ColMajor ? "column" : "row") +
                       "-major, alpha=" + format_num("%g", d.alpha) +
                       " beta=" + format_num("%g", d.beta) + ", from " + source);
  line("kernel time", format_num("%.3f ms", rep.kernel_ms));
  line("total time", format_num("%.3f ms", rep.total_ms) + " (including transfers)");
  line("GFLOP/s",
       format_num("%.2f", gf) + (peak > 0 ? format_num(" (%.1f%% of peak)", 100 * gf / peak) : ""));
  line("verification", v.method + ": max abs err " + format_num("%.3g", v.max_abs_err) +
                           ", rel err " + format_num("%.3g", v.rel_err) +
                           (v.passed ? "  PASS" : "  FAIL"));
}

void print_stored(const Comparison& c, bool from_file) {
  std::string status = !c.enforced ? "  (informational: inputs rounded to a narrower type)"
                       : c.passed  ? "  PASS"
                                   : "  FAIL";
  std::cout << (from_file ? "stored C      " : "reference C   ") << "max abs err "
            << format_num("%.3g", c.max_abs) << ", rel err " << format_num("%.3g", c.rel) << status
            << '\n';
}

BenchRecord make_record(const Device& dev, const GemmReport& rep, const GemmDesc& d,
                        const VerifyResult& v) {
  BenchRecord r;
  r.kernel = rep.kernel;
  r.config = rep.config;
  r.device = dev.id;
  r.device_name = dev.name;
  r.type = std::string(to_string(d.dtype));
  r.m = d.m, r.n = d.n, r.k = d.k;
  r.op = std::string(to_string(d.op_a)) + std::string(to_string(d.op_b));
  r.median_ms = r.best_ms = rep.kernel_ms;
  r.gflops = r.best_gflops = rep.kernel_ms > 0 ? d.flops() / (rep.kernel_ms * 1e6) : 0;
  double peak = dev.peak_gflops(d.dtype);
  r.peak_pct = peak > 0 ? 100 * r.gflops / peak : 0;
  r.total_ms = rep.total_ms;
  r.reps = 1;
  r.verified = v.passed;
  r.verify_method = v.method;
  r.max_abs_err = v.max_abs_err;
  r.rel_err = v.rel_err;
  r.status = v.passed ? "ok" : "failed";
  r.error = v.passed ? "" : v.message;
  return r;
}

int run_gemm(const GemmCli& o) {
  DType type = o.type.empty() ? DType::f32 : parse_dtype(o.type);
  Layout layout = parse_layout(o.layout);
  Device dev = select_device(o.device);
  Given g = load_given(o, type);
  if (o.type.empty()) type = g.a.dtype();
  const GemmKernel& kernel = pick_kernel(dev, o.kernel, type);

  GemmDesc d{
      g.a.rows(), g.b.cols(), g.a.cols(), o.trans_a ? Op::T : Op::N, o.trans_b ? Op::T : Op::N,
      o.alpha,    o.beta,     type};
  Matrix a = arrange(g.a, type, layout, o.trans_a), b = arrange(g.b, type, layout, o.trans_b);
  Matrix c0(type, d.m, d.n, layout);
  std::mt19937_64 rng(o.seed + 1);
  if (d.beta != 0) fill_random_normal(c0, rng);
  Matrix c = c0.clone();
  if (d.beta == 0) poison(c);

  GemmReport rep =
      gemm(dev, d.op_a, d.op_b, d.alpha, a, b, d.beta, c, {kernel.name, gemm_params(o, kernel)});
  VerifyOptions vo;
  vo.input_roundoff = kernel.input_roundoff;
  VerifyResult v = verify_gemm(d, a, b, c0, c, vo);
  print_report(dev, rep, d, layout, g.source, v);
  Comparison cmp;
  if (g.c_ref) {
    cmp = compare_stored(c, *g.c_ref, c0, d, g.a.dtype());
    print_stored(cmp, !o.input.empty());
  }
  if (!o.out_path.empty()) write_npy(o.out_path, c);
  if (!o.json.empty()) write_bench_json(o.json, {make_record(dev, rep, d, v)}, &dev);
  if (!v.passed) std::cerr << "kafel: verification failed: " << v.message << '\n';
  if (!cmp.passed)
    std::cerr << "kafel: result differs from the stored C (rel err " << cmp.rel << ")\n";
  return v.passed && cmp.passed ? kExitOk : kExitVerifyFailed;
}

}  // namespace

Run setup_gemm(CLI::App& sub) {
  auto o = std::make_shared<GemmCli>();
  sub.footer(
      "Inputs: --input matmul.dat (its stored C is compared too), --a/--b .npy files, or\n"
      "--m [--n --k] random normal matrices. The product is always C = alpha*A*B + beta*C0\n"
      "(C0 random when beta != 0); --trans-a/--trans-b store that operand transposed in memory\n"
      "and pass it with op T, so the same product exercises the transposed path.\n"
      "Exit codes: 0 verified, 1 error, 2 usage, 3 verification failed.");
  sub.add_option("--input", o->input, "matmul.dat file (int32 m,p,n; A, B, C float32)");
  sub.add_option("--a", o->a_path, "A as .npy (m x k)");
  sub.add_option("--b", o->b_path, "B as .npy (k x n)");
  sub.add_option("--c-ref", o->c_ref_path, "Expected C as .npy, compared with the result");
  sub.add_option("--out", o->out_path, "Write the result C as .npy");
  sub.add_option("--m", o->m, "Rows of A and C (random inputs)");
  sub.add_option("--n", o->n, "Columns of B and C (default: m)");
  sub.add_option("--k", o->k, "Inner dimension (default: m)");
  sub.add_option("--device", o->device,
                 "cpu, opencl:P:D, cuda:N or a name substring (default $KAFEL_DEVICE or cpu)");
  sub.add_option("--kernel", o->kernel, "Kernel name, e.g. cpu.naive (default: the device's best)");
  sub.add_option("--type", o->type, "f32, f64, i32 or f16 (default: the inputs' type, else f32)");
  sub.add_option("--layout", o->layout, "row or col: storage of A, B and C")->capture_default_str();
  sub.add_flag("--trans-a", o->trans_a, "Store A transposed and use op(A) = T");
  sub.add_flag("--trans-b", o->trans_b, "Store B transposed and use op(B) = T");
  sub.add_option("--alpha", o->alpha, "alpha")->capture_default_str();
  sub.add_option("--beta", o->beta, "beta")->capture_default_str();
  sub.add_option("--param", o->params, "Kernel parameter overrides NAME=V,NAME=V");
  sub.add_option("--threads", o->threads, "Threads, for kernels with a 'threads' parameter");
  sub.add_option("--seed", o->seed, "Random seed")->capture_default_str();
  sub.add_option("--json", o->json, "Write the result record as JSON");
  return [o] { return run_gemm(*o); };
}

}  // namespace kafel::cli
