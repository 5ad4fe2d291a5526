// `kafel bench`: kernels x sizes x element roles (x parameter sweeps) on one device, each result
// verified before it is timed; table on stdout, progress on stderr, JSON/CSV files.
#include <algorithm>
#include <iostream>
#include <memory>

#include "cli_util.hpp"
#include "commands.hpp"
#include "kafel/bench.hpp"
#include "kafel/device.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"

namespace kafel::cli {

namespace {

struct BenchCli {
  std::string device, kernels = "all", sizes = "256,512,1024", types, type, compute, vs;
  std::vector<std::string> params;
  std::string block, grid, json, csv;
  int warmup = 10, reps = 20, threads = 0;
  std::int64_t batch = 1;
  std::uint64_t seed = 1;
  bool no_rotate = false;
  std::string peak = "run";
};

struct Job {
  GemmKernelInfo kernel;
  GemmDesc desc;
  Params params;
};

// Kernels named on the command line, "all" meaning every non-baseline kernel of the backend.
// --kernels: names, "all" (every non-baseline kernel) and "default" (the one choose_gemm picks
// for each size and roles, with its shape-aware parameters; see make_jobs).
std::vector<GemmKernelInfo> named_kernels(const Device& dev, const std::string& list, bool* all,
                                          bool* by_default) {
  std::vector<GemmKernelInfo> out;
  *all = *by_default = false;
  for (const auto& name : split_list(list)) {
    if (name == "default") {
      *by_default = true;
      continue;
    }
    if (name != "all") {
      out.push_back(gemm_kernel(dev, name));
      continue;
    }
    *all = true;
    for (const auto& k : gemm_kernels(dev)) {
      if (!k.baseline) out.push_back(k);
    }
  }
  if (out.empty() && !*by_default)
    throw InvalidArgument("no kernels selected (--kernels a,b, all or default)");
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

void check_sweep_used(const Sweep& sweep, const std::vector<GemmKernelInfo>& kernels) {
  for (const auto& [name, values] : sweep) {
    bool used = false;
    for (const auto& k : kernels) used = used || k.params.has(name);
    if (!used) throw InvalidArgument("no selected kernel has a parameter '" + name + "'");
  }
}

// --type and --types together: one list of element roles.
std::vector<GemmTypes> requested_roles(const BenchCli& o) {
  std::string list = o.types;
  if (!o.type.empty()) list += (list.empty() ? "" : ",") + o.type;
  if (list.empty()) list = "f32";
  return parse_roles(list, o.compute, o.types.empty() ? "--type" : "--types");
}

std::vector<Job> make_jobs(const Device& dev, const BenchCli& o,
                           const std::vector<GemmKernelInfo>& kernels, bool all, bool by_default,
                           const Sweep& sweep) {
  const auto sizes = parse_sizes(o.sizes);
  const auto roles = requested_roles(o);
  std::vector<std::vector<Params>> per_kernel;  // sweeps checked before any job exists
  for (const auto& k : kernels) per_kernel.push_back(combinations(sweep, k));
  std::vector<Job> jobs;
  for (const GemmTypes& t : roles) {
    for (const GemmSize& s : sizes) {
      GemmDesc d{s.m, s.n, s.k, Op::N, Op::N, 1.0, 0.0, t};
      d.batch = o.batch;
      d.validate();
      if (by_default) {
        // The default choice as gemm() makes it; a problem no kernel runs is left to the rest.
        try {
          jobs.push_back({gemm_kernel(dev, choose_gemm(dev, d).kernel), d, {}});
        } catch (const Unsupported&) {
        }
      }
      for (std::size_t i = 0; i < kernels.size(); ++i) {
        const auto& k = kernels[i];
        // "all" means those that can run the roles here; a kernel named explicitly is
        // reported as skipped with its reason instead.
        if (all && !k.baseline && !k.runs(t, dev).empty()) continue;
        for (const auto& p : per_kernel[i]) jobs.push_back({k, d, p});
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
    std::cerr << progress_line(++i, int(jobs.size()), job.kernel.name, job.desc, job.params)
              << std::flush;
    BenchOptions bo;
    bo.warmup = o.warmup;
    bo.reps = o.reps;
    bo.seed = o.seed;
    bo.rotate = !o.no_rotate;
    bo.overrides = job.params;
    records.push_back(bench_gemm(dev, job.kernel.name, job.desc, bo));
    const BenchRecord& r = records.back();
    std::cerr << ' ' << (r.ok() ? format_num("%.2f GFLOP/s", r.gflops) : r.error) << '\n';
  }
  return records;
}

// --peak run: the device's peak probed at the start and at the end of the run (where its backend
// has a probe: the CPU), the higher figure of each kind kept, every record's "% peak" against it.
// The higher one, because a probe slowed by a neighbour would flatter every record.
class RunPeak {
 public:
  RunPeak(Device& dev, bool wanted) : dev_(dev), cached_(dev) {
    probed_ = wanted && probe_peak(dev_);
  }

  void finish(const std::vector<Job>& jobs, std::vector<BenchRecord>& records) {
    if (!probed_) return;
    Device end = cached_;
    if (probe_peak(end)) {
      // Both probes stay in the device's details (its JSON); the peak fields keep the higher.
      dev_.details.emplace_back(end.details.back().first + " at the end",
                                end.details.back().second);
      dev_.peak_gflops_f32 = std::max(dev_.peak_gflops_f32, end.peak_gflops_f32);
      dev_.peak_gflops_f64 = std::max(dev_.peak_gflops_f64, end.peak_gflops_f64);
      for (auto& [name, value] : dev_.tensor_peaks)
        for (const auto& [end_name, end_value] : end.tensor_peaks)
          if (name == end_name) value = std::max(value, end_value);
    }
    for (std::size_t i = 0; i < records.size() && i < jobs.size(); ++i) {
      BenchRecord& r = records[i];
      if (!r.ok()) continue;
      r.peak_gflops = dev_.peak_gflops(jobs[i].desc.types);
      r.peak_pct = peak_share(r.gflops, r.peak_gflops);
    }
  }

  // One line on what "% peak" compares with.
  void print(std::ostream& os) const {
    if (!probed_) return;
    os << "peak   " << format_num("f32 %.1f", dev_.peak_gflops_f32)
       << format_num(", f64 %.1f GFLOP/s", dev_.peak_gflops_f64)
       << " probed in this run (the higher of its start and end; cached by `kafel devices`: "
       << format_num("f32 %.1f", cached_.peak_gflops_f32)
       << format_num(", f64 %.1f", cached_.peak_gflops_f64) << ")\n";
  }

 private:
  Device& dev_;
  const Device cached_;
  bool probed_ = false;
};

int summarize(const std::vector<BenchRecord>& records) {
  int failed = 0, unverified = 0, ok = 0;
  const BenchRecord* first_skip = nullptr;
  for (const auto& r : records) {
    ok += r.ok();
    if (!r.ok() && !r.failed() && !first_skip) first_skip = &r;
    if (!r.failed()) continue;
    ++failed;
    if (!r.verify_method.empty() && !r.verified) ++unverified;
  }
  if (failed == 0 && ok == 0) {
    std::cerr << "kafel: error: every case was skipped, nothing was measured"
              << (first_skip ? " (first: " + first_skip->kernel + ": " + first_skip->error + ")"
                             : std::string())
              << '\n';
    return kExitError;
  }
  if (failed == 0) return kExitOk;
  std::cerr << "kafel: " << failed << " of " << records.size() << " results failed (" << unverified
            << " did not pass verification)\n";
  return unverified ? kExitVerifyFailed : kExitError;
}

int run_bench(const BenchCli& o) {
  check_environment();
  check_outputs({{"--json", o.json}, {"--csv", o.csv}}, {});
  Device dev = select_device(o.device);
  bool all = false, by_default = false;
  auto kernels = named_kernels(dev, o.kernels, &all, &by_default);
  std::vector<std::string> baselines;
  for (const auto& which : split_list(o.vs)) {
    baselines.push_back(pick_baseline(dev, which));
    kernels.push_back(gemm_kernel(dev, baselines.back()));
    if (!kernels.back().caveat.empty())
      std::cerr << "kafel: warning: " << kernels.back().caveat << '\n';
  }
  Sweep sweep = make_sweep(o);
  check_sweep_used(sweep, kernels);
  auto jobs = make_jobs(dev, o, kernels, all, by_default, sweep);
  if (jobs.empty()) throw InvalidArgument("no kernel of " + dev.id + " runs the types asked");
  std::cout << "device " << dev.id << "  " << dev.name << '\n';
  RunPeak peak(dev, o.peak == "run");
  auto records = run_jobs(dev, jobs, o);
  peak.finish(jobs, records);
  peak.print(std::cout);
  print_bench_table(std::cout, records, baselines);
  if (!o.block.empty() && !o.grid.empty()) print_param_grid(std::cout, records, "block", "grid");
  const int code = summarize(records);
  // Result files only for a run whose every measured case verified: a failure writes nothing.
  if (code == kExitOk && !o.json.empty()) write_bench_json(o.json, records, &dev);
  if (code == kExitOk && !o.csv.empty()) write_bench_csv(o.csv, records);
  return code;
}

}  // namespace

Run setup_bench(CLI::App& sub) {
  auto o = std::make_shared<BenchCli>();
  sub.footer(
      "Every result is verified (full reference, or Freivalds' check for large sizes) before\n"
      "it is timed: warm-up runs, then timed runs rotating operand copies when they fit in\n"
      "cache; median and best time, GFLOP/s and % of the device's peak estimate ('-' when the\n"
      "estimate is below the measurement). On the CPU the peak is probed at the start and the\n"
      "end of the run (--peak run, the higher figure counts); --peak cached uses the figure\n"
      "`kafel devices` shows.\n"
      "--type/--types take storage types or roles (f32, bf16->f32, f32/tf32, i8); --compute\n"
      "sets the mode of each (default: the natural one).\n"
      "--param NAME=v1,v2 sweeps a kernel parameter (repeatable; 'TS=8,16,WPT=4,8' sweeps\n"
      "both); every value is checked against the kernel's range before anything runs; kernels\n"
      "without that parameter run once. --block/--grid are --param block=/grid= and, given\n"
      "together, also print the block x grid GFLOP/s table.\n"
      "Exit codes: 0 all verified, 1 error or every case skipped, 2 usage, 3 a result failed\n"
      "verification.");
  sub.add_option("--device", o->device, "cpu, opencl:P:D, cuda:N or a name substring");
  sub.add_option("--kernels", o->kernels,
                 "Comma list of kernel names, all, or default (the kernel and parameters the "
                 "library picks for each size)")
      ->capture_default_str();
  sub.add_option("--sizes", o->sizes, "Comma list of N (N x N x N) or MxNxK")
      ->capture_default_str();
  sub.add_option("--types", o->types, "Comma list of storage types or roles (default f32)");
  sub.add_option("--type", o->type, "One storage type or roles (joins --types)");
  int_option(sub, "--batch", o->batch, 1, kMaxCount,
             "Independent products of each size (batched GEMM, strided; all are verified)");
  sub.add_option("--compute", o->compute, "Compute mode for every type: f32 f64 i32 tf32 3xtf32");
  sub.add_option("--vs", o->vs,
                 "Baselines to compare with: openblas, mkl (if installed), cublas, clblast");
  int_option(sub, "--warmup", o->warmup, 0, kMaxCount, "Warm-up runs (capped at about 1 s)");
  int_option(sub, "--reps", o->reps, 1, kMaxCount, "Timed runs");
  sub.add_option("--param", o->params, "Parameter sweep NAME=v1,v2 (repeatable)")
      ->allow_extra_args(false);
  sub.add_option("--block", o->block, "Block sizes to sweep (sugar for --param block=LIST)");
  sub.add_option("--grid", o->grid, "Grid sizes to sweep (sugar for --param grid=LIST)");
  int_option(sub, "--threads", o->threads, 0, 1024,
             "Threads, for kernels with a 'threads' parameter (0: default)");
  seed_option(sub, o->seed, "Random seed for the operands (0 .. 2^63-1)");
  sub.add_flag("--no-rotate", o->no_rotate, "Do not rotate operand copies between runs");
  sub.add_option("--peak", o->peak,
                 "run: the CPU's peak probed during this run; cached: `kafel devices`' figure")
      ->check(CLI::IsMember({"run", "cached"}))
      ->capture_default_str();
  sub.add_option("--json", o->json, "Write the records as JSON");
  sub.add_option("--csv", o->csv, "Write the records as CSV");
  return [o] { return run_bench(*o); };
}

}  // namespace kafel::cli
