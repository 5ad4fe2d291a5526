// The covariance verify-then-time harness (bench_cov, used by `kafel cov --bench` and tests): one
// run checked against float64, then timed runs alternating with the read floor, then end to end.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "core/cov_backend.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel {
namespace {

using Clock = std::chrono::steady_clock;

void check_options(const CovBenchOptions& o) {
  auto count = [](int v, int lo, const char* what) {
    if (v < lo || v > 1000000)
      throw InvalidArgument(std::string("covariance bench: ") + what + " must be between " +
                            std::to_string(lo) + " and 1000000 (got " + std::to_string(v) + ")");
  };
  count(o.reps, 1, "reps");
  count(o.warmup, 0, "warmup");
  count(o.slow_reps, 1, "slow_reps");
  count(o.e2e_reps, 0, "e2e_reps");
  if (!(o.tolerance > 0) || !std::isfinite(o.tolerance))
    throw InvalidArgument("covariance bench: the tolerance must be a positive number");
  if (!(o.warmup_budget_ms >= 0) || !(o.slow_ms >= 0))
    throw InvalidArgument("covariance bench: time budgets must be >= 0");
}

void check_view(const SamplesView& s) {
  if (s.data == nullptr) throw InvalidArgument("covariance bench: null sample pointer");
  const std::int64_t need = s.layout == SampleLayout::Planar ? s.samples : s.channels;
  if (s.stride != 0 && s.stride < need)
    throw InvalidArgument("covariance bench: stride " + std::to_string(s.stride) + " < " +
                          std::to_string(need));
}

// The compute floor: the flops at the peak of the units the kernel's products run on (the SIMT
// f32 peak, integer samples too, unless `tensor_peak` names a tensor-core peak, `products` of
// which make one multiply-add); 0 when that is unknown.
double compute_floor_ms(const Device& dev, const std::string& tensor_peak, int products,
                        const CovDesc& d) {
  double peak = dev.peak_gflops_f32;
  if (!tensor_peak.empty()) {
    peak = 0;
    for (const auto& [name, gflops] : dev.tensor_peaks)
      if (name == tensor_peak) peak = gflops / std::max(1, products);
  }
  return peak > 0 ? d.flops() / (peak * 1e6) : 0;
}

CovBenchRecord base_record(const Device& dev, const CovDesc& d) {
  CovBenchRecord r;
  r.type = std::string(to_string(d.type));
  r.batch = d.batch;
  r.flops = d.flops();
  r.compute_floor_ms = compute_floor_ms(dev, "", 1, d);
  r.device = dev.id;
  r.device_name = dev.name;
  r.channels = d.channels;
  r.samples = d.samples;
  r.ddof = d.ddof;
  r.layout = std::string(to_string(d.layout));
  return r;
}

void set_failed(CovBenchRecord& r, const std::string& why) {
  r.status = "failed";
  r.error = why;
  r.median_ms = r.best_ms = r.spread = r.floor_ms = r.e2e_ms = r.gbs = r.gflops = 0;
}

// The plan's samples on the device: host kernels read in place, devices hold `slots` copies.
void check_fits(const Device& dev, const CovDesc& d, int slots) {
  const double bytes = double(slots) * d.min_bytes();
  if (dev.backend != "cpu" && dev.global_memory && bytes > double(dev.global_memory))
    throw OutOfMemory(std::to_string(slots) + " copies of " + d.shape() + " need " +
                      human_bytes(bytes) + " but " + dev.id + " has " +
                      human_bytes(double(dev.global_memory)));
}

double rel_err_of(CovPlan& plan, const CovDesc& d, const CovResult& ref) {
  CovMoments m;
  plan.fetch(m);
  return cov_rel_err(finalize_cov(d, m), ref);
}

// Verified run on slot 0; false (record failed) when one of our kernels misses the tolerance.
bool verified_run(CovPlan& plan, const CovDesc& d, const CovResult& ref, const CovBenchOptions& o,
                  CovBenchRecord& r, double& first_ms) {
  first_ms = plan.run(0);
  r.rel_err = rel_err_of(plan, d, ref);
  r.verified = r.rel_err <= o.tolerance;
  if (r.verified || r.baseline) return true;
  set_failed(r, "verification failed: rel_err " + format_num("%.3g", r.rel_err) + " > " +
                    format_num("%g", o.tolerance));
  return false;
}

// Kernel and read floor alternate, so both see the same machine (other work, clocks).
void timed_runs(CovPlan& plan, const CovBenchOptions& o, double first_ms, CovBenchRecord& r) {
  int slot = 1 % r.slots;
  const auto t0 = Clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  for (r.warmup = 0; r.warmup < o.warmup && elapsed() < o.warmup_budget_ms; ++r.warmup) {
    plan.run(slot);
    slot = (slot + 1) % r.slots;
  }
  const int n = first_ms > o.slow_ms ? o.slow_reps : o.reps;
  std::vector<double> t, f;
  for (int i = 0; i < n; ++i) {
    f.push_back(plan.read_floor_ms(slot));
    t.push_back(plan.run(slot));
    slot = (slot + 1) % r.slots;
  }
  r.reps = n;
  r.median_ms = median(t);
  r.best_ms = *std::min_element(t.begin(), t.end());
  r.spread = r.median_ms > 0 ? (quantile(t, 0.9) - quantile(t, 0.1)) / r.median_ms : 0;
  r.floor_ms = median(f);
}

// The samples as one tight block of every batch (what a stream buffer holds).
void copy_tight(const SamplesView& s, void* dst) {
  const std::int64_t lines = s.layout == SampleLayout::Planar ? s.channels : s.samples;
  const std::int64_t len = s.layout == SampleLayout::Planar ? s.samples : s.channels;
  const auto es = static_cast<std::int64_t>(dtype_size(s.type));
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(s.data);
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t l = 0; l < lines; ++l)
      std::memcpy(out + ((b * lines + l) * len) * es,
                  in + (b * s.tight_batch_stride() + l * s.tight_stride()) * es,
                  std::size_t(len * es));
}

