// The parameter search (see kafel/tune.hpp). Every candidate goes through the benchmark
// harness (bench_gemm: verified with the element roles' rounding, then timed), so a fast but
// wrong configuration can never enter the database.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <set>
#include <tuple>

#include "core/backend.hpp"
#include "core/tuning_db.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"
#include "kafel/tune.hpp"

namespace kafel {
namespace {

using Clock = std::chrono::steady_clock;

// Starting points measured on real devices (docs/BENCHMARKS.md), tried right after the
// defaults so a short budget starts from a known-good configuration on either kind of device.
std::vector<Params> seed_points(const std::string& kernel) {
  if (kernel != "ocl.reg") return {};
  return {
      // PoCL on a 2-core AVX-512 CPU: no barriers, 16-wide accumulators, per-tile panels.
      {{"MWG", 32},
       {"NWG", 64},
       {"KWG", 8},
       {"MDIMC", 8},
       {"NDIMC", 4},
       {"VWM", 4},
       {"VWN", 16},
       {"SA", 0},
       {"SB", 0},
       {"PK", 1}},
      // NVIDIA H200 at 4096: A staged in local memory, B through L1, 16x4 outputs per item.
      {{"MWG", 32},
       {"NWG", 64},
       {"KWG", 16},
       {"MDIMC", 2},
       {"NDIMC", 16},
       {"VWM", 4},
       {"VWN", 4},
       {"SA", 1},
       {"SB", 0},
       {"PK", 1}},
      // NVIDIA H200 at 1024.
      {{"MWG", 128},
       {"NWG", 64},
       {"KWG", 32},
       {"MDIMC", 16},
       {"NDIMC", 16},
       {"VWM", 4},
       {"VWN", 4},
       {"SA", 1},
       {"SB", 1},
       {"PK", 0}},
  };
}

// Candidates one step away from `p` in one parameter's candidate list. A value between
// candidates (a heuristic's split count of 33, say) steps to the nearest candidate on each side.
std::vector<Params> neighbours(const ParamSpace& space, const Params& p) {
  std::vector<Params> out;
  for (const auto& d : space.params) {
    if (d.candidates.empty()) continue;
    std::vector<std::int64_t> sorted = d.candidates;
    std::sort(sorted.begin(), sorted.end());
    const std::int64_t v = p.at(d.name);
    const auto above = std::upper_bound(sorted.begin(), sorted.end(), v);
    const auto at_or_below = std::upper_bound(sorted.begin(), sorted.end(), v - 1);
    std::vector<std::int64_t> steps;
    if (at_or_below != sorted.begin()) steps.push_back(*(at_or_below - 1));
    if (above != sorted.end()) steps.push_back(*above);
    for (const std::int64_t nb : steps) {
      Params q = p;
      q[d.name] = nb;
      if (space.check(q).empty()) out.push_back(q);
    }
  }
  return out;
}

class Search {
 public:
  Search(const Device& dev, const GemmKernel& k, const GemmDesc& desc, const TuneOptions& opt,
         Clock::time_point deadline, TuneResult& r)
      : dev_(dev), k_(k), desc_(desc), opt_(opt), deadline_(deadline), r_(r) {}

