// `kafel gemm`: one GEMM (or a batch of them) from matmul.dat, .npy files or random inputs,
// timed and verified. Exit 0 only when every result passes verification (3 when one does not).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <random>

#include "cli_util.hpp"
#include "commands.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"
#include "kafel/gemm.hpp"
#include "kafel/io.hpp"
#include "kafel/kernels.hpp"

namespace kafel::cli {

namespace {

constexpr std::int64_t kMaxDim = 2147483647;
constexpr double kInt32Max = 2147483647.0;

struct GemmCli {
  std::string input, a_path, b_path, c_ref_path, out_path, json;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string device, kernel, type, compute, layout = "row", params;
  bool trans_a = false, trans_b = false, allow_wrap = false;
  double alpha = 1.0, beta = 0.0;
  int threads = 0;
  std::uint64_t seed = 1;
  const CLI::Option *n_opt = nullptr, *k_opt = nullptr, *batch_opt = nullptr;

  bool batched() const { return batch_opt->count() > 0; }
};

// The problem as given, in the files' own type: A (m x k) and B (k x n), each one matrix or one
// per matrix of the batch (a single one serves every matrix), maybe reference Cs (m x n).
struct Given {
  std::vector<Matrix> a, b, c_ref;
  std::string source;
  bool from_file = false;

