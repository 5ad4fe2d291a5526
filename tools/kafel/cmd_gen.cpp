// `kafel gen M K N -o FILE`: a random test problem, A (M x K) and B (K x N) normal, C = A*B
// accumulated in float64. matmul.dat by default; FILE ending in .npy writes three .npy files.
#include <iostream>
#include <memory>

#include "cli_util.hpp"
#include "commands.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel::cli {

namespace {

constexpr std::int64_t kMaxDim = 2147483647;

struct GenCli {
  std::int64_t m = 0, k = 0, n = 0;
  std::string out;
  std::uint64_t seed = 1;
  std::string type = "f32";
};

// prob.npy -> prob_a.npy (and _b, _c).
std::string npy_part(const std::string& out, const char* part) {
  return out.substr(0, out.size() - 4) + "_" + part + ".npy";
}

int run_gen(const GenCli& opt) {
  const DType type = parse_dtype(opt.type);
  const bool npy = ends_with(opt.out, ".npy");
  if (!npy && type != DType::f32) {
    throw InvalidArgument("matmul.dat holds f32 only; use a .npy output for " + opt.type);
  }
  if (npy && !*type_info(type).npy)
    throw InvalidArgument(".npy has no type for " + opt.type + "; use f32, f64, i32, f16 or i8");
  if (npy)
    check_outputs({{"-o (A)", npy_part(opt.out, "a")},
                   {"-o (B)", npy_part(opt.out, "b")},
                   {"-o (C)", npy_part(opt.out, "c")}},
                  {});
  else
    check_outputs({{"-o", opt.out}}, {});
  MatmulData d = make_matmul_data(opt.m, opt.k, opt.n, opt.seed, type);
  if (npy) {
    write_npy(npy_part(opt.out, "a"), d.a);
    write_npy(npy_part(opt.out, "b"), d.b);
    write_npy(npy_part(opt.out, "c"), d.c);
    std::cout << "wrote " << npy_part(opt.out, "a") << ", " << npy_part(opt.out, "b") << ", "
              << npy_part(opt.out, "c");
  } else {
    write_matmul_dat(opt.out, d.a, d.b, d.c);
    std::cout << "wrote " << opt.out;
  }
  std::cout << ": m=" << opt.m << " p=" << opt.k << " n=" << opt.n << " " << to_string(type)
            << " (A " << opt.m << "x" << opt.k << ", B " << opt.k << "x" << opt.n << ", C = A*B "
            << opt.m << "x" << opt.n << ", seed " << opt.seed << ")\n";
  return kExitOk;
}

}  // namespace

Run setup_gen(CLI::App& sub) {
  auto opt = std::make_shared<GenCli>();
  sub.footer(
      "Writes the lecture's matmul.dat: int32 m, p, n, then A (m x p), B (p x n) and C = A*B\n"
      "(m x n), float32 row-major, C accumulated in float64. When FILE ends in .npy, writes\n"
      "three NumPy files instead: FILE_a.npy, FILE_b.npy, FILE_c.npy (e.g. prob.npy ->\n"
      "prob_a.npy, prob_b.npy, prob_c.npy), of --type. Files are written whole or not at all\n"
      "(a temporary renamed when complete); the output paths are checked before generating.");
  int_option(sub, "M", opt->m, 1, kMaxDim, "Rows of A and C (the lecture's m)")->required();
  int_option(sub, "K", opt->k, 1, kMaxDim, "Columns of A, rows of B (the lecture's p)")->required();
  int_option(sub, "N", opt->n, 1, kMaxDim, "Columns of B and C (the lecture's n)")->required();
  sub.add_option("-o,--output", opt->out, "Output file (matmul.dat format, or .npy)")->required();
  seed_option(sub, opt->seed, "Random seed (0 .. 2^63-1)");
  sub.add_option("--type", opt->type, "Element type for .npy output: f32, f64, i32, f16, i8")
      ->capture_default_str();
  return [opt] { return run_gen(*opt); };
}

}  // namespace kafel::cli