  // Verifies and times `params` with `reps` timed runs.
  BenchRecord measure(const Params& params, int reps) {
    BenchOptions bo;
    bo.warmup = 1;
    bo.reps = reps;
    bo.seed = opt_.seed;
    bo.rotate = false;
    bo.overrides = params;
    return bench_gemm(dev_, k_.name, desc_, bo);
  }
  double gflops(const Params& params, int reps) {
    const BenchRecord rec = measure(params, reps);
    return rec.ok() ? rec.gflops : 0.0;
  }
  // Tries `params` once (remembered); true when it became the best.
  bool trial(const Params& params) {
    if (seen_.count(params)) return false;
    seen_.insert(params);
    const BenchRecord rec = measure(params, opt_.repetitions);
    ++r_.tried;
    if (!rec.ok()) {
      ++r_.failed;
      report("not run: " + k_.params.format(params) + ": " + rec.error);
      return false;
    }
    if (rec.gflops <= r_.best_gflops) return false;
    r_.best_gflops = rec.gflops;
    r_.best = params;
    report("new best " + format_num("%.1f", rec.gflops) + " GFLOP/s: " + k_.params.format(params));
    return true;
  }
  // Walks from the best to its first better neighbour, again and again, until none is better
  // or `until` has passed.
  void climb(Clock::time_point until) {
    bool improved = true;
    while (improved && Clock::now() < until && !r_.best.empty()) {
      improved = false;
      for (const auto& q : neighbours(k_.params, r_.best)) {
        if (Clock::now() >= until) break;
        if (trial(q)) {
          improved = true;
          break;
        }
      }
    }
  }
  bool time_left() const { return Clock::now() < deadline_; }
  void report(const std::string& s) const {
    if (opt_.progress)
      opt_.progress(k_.name + " " + desc_.types.name() + " " + std::to_string(desc_.m) + "x" +
                    std::to_string(desc_.n) + "x" + std::to_string(desc_.k) + ": " + s);
  }