  DType type() const { return a.front().dtype(); }
};

std::string dims(const Matrix& x) {
  return std::to_string(x.rows()) + "x" + std::to_string(x.cols());
}

std::string dims(const std::vector<std::int64_t>& shape) {
  std::string out;
  for (std::int64_t d : shape) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

// One .npy operand: a 2-D (or 1-D) matrix, or with --batch a 3-D stack of exactly that many.
struct NpyOperand {
  std::string role, path;  // "A", "a.npy"
  NpyHeader header;

  bool stack() const { return header.shape.size() == 3; }
  std::string name() const { return role + " ('" + path + "')"; }
};

NpyOperand npy_operand(const GemmCli& o, const std::string& role, const std::string& path) {
  NpyOperand x{role, path, read_npy_header(path)};
  if (!x.stack()) return x;
  const std::int64_t count = x.header.shape[0];
  if (!o.batched())
    throw InvalidArgument(x.name() + " is a 3-D array (" + dims(x.header.shape) + "), a stack of " +
                          std::to_string(count) + " matrices: pass --batch " +
                          std::to_string(count));
  if (count != o.batch)
    throw InvalidArgument(x.name() + " holds " + std::to_string(count) + " matrices (" +
                          dims(x.header.shape) + ") but --batch is " + std::to_string(o.batch));
  return x;
}

std::vector<Matrix> read_operand(const NpyOperand& x) {
  std::vector<Matrix> out;
  if (x.stack())
    out = read_npy_stack(x.path);
  else
    out.push_back(read_npy(x.path));
  for (std::size_t i = 0; i < out.size(); ++i)
    check_finite(out[i], "'" + x.path + "'" + (x.stack() ? " matrix " + std::to_string(i) : ""));
  return out;
}

// With --batch, the batch counts of the files agree (with each other and with --batch), at
// least one of A and B is a stack, and the stored C is one.
void check_batch_files(const GemmCli& o, const NpyOperand& a, const NpyOperand& b,
                       const std::optional<NpyOperand>& c) {
  if (!o.batched()) return;
  if (!a.stack() && !b.stack())
    throw InvalidArgument("--batch " + std::to_string(o.batch) + ": A and B are single matrices; " +
                          "give A or B as a 3-D .npy stack (" + std::to_string(o.batch) +
                          " x rows x cols; a 2-D operand serves every matrix)");
  if (c && !c->stack())
    throw InvalidArgument("--batch " + std::to_string(o.batch) + ": --c-ref " + c->path +
                          " must be a 3-D stack of " + std::to_string(o.batch) + " matrices (" +
                          dims(c->header.shape) + " given)");
}

Given from_npy(const GemmCli& o) {
  if (o.a_path.empty() || o.b_path.empty()) throw InvalidArgument("--a and --b go together");
  const NpyOperand na = npy_operand(o, "A", o.a_path), nb = npy_operand(o, "B", o.b_path);
  std::optional<NpyOperand> nc;
  if (!o.c_ref_path.empty()) nc = npy_operand(o, "--c-ref", o.c_ref_path);
  check_batch_files(o, na, nb, nc);
  Given g{read_operand(na), read_operand(nb), {}, o.a_path + ", " + o.b_path, true};
  const Matrix &a = g.a.front(), &b = g.b.front();
  if (a.cols() != b.rows()) {
    throw InvalidArgument("A (" + o.a_path + ") is " + dims(a) + " but B (" + o.b_path + ") is " +
                          dims(b) + ": A's columns must equal B's rows");
  }
  if (a.dtype() != b.dtype() && o.type.empty()) {
    throw InvalidArgument("A is " + std::string(to_string(a.dtype())) + " but B is " +
                          std::string(to_string(b.dtype())) + "; choose one with --type");
  }
  if (nc) {
    g.c_ref = read_operand(*nc);
    const Matrix& c = g.c_ref.front();
    if (c.rows() != a.rows() || c.cols() != b.cols()) {
      throw InvalidArgument("--c-ref " + o.c_ref_path + " is " + dims(c) + " but A*B is " +
                            std::to_string(a.rows()) + "x" + std::to_string(b.cols()));
    }
  }
  if (o.batched() && na.stack() != nb.stack())
    g.source += " (" + std::string(na.stack() ? "B" : "A") + " serves every matrix)";
  return g;
}

// Random normal inputs: matrix i of the batch takes A then B from one generator, so matrix 0 is
// the problem `kafel gemm` without --batch generates.
Given from_sizes(const GemmCli& o, const GemmTypes& t) {
  const std::int64_t n = o.n_opt->count() ? o.n : o.m, k = o.k_opt->count() ? o.k : o.m;
  const double bytes = double(o.batch) * (double(o.m) * double(k) * double(dtype_size(t.a)) +
                                          double(k) * double(n) * double(dtype_size(t.b)) +
                                          2.0 * double(o.m) * double(n) * double(dtype_size(t.c)));
  check_host_memory(bytes, "a " + std::to_string(o.m) + "x" + std::to_string(n) + "x" +
                               std::to_string(k) + " problem" +
                               (o.batched() ? " batch " + std::to_string(o.batch) : ""));
  Given g{{}, {}, {}, "random inputs"};
  std::mt19937_64 rng(o.seed);
  for (std::int64_t i = 0; i < o.batch; ++i) {
    g.a.emplace_back(t.a, o.m, k);
    g.b.emplace_back(t.b, k, n);
    fill_random_normal(g.a.back(), rng);
    fill_random_normal(g.b.back(), rng);
  }
  return g;
}

Given load_given(const GemmCli& o, const std::optional<GemmTypes>& roles) {
  const int modes = !o.input.empty() + (!o.a_path.empty() || !o.b_path.empty()) + (o.m != 0);
  if (modes != 1) {
    throw InvalidArgument("give exactly one of --input FILE, --a A.npy --b B.npy, or --m/--n/--k");
  }
  if (!o.c_ref_path.empty() && o.a_path.empty()) {
    throw InvalidArgument("--c-ref goes with --a/--b");
  }
  if ((o.n_opt->count() || o.k_opt->count()) && o.m == 0)
    throw InvalidArgument("--n and --k go with --m (random inputs)");
  if (!o.input.empty()) {
    if (o.batched())
      throw InvalidArgument("--batch takes --a/--b .npy stacks or --m/--n/--k random inputs (" +
                            o.input + " holds one problem)");
    MatmulData d = read_matmul_dat(o.input);
    check_finite(d.a, "'" + o.input + "': A");
    check_finite(d.b, "'" + o.input + "': B");
    check_finite(d.c, "'" + o.input + "': C");
    Given g{{}, {}, {}, o.input, true};
    g.a.push_back(std::move(d.a));
    g.b.push_back(std::move(d.b));
    g.c_ref.push_back(std::move(d.c));
    return g;
  }
  return o.m != 0 ? from_sizes(o, roles ? *roles : GemmTypes::of(DType::f32)) : from_npy(o);
}

// The operand in the requested type and layout; with `trans` it is stored transposed (and
// passed with op T) so the product computed stays the same.
Matrix arrange(const Matrix& src, DType type, Layout layout, bool trans) {
  MatrixView s = trans ? src.view().transposed() : src.view();
  Matrix out(type, s.rows, s.cols, layout);
  copy(s, out);
  return out;
}

double max_abs(const std::vector<MatrixView>& list) {
  double v = 0;
  for (const MatrixView& m : list)
    for (std::int64_t i = 0; i < m.rows; ++i)
      for (std::int64_t j = 0; j < m.cols; ++j) v = std::max(v, std::fabs(m.get(i, j)));
  return v;
}

// Integer compute wraps modulo 2^32. Refused unless --allow-wrap when the bound
// |alpha| max|A| max|B| k + |beta| max|C0| exceeds int32: a wrapped result verifies (the
// reference wraps the same way) but is not the product the user asked for.
void check_int_overflow(const GemmCli& o, const GemmDesc& d, const std::vector<MatrixView>& a,
                        const std::vector<MatrixView>& b, const std::vector<MatrixView>& c0) {
  if (!d.types.exact()) return;
  const double bound = std::fabs(d.alpha) * max_abs(a) * max_abs(b) * double(d.k) +
                       (d.beta != 0 ? std::fabs(d.beta) * max_abs(c0) : 0.0);
  if (bound <= kInt32Max) return;
  const std::string what = "integer GEMM may overflow: |alpha| max|A| max|B| k + |beta| max|C| = " +
                           format_num("%.4g", bound) + " exceeds 2^31-1";
  if (!o.allow_wrap)
    throw InvalidArgument(what + "; the result would wrap modulo 2^32 (--allow-wrap accepts that)");
  warn(what + "; results wrap modulo 2^32 (--allow-wrap), verified modulo 2^32");
}

// Integer GEMM would truncate a fraction (alpha 0.5 -> 0 and an all-zero C that verifies):
// refused, naming the option. GemmDesc::validate refuses it too; this says it in CLI terms.
void check_integer_scalars(const GemmDesc& d) {
  if (!d.types.exact()) return;
  for (auto [option, v] : {std::pair{"--alpha", d.alpha}, std::pair{"--beta", d.beta}})
    if (v != std::nearbyint(v) || std::fabs(v) > kInt32Max)
      throw InvalidArgument(std::string(option) + " " + format_num("%g", v) + ": integer GEMM (" +
                            d.types.name() +
                            ") takes whole numbers in the int32 range for alpha and beta "
                            "(a fraction would be truncated)");
}

struct Comparison {
  double max_abs = 0, rel = 0;
  bool enforced = false, passed = true;
};

// C against alpha * C_ref + beta * C0, in float64. Not enforced when the inputs were rounded to
// a narrower type on the way in: the stored product then no longer applies.
Comparison compare_stored(const MatrixView& c, const MatrixView& c_ref, const MatrixView& c0,
                          const GemmDesc& d, DType given) {
  Comparison r;
  long double err2 = 0, ref2 = 0;
  for (std::int64_t i = 0; i < c.rows; ++i) {
    for (std::int64_t j = 0; j < c.cols; ++j) {
      const double want = d.alpha * c_ref.get(i, j) + (d.beta != 0 ? d.beta * c0.get(i, j) : 0.0);
      double e = std::fabs(c.get(i, j) - want);
      if (!std::isfinite(e)) e = INFINITY;
      r.max_abs = std::max(r.max_abs, e);
      err2 += (long double)e * e;
      ref2 += (long double)want * want;
    }
  }
  r.rel = double(ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2));
  const bool narrowed = unit_roundoff(d.types.a) > unit_roundoff(given) ||
                        d.types.input_roundoff() > 0 ||
                        (is_integer(d.types.a) != is_integer(given));
  r.enforced = !narrowed;
  const double u = std::max({unit_roundoff(d.types.c), unit_roundoff(given), std::ldexp(1.0, -24)});
  const double tol = 10 * u * std::sqrt(double(std::max<std::int64_t>(d.k, 1))) + 1e-6;
  r.passed = !r.enforced || r.rel <= tol;
  return r;
}

// Every matrix against its stored C: the largest errors, passed when every matrix passes.
Comparison compare_all(const std::vector<MatrixView>& c, const std::vector<Matrix>& c_ref,
                       const std::vector<MatrixView>& c0, const GemmDesc& d, DType given) {
  Comparison all;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const Comparison one = compare_stored(c[i], c_ref[i], c0[i], d, given);
    all.max_abs = std::max(all.max_abs, one.max_abs);
    all.rel = std::max(all.rel, one.rel);
    all.enforced = one.enforced;
    all.passed = all.passed && one.passed;
  }
  return all;
}

// Elements of C that are NaN or infinite (from finite inputs: the product overflows C's type).
std::int64_t non_finite(const std::vector<MatrixView>& list) {
  std::int64_t n = 0;
  for (const MatrixView& c : list) {
    if (!is_floating(c.dtype)) return 0;
    for (std::int64_t i = 0; i < c.rows; ++i)
      for (std::int64_t j = 0; j < c.cols; ++j) n += !std::isfinite(c.get(i, j));
  }
  return n;
}

// The operands as the kernels get them (type, layout, stored transposed or not), one view per
// matrix of the batch; a single given matrix serves every one. C0 is random when beta != 0.
struct Operands {
  std::vector<Matrix> a, b, c0, c;
  std::vector<MatrixView> va, vb, vc0, vc;
};

std::vector<MatrixView> views(const std::vector<Matrix>& list, std::int64_t count) {
  std::vector<MatrixView> out;
  for (std::int64_t i = 0; i < count; ++i) out.push_back(list[list.size() == 1 ? 0 : i].view());
  return out;
}

Operands arrange_all(const GemmCli& o, const Given& g, const GemmDesc& d, Layout layout) {
  Operands x;
  for (const Matrix& m : g.a) x.a.push_back(arrange(m, d.types.a, layout, o.trans_a));
  for (const Matrix& m : g.b) x.b.push_back(arrange(m, d.types.b, layout, o.trans_b));
  std::mt19937_64 rng(o.seed + 1);
  for (std::int64_t i = 0; i < d.batch; ++i) {
    x.c0.emplace_back(d.types.c, d.m, d.n, layout);
    if (d.beta != 0) fill_random_normal(x.c0.back(), rng);
    x.c.emplace_back(d.types.c, d.m, d.n, layout);
  }
  x.va = views(x.a, d.batch);
  x.vb = views(x.b, d.batch);
  x.vc0 = views(x.c0, d.batch);
  x.vc = views(x.c, d.batch);
  return x;
}

std::string err_text(double v) {
  return std::isnan(v) ? "n/a" : format_num("%.3g", v);
}

// The kernel's own parameters from --param and --threads (labels allowed, ranges checked).
Params gemm_params(const GemmCli& o, const GemmKernelInfo& kernel) {
  Params p = o.params.empty() ? Params{} : kernel.params.parse(o.params);
  if (o.threads > 0) {
    if (!kernel.params.has("threads"))
      throw InvalidArgument("--threads: " + kernel.name + " has no 'threads' parameter");
    p["threads"] = o.threads;
  }
  return p;
}

// " on all 4 matrices, worst matrix 2" for a batch, "" for one matrix.
std::string batch_text(const VerifyResult& v, std::int64_t count, bool batched) {
  if (!batched) return "";
  return count == 1 ? " on the 1 matrix"
                    : " on all " + std::to_string(count) + " matrices, worst matrix " +
                          std::to_string(std::max<std::int64_t>(v.worst_matrix, 0));
}

void print_report(const Device& dev, const CheckedRun& run, const GemmDesc& d, Layout layout,
                  const std::string& source, std::int64_t bad, bool batched) {
  auto line = [](const char* key, const std::string& value) {
    std::cout << key << std::string(14 - std::string(key).size(), ' ') << value << '\n';
  };
  const GemmReport& rep = run.report;
  const VerifyResult& v = run.verify;
  const double gf = rep.kernel_ms > 0 ? d.flops() / (rep.kernel_ms * 1e6) : 0;
  const double peak = dev.peak_gflops(d.types);
  line("device", dev.id + "  " + dev.name);
  line("kernel", rep.kernel + "  " + rep.config);
  line("problem", d.shape() + "  (m x n x k; lecture m=" + std::to_string(d.m) +
                      " p=" + std::to_string(d.k) + " n=" + std::to_string(d.n) + ")");
  line("operands", std::string(layout == Layout::ColMajor ? "column" : "row") +
                       "-major, alpha=" + format_num("%g", d.alpha) +
                       " beta=" + format_num("%g", d.beta) + ", from " + source);
  line("kernel time", format_num("%.3f ms", rep.kernel_ms));
  line("total time", format_num("%.3f ms", rep.total_ms) + " (including transfers)");
  std::string share = peak_share_text(gf, peak);
  if (peak > 0 && share == "-") share = "- (the peak estimate is below the measurement)";
  line("GFLOP/s", format_num("%.2f", gf) + (peak > 0 ? " (" + share + " of peak)" : ""));
  const std::string verdict = bad ? "  OVERFLOW" : v.passed ? "  PASS" : "  FAIL";
  line("verification", v.method + batch_text(v, d.batch, batched) + ": max abs err " +
                           err_text(v.max_abs_err) + ", rel err " + err_text(v.rel_err) + verdict);
}

void print_stored(const Comparison& c, bool from_file) {
  std::string status = !c.enforced ? "  (informational: inputs rounded to a narrower type)"
                       : c.passed  ? "  PASS"
                                   : "  FAIL";
  std::cout << (from_file ? "stored C      " : "reference C   ") << "max abs err "
            << err_text(c.max_abs) << ", rel err " << err_text(c.rel) << status << '\n';
}

BenchRecord make_record(const Device& dev, const CheckedRun& run, const GemmDesc& d) {
  BenchRecord r;
  r.kernel = run.report.kernel;
  r.config = run.report.config;
  r.device = dev.id;
  r.device_name = dev.name;
  r.type = d.types.name();
  r.a_type = std::string(to_string(d.types.a));
  r.b_type = std::string(to_string(d.types.b));
  r.c_type = std::string(to_string(d.types.c));
  r.compute = std::string(to_string(d.types.compute));
  r.m = d.m, r.n = d.n, r.k = d.k;
  r.batch = d.batch;
  r.op = std::string(to_string(d.op_a)) + std::string(to_string(d.op_b));
  r.median_ms = r.best_ms = run.report.kernel_ms;
  r.gflops = r.best_gflops =
      run.report.kernel_ms > 0 ? d.flops() / (run.report.kernel_ms * 1e6) : 0;
  r.peak_gflops = dev.peak_gflops(d.types);
  r.peak_pct = peak_share(r.gflops, r.peak_gflops);
  r.total_ms = run.report.total_ms;
  r.reps = 1;
  r.verified = run.verify.passed;
  r.verify_method = run.verify.method;
  r.max_abs_err = run.verify.max_abs_err;
  r.rel_err = run.verify.rel_err;
  r.status = "ok";
  return r;
}

std::optional<GemmTypes> requested_roles(const GemmCli& o) {
  if (o.type.empty()) return std::nullopt;
  const auto list = parse_roles(o.type, o.compute, "--type");
  if (list.size() != 1) throw InvalidArgument("--type takes one element type for kafel gemm");
  return list.front();
}

// check_convertible for each matrix of an operand, naming the matrix within a stack.
void check_all_convertible(const std::vector<Matrix>& list, DType type, const std::string& role) {
  for (std::size_t i = 0; i < list.size(); ++i)
    check_convertible(list[i], type,
                      list.size() == 1 ? role : role + " matrix " + std::to_string(i));
}

// The batched or the single run, verified (every matrix of a batch).
CheckedRun run_checked(const Device& dev, const GemmDesc& d, const Operands& x,
                       const GemmOptions& go, bool batched) {
  if (batched) return run_verified_batch(dev, d, x.va, x.vb, x.vc0, x.vc, go);
  return run_verified(dev, d, x.va[0], x.vb[0], x.vc0[0], x.vc[0], go);
}

int run_gemm(const GemmCli& o) {
  check_environment();
  std::optional<GemmTypes> roles = requested_roles(o);
  const Layout layout = parse_layout(o.layout);
  check_outputs({{"--out", o.out_path}, {"--json", o.json}},
                {o.input, o.a_path, o.b_path, o.c_ref_path});
  const Device dev = select_device(o.device);
  Given g = load_given(o, roles);
  if (!roles) roles = parse_roles(std::string(to_string(g.type())), o.compute, "--type")[0];
  if (g.from_file) {  // a value the requested type cannot hold is the input's fault
    check_all_convertible(g.a, roles->a, "A");
    check_all_convertible(g.b, roles->b, "B");
  }
  GemmDesc d{g.a.front().rows(),
             g.b.front().cols(),
             g.a.front().cols(),
             o.trans_a ? Op::T : Op::N,
             o.trans_b ? Op::T : Op::N,
             o.alpha,
             o.beta,
             *roles};
  d.batch = o.batch;
  check_integer_scalars(d);
  d.validate();
  const Operands x = arrange_all(o, g, d, layout);
  check_int_overflow(o, d, x.va, x.vb, x.vc0);

  const std::string kernel = o.kernel.empty() ? choose_gemm(dev, d).kernel : o.kernel;
  GemmOptions go;
  go.kernel = kernel;
  go.params = gemm_params(o, gemm_kernel(dev, kernel));
  const CheckedRun run = run_checked(dev, d, x, go, o.batched());
  const std::int64_t bad = non_finite(x.vc);
  print_report(dev, run, d, layout, g.source, bad, o.batched());
  Comparison cmp;
  if (!g.c_ref.empty()) {
    cmp = compare_all(x.vc, g.c_ref, x.vc0, d, g.type());
    print_stored(cmp, !o.input.empty());
  }
  if (bad) {
    std::cerr << "kafel: error: C holds " << bad << " infinite or NaN elements: the product of "
              << "finite inputs overflows " << to_string(d.types.c) << "\n";
    return kExitVerifyFailed;
  }
  if (!run.verify.passed || !cmp.passed) {  // no result file for a result that failed
    if (!run.verify.passed)
      std::cerr << "kafel: verification failed: " << run.verify.message << '\n';
    if (!cmp.passed)
      std::cerr << "kafel: result differs from the stored C (rel err " << err_text(cmp.rel)
                << ")\n";
    return kExitVerifyFailed;
  }
  if (!o.out_path.empty()) {
    if (o.batched())
      write_npy_stack(o.out_path, x.vc);
    else
      write_npy(o.out_path, x.vc[0]);
  }
  if (!o.json.empty()) write_bench_json(o.json, {make_record(dev, run, d)}, &dev);
  return kExitOk;
}

}  // namespace

