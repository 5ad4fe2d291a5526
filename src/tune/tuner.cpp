// The parameter search (see tuner.hpp). Every candidate is verified before it is timed, so a
// fast but wrong configuration can never enter the database.
#include "tune/tuner.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <tuple>

#include "core/report_util.hpp"
#include "kafel/error.hpp"
#include "kafel/matrix.hpp"

namespace kafel::tune {
namespace {

using Clock = std::chrono::steady_clock;

struct Problem {
  GemmDesc desc;
  Matrix a, b, c0, c;
  GemmArgs args;
};

Problem make_problem(DType t, std::int64_t n, std::uint64_t seed) {
  Problem p;
  p.desc = GemmDesc{n, n, n, Op::N, Op::N, 1.0, 0.0, t};
  p.a = Matrix(t, n, n);
  p.b = Matrix(t, n, n);
  p.c0 = Matrix(t, n, n);
  std::mt19937_64 rng(seed);
  fill_random_normal(p.a, rng);
  fill_random_normal(p.b, rng);
  p.c = Matrix(t, n, n);
  p.args = normalize_gemm(Op::N, Op::N, 1.0, p.a, p.b, 0.0, p.c);
  return p;
}

// Median kernel time of a verified candidate in ms; < 0 when it failed (reason in `why`).
double measure(const Device& dev, const GemmKernel& k, Problem& p, const Params& params, int reps,
               std::string& why) {
  try {
    auto plan = k.make_plan(dev, p.desc, params);
    // C still holds the previous candidate's correct product: poison it so a candidate that
    // skips part of C cannot pass on its predecessor's values.
    poison(p.c);
    plan->load(p.args, 1);
    plan->run(0);
    plan->fetch();
    auto v = verify_gemm(p.desc, p.a, p.b, p.c0, p.c);
    if (!v.passed) {
      why = "wrong result: " + v.message;
      return -1;
    }
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) t.push_back(plan->run(0));
    return quantile(t, 0.5);
  } catch (const Error& e) {  // Unsupported, DeviceError (resources), BuildError, OutOfMemory
    why = e.what();
    return -1;
  }
}

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

// Candidates one step away from `p` in one parameter's candidate list.
std::vector<Params> neighbours(const ParamSpace& space, const Params& p) {
  std::vector<Params> out;
  for (const auto& d : space.params) {
    auto it = std::find(d.candidates.begin(), d.candidates.end(), p.at(d.name));
    if (it == d.candidates.end()) continue;
    for (auto nb : {it == d.candidates.begin() ? d.candidates.end() : it - 1, it + 1}) {
      if (nb == d.candidates.end()) continue;
      Params q = p;
      q[d.name] = *nb;
      if (space.check(q).empty()) out.push_back(q);
    }
  }
  return out;
}

class Search {
 public:
  Search(const Device& dev, const GemmKernel& k, Problem& p, const TuneOptions& opt,
         Clock::time_point deadline, TuneResult& r)
      : dev_(dev), k_(k), p_(p), opt_(opt), deadline_(deadline), r_(r) {}

  // Tries `params` once (remembered); true when it became the best.
  bool trial(const Params& params) {
    if (seen_.count(params)) return false;
    seen_.insert(params);
    std::string why;
    const double ms = measure(dev_, k_, p_, params, opt_.repetitions, why);
    ++r_.tried;
    if (ms <= 0) {
      ++r_.failed;
      return false;
    }
    const double gf = p_.desc.flops() / (ms * 1e6);
    if (gf <= r_.best_gflops) return false;
    r_.best_gflops = gf;
    r_.best = params;
    report("new best " + format_num("%.1f", gf) + " GFLOP/s: " + format_params(params));
    return true;
  }
  bool time_left() const { return Clock::now() < deadline_; }
  void report(const std::string& s) const {
    if (opt_.progress)
      opt_.progress(k_.name + " " + std::string(to_string(p_.desc.dtype)) + " " +
                    std::to_string(p_.desc.m) + ": " + s);
  }

 private:
  const Device& dev_;
  const GemmKernel& k_;
  Problem& p_;
  const TuneOptions& opt_;
  Clock::time_point deadline_;
  TuneResult& r_;
  std::set<Params> seen_;
};

TuneResult tune_one(const Device& dev, const GemmKernel& k, DType t, std::int64_t n,
                    const TuneOptions& opt, Clock::time_point deadline) {
  TuneResult r;
  r.kernel = k.name;
  r.dtype = t;
  r.size = n;
  Problem p = make_problem(t, n, opt.seed);
  Search s(dev, k, p, opt, deadline, r);
  const Params defaults = k.params.defaults();
  s.trial(defaults);
  r.default_gflops = r.best_gflops;
  for (const auto& q : seed_points(k.name))
    if (k.params.check(q).empty()) s.trial(q);
  auto space = k.params.enumerate();
  r.space = int(space.size());
  std::mt19937_64 rng(opt.seed);
  std::shuffle(space.begin(), space.end(), rng);
  s.report(std::to_string(space.size()) + " candidates");
  // Random order covers a large space evenly; halfway through the budget (or the space) the
  // search walks from the best to better neighbours, then goes back to sampling.
  const auto half = Clock::now() + (deadline - Clock::now()) / 2;
  std::size_t sampled = 0;
  const std::size_t sample_limit = space.size() <= 64 ? space.size() : space.size() / 2;
  for (; sampled < sample_limit && Clock::now() < half; ++sampled) s.trial(space[sampled]);
  bool improved = true;
  while (improved && s.time_left() && !r.best.empty()) {
    improved = false;
    for (const auto& q : neighbours(k.params, r.best)) {
      if (!s.time_left()) break;
      if (s.trial(q)) {
        improved = true;
        break;
      }
    }
  }
  for (; sampled < space.size() && s.time_left(); ++sampled) s.trial(space[sampled]);
  return r;
}

}  // namespace

std::vector<TuneResult> tune(const Device& device, const TuneOptions& opt) {
  std::vector<const GemmKernel*> kernels;
  for (const auto& k : kernels_for(device)) {
    const bool named =
        std::find(opt.kernels.begin(), opt.kernels.end(), k.name) != opt.kernels.end();
    if (opt.kernels.empty() ? (!k.baseline && !k.params.empty()) : named) kernels.push_back(&k);
  }
  for (const auto& name : opt.kernels) find_gemm_kernel(device, name);  // unknown names throw
  std::vector<std::tuple<const GemmKernel*, DType, std::int64_t>> tasks;
  for (auto* k : kernels)
    for (DType t : opt.types)
      if (k->supports(t) && !k->params.empty())
        for (auto n : opt.sizes) tasks.emplace_back(k, t, n);
  if (tasks.empty()) throw InvalidArgument("tune: no tunable kernel supports the requested types");

  const std::string path = opt.db_path.empty() ? default_db_path() : opt.db_path;
  Database db = Database::load(path);
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
    if (r.best.empty()) {
      r.note = "no candidate passed";
    } else {
      Entry e;
      e.device = device.name;
      e.driver = device.driver;
      e.vendor = device.vendor;
      e.kernel = k->name;
      e.dtype = std::string(to_string(t));
      e.size_class = size_class(GemmDesc{n, n, n, Op::N, Op::N, 1, 0, t});
      e.params = r.best;
      e.gflops = r.best_gflops;
      e.default_gflops = r.default_gflops;
      e.shape = GemmDesc{n, n, n, Op::N, Op::N, 1, 0, t}.shape();
      db.put(e);
      db.save(path);
    }
    results.push_back(r);
  }
  reload_active_database();
  return results;
}

}  // namespace kafel::tune