// Copy in + kernel + result back for one block from pinned memory, where the plan streams.
void end_to_end(CovPlan& plan, const CovDesc& d, const SamplesView& s, const CovResult& ref,
                const CovBenchOptions& o, CovBenchRecord& r) {
  if (o.e2e_reps == 0) return;
  auto stream = plan.stream(1);
  if (!stream) return;
  copy_tight(s, stream->buffer(0));
  std::vector<double> e;
  CovMoments m;
  for (int i = 0; i < std::min(r.reps, o.e2e_reps); ++i) {
    const auto t0 = Clock::now();
    stream->submit(0);
    stream->wait(0, m);
    e.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  r.e2e_ms = median(e);
  r.e2e_rel_err = cov_rel_err(finalize_cov(d, m), ref);
  if (r.e2e_rel_err > o.tolerance && !r.baseline)
    set_failed(
        r, "end-to-end result failed verification: rel_err " + format_num("%.3g", r.e2e_rel_err));
}

void measure(const Device& dev, const CovKernel& k, const CovChoice& choice, const CovDesc& d,
             const SamplesView& s, const CovResult& ref, const CovBenchOptions& o,
             CovBenchRecord& r) {
  r.slots = o.rotate ? rotation_slots(d.min_bytes(), dev.cache_bytes) : 1;
  check_fits(dev, d, r.slots);
  auto plan = k.make_plan(dev, d, choice.params);
  r.timer = plan->timer();
  plan->load(CovArgs{d, s.data, s.tight_stride(), s.tight_batch_stride()}, r.slots);
  double first_ms = 0;
  if (!verified_run(*plan, d, ref, o, r, first_ms)) return;
  timed_runs(*plan, o, first_ms, r);
  // The last timed run must still be right (a race shows up here, not in the first run).
  const double last = rel_err_of(*plan, d, ref);
  if (last > o.tolerance && !r.baseline) {
    set_failed(r, "a timed run failed verification: rel_err " + format_num("%.3g", last));
    return;
  }
  if (const std::string units = plan->tensor_peak(); !units.empty())
    r.compute_floor_ms = compute_floor_ms(dev, units, k.products, d);
  r.copy_floor_ms = plan->copy_floor_ms();
  r.gbs = r.median_ms > 0 ? d.min_bytes() / (r.median_ms * 1e6) : 0;
  r.gflops = r.median_ms > 0 ? d.flops() / (r.median_ms * 1e6) : 0;
  r.bound = r.compute_floor_ms > r.floor_ms ? "compute" : "memory";
  r.status = "ok";
  end_to_end(*plan, d, s, ref, o, r);
  if (!r.verified)
    r.error = "baseline above tolerance: rel_err " + format_num("%.3g", r.rel_err) +
              " (reported, not enforced)";
}

}  // namespace

CovBenchRecord bench_cov(const Device& device, const std::string& kernel,
                         const SamplesView& samples, const CovBenchOptions& opt) {
  check_options(opt);
  const CovDesc desc = desc_of(samples, opt.ddof);
  desc.validate();
  check_view(samples);
  CovBenchRecord r = base_record(device, desc);
  r.kernel = kernel;
  r.params = opt.overrides;
  CovChoice choice;
  try {
    choice = choose_cov(device, desc, kernel, opt.overrides);
  } catch (const Unsupported& e) {  // unknown names and bad parameters throw on
    r.status = "skipped";
    r.error = std::string("skipped: ") + e.what();
    return r;
  }
  const CovKernel& k = find_cov_kernel(device, choice.kernel);
  r.kernel = k.name;
  r.compute_floor_ms = compute_floor_ms(device, k.tensor_peak, k.products, desc);
  r.baseline = k.baseline;
  r.params = choice.params;
  r.params_source = choice.source;
  r.config = k.params.empty() ? "(" + choice.source + ")"
                              : k.params.format(choice.params) + " (" + choice.source + ")";
  try {
    const CovResult own = opt.reference ? CovResult{} : reference_covariance(samples, opt.ddof);
    measure(device, k, choice, desc, samples, opt.reference ? *opt.reference : own, opt, r);
  } catch (const Unsupported& e) {
    r.status = "skipped";
    r.error = std::string("skipped: ") + e.what();
  } catch (const OutOfMemory& e) {
    r.status = "skipped";
    r.error = std::string("skipped: ") + e.what();
  } catch (const std::exception& e) {  // one kernel's failure must not cost the others' rows
    set_failed(r, e.what());
  }
  return r;
}

}  // namespace kafel