 private:
  const Device& dev_;
  const GemmKernel& k_;
  GemmDesc desc_;
  const TuneOptions& opt_;
  Clock::time_point deadline_;
  TuneResult& r_;
  std::set<Params> seen_;
};

// A winner must beat the kernel's own choice by this much in the confirming runs: the search
// keeps the fastest of many noisy medians, which flatters whoever won it.
constexpr double kConfirmMargin = 1.01;

TuneResult tune_one(const Device& dev, const GemmKernel& k, const GemmTypes& t, GemmSize size,
                    const TuneOptions& opt, Clock::time_point deadline) {
  TuneResult r;
  r.kernel = k.name;
  r.types = t;
  r.size = size;
  const GemmDesc desc{size.m, size.n, size.k, Op::N, Op::N, 1.0, 0.0, t};
  Search s(dev, k, desc, opt, deadline, r);
  // The search starts from what the library runs without a database, so that is what a stored
  // entry has to beat.
  const Params start = heuristic_params(k, dev, desc);
  s.trial(start);
  r.default_gflops = r.best_gflops;
  for (const auto& q : seed_points(k.name))
    if (k.params.check(q).empty()) s.trial(q);
  auto space = k.params.enumerate();
  r.space = int(space.size());
  std::mt19937_64 rng(opt.seed);
  std::shuffle(space.begin(), space.end(), rng);
  s.report(std::to_string(space.size()) + " candidates");
  // Neighbours of the start first (a good heuristic is near the best), then random samples,
  // which cover a large space evenly, then neighbours of the best again, then the rest.
  const auto now = Clock::now();
  s.climb(now + (deadline - now) / 2);
  const auto three_quarters = now + (deadline - now) * 3 / 4;
  std::size_t sampled = 0;
  for (; sampled < space.size() && Clock::now() < three_quarters; ++sampled)
    s.trial(space[sampled]);
  s.climb(deadline);
  for (; sampled < space.size() && s.time_left(); ++sampled) s.trial(space[sampled]);
  if (r.best.empty()) return r;
  if (r.best == start) {
    r.kept_start = true;
    return r;
  }
  // Confirms the winner against the start, alternating, with more runs each (outside the
  // budget: it is what decides what is stored).
  const int reps = std::max(10, 3 * opt.repetitions);
  double start_gflops = 0, best_gflops = 0;
  for (int round = 0; round < 2; ++round) {
    start_gflops = std::max(start_gflops, s.gflops(start, reps));
    best_gflops = std::max(best_gflops, s.gflops(r.best, reps));
  }
  s.report("confirming: " + format_num("%.1f", best_gflops) + " vs the kernel's own choice " +
           format_num("%.1f", start_gflops) + " GFLOP/s");
  if (start_gflops > 0 && best_gflops < kConfirmMargin * start_gflops) {
    r.kept_start = true;
    r.best = start;
    r.best_gflops = start_gflops;
  } else {
    r.best_gflops = best_gflops;
  }
  r.default_gflops = start_gflops;
  return r;
}

// Adds one result to the database file, merged with whatever other tuners wrote meanwhile.
void store(const Device& device, const TuneResult& r, const std::string& path) {
  const GemmDesc desc{r.size.m, r.size.n, r.size.k, Op::N, Op::N, 1, 0, r.types};
  Entry e;
  e.device = device.name;
  e.driver = device.driver;
  e.vendor = device.vendor;
  e.kernel = r.kernel;
  e.dtype = r.types.name();
  e.size_class = size_class(desc);
  if (!r.kept_start) e.params = r.best;  // else empty: the kernel's own choice stays
  e.gflops = r.best_gflops;
  e.default_gflops = r.default_gflops;
  e.shape = desc.shape();
  with_db_lock(path, [&] {
    Database db = Database::load(path);
    db.put(e);
    db.save(path);
  });
}

}  // namespace

std::string default_tuning_db_path() {
  return default_db_path();
}

std::vector<TuneResult> tune(const Device& device, const TuneOptions& opt) {
  if (!(opt.budget_s > 0) || opt.budget_s > 1e7)
    throw InvalidArgument("tune: the budget must be a positive number of seconds");
  if (opt.repetitions < 1) throw InvalidArgument("tune: repetitions must be >= 1");
  for (const auto& name : opt.kernels) find_gemm_kernel(device, name);  // unknown names throw
  std::vector<const GemmKernel*> kernels;
  for (const auto& k : kernels_for(device)) {
    const bool named =
        std::find(opt.kernels.begin(), opt.kernels.end(), k.name) != opt.kernels.end();
    if (opt.kernels.empty() ? (!k.baseline && !k.params.empty()) : named) kernels.push_back(&k);
  }
  std::vector<std::tuple<const GemmKernel*, GemmTypes, GemmSize>> tasks;
  for (auto* k : kernels)
    for (const GemmTypes& t : opt.types)
      if (k->runs(t, device).empty() && !k->params.empty())
        for (const GemmSize& n : opt.sizes) tasks.emplace_back(k, t, n);
  if (tasks.empty())
    throw InvalidArgument("tune: no tunable kernel of " + device.id +
                          " runs the requested element types");
  // The database holds one entry per kernel, roles and size class: say so when two sizes of a
  // run share a class, since the later one's result replaces the earlier one's.
  std::set<std::tuple<std::string, std::string, std::string>> classes;
  for (const auto& [k, t, n] : tasks) {
    const std::string cls = size_class(GemmDesc{n.m, n.n, n.k, Op::N, Op::N, 1, 0, t});
    if (!classes.insert({k->name, t.name(), cls}).second && opt.progress)
      opt.progress(k->name + " " + t.name() + ": several sizes of class " + cls +
                   "; the database keeps the last one's result");
  }

  const std::string path = opt.db_path.empty() ? default_db_path() : opt.db_path;
  std::error_code ec;  // the default database's directory may not exist yet
  if (std::filesystem::path(path).has_parent_path())
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  check_writable(path);  // before the search, not after it
  std::vector<TuneResult> results;
  const auto start = Clock::now();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto [k, t, n] = tasks[i];
    // Each task gets an equal share of what is left.
    const double left = opt.budget_s - std::chrono::duration<double>(Clock::now() - start).count();
    const auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                           std::max(0.0, left / double(tasks.size() - i))));
    TuneResult r = tune_one(device, *k, t, n, opt, deadline);
    if (r.best.empty())
      r.note = "no candidate passed";
    else
      store(device, r, path);
    results.push_back(r);
  }
  reload_active_database();
  return results;
}

}  // namespace kafel