Run setup_gemm(CLI::App& sub) {
  auto o = std::make_shared<GemmCli>();
  sub.footer(
      "Inputs: --input matmul.dat (its stored C is compared too), --a/--b .npy files, or\n"
      "--m [--n --k] random normal matrices. The product is always C = alpha*A*B + beta*C0\n"
      "(C0 random when beta != 0); --trans-a/--trans-b store that operand transposed in memory\n"
      "and pass it with op T, so the same product exercises the transposed path.\n"
      "Batches: --batch B runs B independent products of one shape in one batched call, from\n"
      "--m/--n/--k (B random problems) or .npy stacks: 3-D arrays B x m x k (--a) and\n"
      "B x k x n (--b); a 2-D A or B serves every matrix. --c-ref is then B x m x n, --out is\n"
      "written B x m x n, and every matrix is verified (Freivalds per matrix when the batch's\n"
      "m*n*k work is large); the line shows the worst matrix.\n"
      "Types: --type names the storage (f32 f64 i32 f16 bf16 i8 e4m3 e5m2) or full roles\n"
      "(bf16->f32: bf16 inputs, f32 C; f32/tf32: compute mode tf32); --compute sets the mode\n"
      "(f32 f64 i32 tf32 3xtf32 f16; default: the storage's natural one). File inputs that the\n"
      "type cannot hold (1e6 as f16, 0.5 as i32, 300 as i8) are refused, naming the element.\n"
      "Integer GEMM: alpha and beta must be integers; when |alpha| max|A| max|B| k + |beta|\n"
      "max|C| can exceed 2^31-1 the run is refused (results would wrap modulo 2^32) unless\n"
      "--allow-wrap, which warns and verifies modulo 2^32.\n"
      "Outputs (--out, --json) are checked before the run, written whole or not at all, never\n"
      "over an input, and not written when verification fails.\n"
      "Exit codes: 0 verified, 1 error, 2 usage, 3 verification failed or C overflowed.");
  sub.add_option("--input", o->input, "matmul.dat file (int32 m,p,n; A, B, C float32)");
  sub.add_option("--a", o->a_path, "A as .npy (m x k; with --batch B x m x k or m x k)");
  sub.add_option("--b", o->b_path, "B as .npy (k x n; with --batch B x k x n or k x n)");
  sub.add_option("--c-ref", o->c_ref_path,
                 "Expected C as .npy (with --batch B x m x n), compared with the result");
  sub.add_option("--out", o->out_path, "Write the result C as .npy (B x m x n with --batch)");
  int_option(sub, "--m", o->m, 1, kMaxDim, "Rows of A and C (random inputs)");
  o->n_opt = int_option(sub, "--n", o->n, 1, kMaxDim, "Columns of B and C (default: m)");
  o->k_opt = int_option(sub, "--k", o->k, 1, kMaxDim, "Inner dimension (default: m)");
  o->batch_opt = int_option(sub, "--batch", o->batch, 1, kMaxCount,
                            "Independent products of the shape (batched GEMM; .npy inputs as "
                            "3-D stacks)");
  sub.add_option("--device", o->device,
                 "cpu, opencl:P:D, cuda:N or a name substring (default $KAFEL_DEVICE or cpu)");
  sub.add_option("--kernel", o->kernel, "Kernel name, e.g. cpu.naive (default: the device's best)");
  sub.add_option("--type", o->type,
                 "Storage or roles: f32 f64 i32 f16 bf16 i8, bf16->f32, f32/tf32 (default: the "
                 "inputs' type, else f32)");
  sub.add_option("--compute", o->compute,
                 "Compute mode: f32 f64 i32 tf32 3xtf32 f16 (default: the natural one)");
  sub.add_option("--layout", o->layout, "row or col: storage of A, B and C")->capture_default_str();
  sub.add_flag("--trans-a", o->trans_a, "Store A transposed and use op(A) = T");
  sub.add_flag("--trans-b", o->trans_b, "Store B transposed and use op(B) = T");
  number_option(sub, "--alpha", o->alpha, -1e300, 1e300, false, "alpha");
  number_option(sub, "--beta", o->beta, -1e300, 1e300, false, "beta");
  sub.add_option("--param", o->params, "Kernel parameter overrides NAME=V,NAME=V");
  int_option(sub, "--threads", o->threads, 0, 1024,
             "Threads, for kernels with a 'threads' parameter (0: default)");
  seed_option(sub, o->seed, "Random seed (0 .. 2^63-1)");
  sub.add_flag("--allow-wrap", o->allow_wrap,
               "Integer GEMM: accept results that wrap modulo 2^32 (warns)");
  sub.add_option("--json", o->json, "Write the result record as JSON");
  return [o] { return run_gemm(*o); };
}

}  // namespace kafel::cli
