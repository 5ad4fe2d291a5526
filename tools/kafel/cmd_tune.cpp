// `kafel tune`: searches each tunable kernel's parameters on one device (every candidate
// verified, then timed) and stores the best per device + driver, roles and size class.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli_util.hpp"
#include "commands.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"
#include "kafel/tune.hpp"

namespace kafel::cli {

namespace {

struct TuneCli {
  std::string device, kernels, sizes = "1024", types = "f32", compute, db;
  double budget = 60;
  int repetitions = 3;
  std::uint64_t seed = 1;
};

std::string size_text(const GemmSize& s) {
  return s.m == s.n && s.n == s.k
             ? std::to_string(s.m)
             : std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

int run_tune(const TuneCli& o) {
  check_environment();
  const Device dev = select_device(o.device);
  TuneOptions opt;
  opt.kernels = split_list(o.kernels);
  opt.sizes = parse_sizes(o.sizes);
  opt.types = parse_roles(o.types, o.compute, "--types");
  opt.budget_s = o.budget;
  opt.repetitions = o.repetitions;
  opt.db_path = o.db.empty() ? default_tuning_db_path() : o.db;
  if (o.db.empty()) {  // the default database's directory is created on first use
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::path(opt.db_path).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  }
  check_outputs({{"--db", opt.db_path}}, {});  // before the search, not after it
  opt.seed = o.seed;
  opt.progress = [](const std::string& line) { std::cerr << "tune: " << line << '\n'; };
  std::cerr << "tune: " << dev.id << " (" << dev.name << "), budget " << format_num("%g", o.budget)
            << " s, database " << opt.db_path << '\n';
  // The database is merged under a lock file (<db>.lock), so tuners sharing it keep every entry.
  const auto results = tune(dev, opt);
  std::cout << "kernel             type       size        default GFLOP/s  tuned GFLOP/s  "
               "speedup  tried  failed  parameters\n";
  for (const auto& r : results) {
    char line[320];
    std::snprintf(line, sizeof line, "%-18s %-10s %-11s %15.1f  %13.1f  %6.2fx  %5d  %6d  ",
                  r.kernel.c_str(), r.types.name().c_str(), size_text(r.size).c_str(),
                  r.default_gflops, r.best_gflops,
                  r.default_gflops > 0 ? r.best_gflops / r.default_gflops : 0.0, r.tried, r.failed);
    std::string params = r.best.empty() ? r.note : gemm_kernel(dev, r.kernel).params.format(r.best);
    if (r.kept_start) params = "the kernel's own choice (stored as such): " + params;
    std::cout << line << params << '\n';
  }
  return kExitOk;
}

}  // namespace

Run setup_tune(CLI::App& sub) {
  auto o = std::make_shared<TuneCli>();
  sub.footer(
      "Every candidate is checked against the kernel's parameter ranges, verified, then timed.\n"
      "The database is written atomically and merged under a lock file (<db>.lock), so several\n"
      "tuners may share it; its path is checked before the search starts.");
  sub.add_option("--device,-d", o->device, "Device (cpu, opencl:P:D, cuda:N, a name substring)");
  sub.add_option("--kernels", o->kernels,
                 "Comma-separated kernels (default: every tunable kernel of the device)");
  sub.add_option("--sizes", o->sizes, "Comma-separated sizes: N (cube) or MxNxK (default 1024)");
  sub.add_option("--types", o->types, "Comma-separated storage types or roles (default f32)");
  sub.add_option("--compute", o->compute, "Compute mode for every type (default: natural)");
  number_option(sub, "--budget", o->budget, 0, 1e7, true,
                "Seconds for the whole search (default 60)");
  int_option(sub, "--reps", o->repetitions, 1, 1000,
             "Timed runs per candidate (median; default 3)");
  sub.add_option("--db", o->db,
                 "Tuning database (default $KAFEL_TUNE_DB or ~/.local/share/kafel/tuning.json)");
  seed_option(sub, o->seed, "Random seed of the search and the inputs (0 .. 2^63-1)");
  return [o] { return run_tune(*o); };
}

}  // namespace kafel::cli
