// `kafel tune`: searches each tunable kernel's parameters on one device (every candidate
// verified, then timed) and stores the best per device + driver and size class in the database.
#include <iostream>

#include "cli_util.hpp"
#include "commands.hpp"
#include "kafel/error.hpp"
#include "tune/tuner.hpp"

namespace kafel::cli {

namespace {

struct TuneCli {
  std::string device, kernels, sizes = "1024", types = "f32", db;
  double budget = 60;
  int repetitions = 3;
  std::uint64_t seed = 1;
};

int run_tune(const TuneCli& o) {
  const Device dev = select_device(o.device);
  tune::TuneOptions opt;
  opt.kernels = split_list(o.kernels);
  opt.sizes.clear();
  for (const auto& s : parse_sizes(o.sizes)) {
    if (s.m != s.n || s.n != s.k)
      throw InvalidArgument("tune: sizes are cubes (e.g. 1024), not " + std::to_string(s.m) + "x" +
                            std::to_string(s.n) + "x" + std::to_string(s.k));
    opt.sizes.push_back(s.m);
  }
  opt.types = parse_types(o.types);
  if (o.budget <= 0) throw InvalidArgument("--budget must be positive");
  opt.budget_s = o.budget;
  opt.repetitions = std::max(1, o.repetitions);
  opt.db_path = o.db.empty() ? tune::default_db_path() : o.db;
  opt.seed = o.seed;
  opt.progress = [](const std::string& line) { std::cerr << "tune: " << line << '\n'; };
  std::cerr << "tune: " << dev.id << " (" << dev.name << "), budget " << o.budget << " s, database "
            << opt.db_path << '\n';
  const auto results = tune::tune(dev, opt);
  std::cout << "kernel           type  size    default GFLOP/s  tuned GFLOP/s  speedup  tried  "
               "failed  parameters\n";
  for (const auto& r : results) {
    char line[256];
    std::snprintf(line, sizeof line, "%-16s %-5s %-7lld %15.1f  %13.1f  %6.2fx  %5d  %6d  ",
                  r.kernel.c_str(), std::string(to_string(r.dtype)).c_str(),
                  static_cast<long long>(r.size), r.default_gflops, r.best_gflops,
                  r.default_gflops > 0 ? r.best_gflops / r.default_gflops : 0.0, r.tried, r.failed);
    std::cout << line << (r.best.empty() ? r.note : format_params(r.best)) << '\n';
  }
  return kExitOk;
}

}  // namespace

Run setup_tune(CLI::App& sub) {
  auto o = std::make_shared<TuneCli>();
  sub.add_option("--device,-d", o->device, "Device (cpu, opencl:P:D, cuda:N, a name substring)");
  sub.add_option("--kernels", o->kernels,
                 "Comma-separated kernels (default: every tunable kernel of the device)");
  sub.add_option("--sizes", o->sizes, "Comma-separated cube sizes (default 1024)");
  sub.add_option("--types", o->types, "Comma-separated element types (default f32)");
  sub.add_option("--budget", o->budget, "Seconds for the whole search (default 60)");
  sub.add_option("--reps", o->repetitions, "Timed runs per candidate (median; default 3)");
  sub.add_option("--db", o->db,
                 "Tuning database (default $KAFEL_TUNE_DB or ~/.local/share/kafel/tuning.json)");
  sub.add_option("--seed", o->seed, "Random seed of the search and the inputs");
  return [o] { return run_tune(*o); };
}

}  // namespace kafel::cli
