// `kafel bench`: kernels x sizes x types (x parameter sweeps) on one device, each result
// verified before it is timed; table on stdout, progress on stderr, JSON/CSV files.
#include <iostream>
#include <memory>

#include "cli_util.hpp"
#include "commands.hpp"
#include "core/bench.hpp"
#include "kafel/error.hpp"

namespace kafel::cli {

namespace {

struct BenchCli {
  std::string device, kernels = "all", sizes = "256,512,1024", types = "f32", vs;
  std::vector<std::string> params;
  std::string block, grid, json, csv;
  int warmup = 10, reps = 20, threads = 0;
  std::uint64_t seed = 1;
  bool no_rotate = false;
};

struct Job {
  const GemmKernel* kernel;
  GemmDesc desc;
  Params params;
};

// Kernels named on the command line, "all" meaning every non-baseline kernel of the backend.
std::vector<const GemmKernel*> named_kernels(const Device& dev, const std::string& list,
                                             bool* all) {
  std::vector<const GemmKernel*> out;
  *all = false;
  for (const auto& name : split_list(list)) {
    if (name != "all") {
      out.push_back(&find_gemm_kernel(dev, name));
      continue;
    }
    *all = true;
    for (const auto& k : kernels_for(dev)) {
      if (!k.baseline) out.push_back(&k);
    }
  }
  if (out.empty()) throw InvalidArgument("no kernels selected (--kernels a,b or all)");
  return out;
}

Sweep make_sweep(const BenchCli& o) {
  Sweep sweep;
  for (const auto& item : o.params) add_sweep(sweep, item);
  if (!o.block.empty()) add_sweep(sweep, "block=" + o.block);
  if (!o.grid.empty()) add_sweep(sweep, "grid=" + o.grid);
  if (o.threads > 0) add_sweep(sweep, "threads=" + std::to_string(o.threads));
  return sweep;
}

void check_sweep_used(const Sweep& sweep, const std::vector<const GemmKernel*>& kernels) {
  for (const auto& [name, values] : sweep) {
    bool used = false;
    for (const auto* k : kernels) used = used || k->params.has(name);
    if (!used) throw InvalidArgument("no selected kernel has a parameter '" + name + "'");
  }
}

std::vector<Job> make_jobs(const BenchCli& o, const std::vector<const GemmKernel*>& kernels,
                           bool all, const Sweep& sweep) {
  std::vector<Job> jobs;
  for (DType type : parse_types(o.types)) {
    for (const Size3& s : parse_sizes(o.sizes)) {
      GemmDesc d{s.m, s.n, s.k, Op::N, Op::N, 1.0, 0.0, type};
      for (const auto* k : kernels) {
        if (all && !k->baseline && !k->supports(type)) continue;  // "all" means those that can
        for (const auto& p : combinations(sweep, *k)) jobs.push_back({k, d, p});
      }
    }
  }
  return jobs;
}

std::vector<BenchRecord> run_jobs(const Device& dev, const std::vector<Job>& jobs,
                                  const BenchCli& o) {
  std::vector<BenchRecord> records;
  int i = 0;
  for (const auto& job : jobs) {
    std::cerr << progress_line(++i, int(jobs.size()), job.kernel->name, job.desc, job.params)
              << std::flush;
    BenchOptions bo;
    bo.warmup = o.warmup;
    bo.reps = o.reps;
    bo.seed = o.seed;
    bo.rotate = !o.no_rotate;
    bo.overrides = job.params;
    records.push_back(bench_gemm(dev, *job.kernel, job.desc, bo));
    const BenchRecord& r = records.back();
    std::cerr << ' ' << (r.ok() ? format_num("%.2f GFLOP/s", r.gflops) : r.error) << '\n';
  }
  return records;
}

int summarize(const std::vector<BenchRecord>& records) {
  int failed = 0, unverified = 0;
  for (const auto& r : records) {
    if (!r.failed()) continue;
    ++failed;
    if (!r.verify_method.empty() && !r.verified) ++unverified;
  }
  if (failed == 0) return kExitOk;
  std::cerr << "kafel: " << failed << " of " << records.size() << " results failed (" << unverified
            << " did not pass verification)\n";
  return unverified ? kExitVerifyFailed : kExitError;
}

int run_bench(const BenchCli& o) {
  if (o.warmup < 0 || o.reps < 1) throw InvalidArgument("--warmup must be >= 0 and --reps >= 1");
  Device dev = select_device(o.device);
  bool all = false;
  auto kernels = named_kernels(dev, o.kernels, &all);
  std::vector<std::string> baselines;
  for (const auto& which : split_list(o.vs)) {
    kernels.push_back(&pick_baseline(dev, which));
    baselines.push_back(kernels.back()->name);
  }
  Sweep sweep = make_sweep(o);
  check_sweep_used(sweep, kernels);
  auto jobs = make_jobs(o, kernels, all, sweep);
  if (jobs.empty()) throw InvalidArgument("no kernel of " + dev.id + " supports the types asked");
  std::cout << "device " << dev.id << "  " << dev.name << '\n';
  auto records = run_jobs(dev, jobs, o);
  print_bench_table(std::cout, records, baselines);
  if (!o.block.empty() && !o.grid.empty()) print_param_grid(std::cout, records, "block", "grid");
  if (!o.json.empty()) write_bench_json(o.json, records, &dev);
  if (!o.csv.empty()) write_bench_csv(o.csv, records);
  return summarize(records);
}

}  // namespace

Run setup_bench(CLI::App& sub) {
  auto o = std::make_shared<BenchCli>();
  sub.footer(
      "Every result is verified (full reference, or Freivalds' check for large sizes) before\n"
      "it is timed: warm-up runs, then timed runs rotating operand copies when they fit in\n"
      "cache; median and best time, GFLOP/s and % of the device's peak.\n"
      "--param NAME=v1,v2 sweeps a kernel parameter (repeatable; 'TS=8,16,WPT=4,8' sweeps\n"
      "both); kernels without that parameter run once. --block/--grid are --param block=/grid=\n"
      "and, given together, also print the block x grid GFLOP/s table.\n"
      "Exit codes: 0 all verified, 1 error, 2 usage, 3 a result failed verification.");
  sub.add_option("--device", o->device, "cpu, opencl:P:D, cuda:N or a name substring");
  sub.add_option("--kernels", o->kernels, "Comma list of kernel names, or all")
      ->capture_default_str();
  sub.add_option("--sizes", o->sizes, "Comma list of N (N x N x N) or MxNxK")
      ->capture_default_str();
  sub.add_option("--types", o->types, "Comma list of f32, f64, i32, f16")->capture_default_str();
  sub.add_option("--vs", o->vs, "Baselines to compare with: openblas, cublas, clblast");
  sub.add_option("--warmup", o->warmup, "Warm-up runs (capped at about 1 s)")
      ->capture_default_str();
  sub.add_option("--reps", o->reps, "Timed runs")->capture_default_str();
  sub.add_option("--param", o->params, "Parameter sweep NAME=v1,v2 (repeatable)")
      ->allow_extra_args(false);
  sub.add_option("--block", o->block, "Block sizes to sweep (sugar for --param block=LIST)");
  sub.add_option("--grid", o->grid, "Grid sizes to sweep (sugar for --param grid=LIST)");
  sub.add_option("--threads", o->threads, "Threads, for kernels with a 'threads' parameter");
  sub.add_option("--seed", o->seed, "Random seed for the operands")->capture_default_str();
  sub.add_flag("--no-rotate", o->no_rotate, "Do not rotate operand copies between runs");
  sub.add_option("--json", o->json, "Write the records as JSON");
  sub.add_option("--csv", o->csv, "Write the records as CSV");
  return [o] { return run_bench(*o); };
}

}  // namespace kafel::cli
