// `kafel cov`: covariance of one block or a stream of blocks (generator, .npy, raw file,
// stdin) with latency statistics and the deadline check; `--bench` measures against floors.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "commands.hpp"
#include "core/cov_backend.hpp"
#include "core/cov_stream.hpp"
#include "core/report_util.hpp"
#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"
#include "kafel/signal.hpp"

namespace kafel::cli {

namespace {

constexpr double kTolerance = 1e-6;

struct CovCli {
  std::string device, kernel, params, signal = "seed", layout = "planar", input, out, json;
  std::int64_t channels = 10, samples = 4194304, blocks = 1, ddof = 1;
  double rate = 0, deadline_ms = 0;
  int depth = 3, reps = 20;
  std::uint64_t seed = 1;
  bool verify = false, bench = false;
};

struct Setup {
  Device dev;
  CovDesc desc;
  const CovKernel* kernel = nullptr;
  Params params;
};

Setup make_setup(const CovCli& o, std::int64_t samples) {
  Setup s;
  s.dev = o.device.empty() ? best_device() : select_device(o.device);
  s.desc = CovDesc{o.channels, samples, parse_sample_layout(o.layout), o.ddof};
  s.desc.validate();
  const std::string name = o.kernel.empty() ? default_cov_kernel(s.dev, o.channels) : o.kernel;
  s.kernel = &find_cov_kernel(s.dev, name);
  s.params = s.kernel->params.resolve(o.params.empty() ? Params{} : parse_params(o.params));
  return s;
}

// A block source: the generator (static buffers), a raw float32 file / stdin, or a .npy file
// holding all blocks (C x total planar, total x C interleaved).
struct Source {
  CovBlockSource src;
  std::string what;
  std::shared_ptr<void> keep;  // whatever the fill function reads from
};

Source generator_source(const CovCli& o, const CovDesc& d) {
  const SignalKind kind = parse_signal(o.signal);
  Source s;
  s.what = "generated " + std::string(to_string(kind)) + " signal";
  s.src.static_buffers = true;
  s.src.fill = [kind, d, seed = o.seed](std::int64_t b, float* buf) {
    generate_signal(kind, buf, d.channels, d.samples, d.layout, seed + std::uint64_t(b));
    return true;
  };
  return s;
}

Source npy_source(const CovCli& o, const CovDesc& d) {
  NpyHeader h;
  auto m = std::make_shared<Matrix>(read_npy(o.input, &h));
  if (m->dtype() != DType::f32) {
    Matrix f(DType::f32, m->rows(), m->cols());
    copy(m->view(), f.view());
    *m = std::move(f);
  }
  const bool planar = d.layout == SampleLayout::Planar;
  const std::int64_t ch = planar ? m->rows() : m->cols();
  if (ch != d.channels)
    throw InvalidArgument(o.input + " holds " + std::to_string(ch) + " channels (shape " +
                          std::to_string(m->rows()) + "x" + std::to_string(m->cols()) +
                          ") but --channels is " + std::to_string(d.channels) + " (" +
                          std::string(to_string(d.layout)) + ")");
  const std::int64_t total = planar ? m->cols() : m->rows();
  Source s;
  s.what = o.input;
  s.keep = m;
  s.src.fill = [m, d, total, planar](std::int64_t b, float* buf) {
    if ((b + 1) * d.samples > total) return false;
    for (std::int64_t c = 0; c < (planar ? d.channels : 1); ++c)
      for (std::int64_t n = 0; n < d.samples; ++n)
        for (std::int64_t k = 0; k < (planar ? 1 : d.channels); ++k)
          buf[planar ? c * d.samples + n : n * d.channels + k] =
              planar ? m->get(c, b * d.samples + n) : m->get(b * d.samples + n, k);
    return true;
  };
  return s;
}

Source raw_source(const CovCli& o, const CovDesc& d) {
  auto stream = std::make_shared<SampleStream>(o.input, d.channels, d.samples, d.layout);
  auto block = std::make_shared<Matrix>();
  Source s;
  s.what = o.input == "-" ? "stdin" : o.input;
  s.keep = stream;
  s.src.fill = [stream, block, d](std::int64_t, float* buf) {
    if (!stream->next(*block)) return false;
    if (block->cols() != d.samples)  // a short last block: report it rather than guess
      throw InvalidArgument("the stream ends with a partial block of " +
                            std::to_string(block->cols()) + " samples (blocks hold " +
                            std::to_string(d.samples) + "); use --samples to match the data");
    std::memcpy(buf, block->data(), static_cast<std::size_t>(d.channels * d.samples) * 4);
    return true;
  };
  return s;
}

Source make_source(const CovCli& o, const CovDesc& d) {
  if (o.input.empty()) return generator_source(o, d);
  if (ends_with(o.input, ".npy")) return npy_source(o, d);
  return raw_source(o, d);
}

// Block samples of an input file: --samples, or (for .npy / raw files) the whole file when
// --blocks is 1 and --samples was not given.
std::int64_t block_samples(const CovCli& o, bool samples_given) {
  if (o.input.empty() || o.input == "-" || samples_given) return o.samples;
  if (ends_with(o.input, ".npy")) {
    const NpyHeader h = read_npy_header(o.input);
    const bool planar = parse_sample_layout(o.layout) == SampleLayout::Planar;
    if (h.shape.size() != 2) throw InvalidArgument(o.input + " is not a 2-D array");
    return (planar ? h.shape[1] : h.shape[0]) / std::max<std::int64_t>(o.blocks, 1);
  }
  std::ifstream f(o.input, std::ios::binary | std::ios::ate);
  if (!f) throw IoError("cannot open " + o.input);
  const auto bytes = static_cast<std::int64_t>(f.tellg());
  if (bytes == 0) throw InvalidArgument(o.input + " is empty");
  if (bytes % 4 != 0 || (bytes / 4) % o.channels != 0)
    throw InvalidArgument(o.input + " holds " + std::to_string(bytes) +
                          " bytes, not a whole number of float32 frames of " +
                          std::to_string(o.channels) + " channels");
  return bytes / 4 / o.channels / std::max<std::int64_t>(o.blocks, 1);
}

std::string fmt(double v, const char* f = "%.3f") {
  return format_num(f, v);
}

int run_stream(const CovCli& o, bool samples_given) {
  const Setup s = make_setup(o, block_samples(o, samples_given));
  Source source = make_source(o, s.desc);
  auto plan = s.kernel->make_plan(s.dev, s.desc, s.params);
  CovStreamOptions so;
  so.depth = o.depth;
  so.rate = o.rate;
  so.deadline_ms = o.deadline_ms > 0 ? o.deadline_ms : (o.rate > 0 ? 1000.0 / o.rate : 50.0);
  double rel_err = 0;
  std::int64_t verified = 0, nan_entries = 0;
  std::map<const float*, CovResult> refs;  // static buffers: one reference per buffer
  CovResult last;
  auto hook = [&](std::int64_t b, const float* data, const CovResult& r) {
    nan_entries = std::max(nan_entries, r.nan_entries);
    if (b == 0 || o.verify) {
      auto it = refs.find(data);
      if (it == refs.end()) {
        const SamplesView v{data, s.desc.channels, s.desc.samples, s.desc.layout, 0};
        it = refs.emplace(data, reference_covariance(v, s.desc.ddof)).first;
      }
      rel_err = std::max(rel_err, cov_rel_err(r, it->second));
      ++verified;
      if (!source.src.static_buffers) refs.clear();
    }
    last = r;
  };
  const CovStreamStats st = run_cov_stream(*plan, s.desc, source.src, o.blocks, so, hook);
  if (st.blocks == 0)
    throw InvalidArgument("no block of " + std::to_string(s.desc.samples) + " samples in " +
                          source.what + " (empty input?)");
  if (nan_entries)
    std::cerr << "kafel: warning: NaN in the data: " << nan_entries << " of "
              << s.desc.channels * s.desc.channels << " covariance entries are NaN\n";
  if (!o.out.empty()) {
    Matrix c(DType::f64, s.desc.channels, s.desc.channels);
    std::copy(last.cov.begin(), last.cov.end(), static_cast<double*>(c.data()));
    write_npy(o.out, c.view());
  }
  const bool ok = rel_err <= kTolerance;
  const double budget = so.deadline_ms;
  std::cout << "covariance " << s.desc.shape() << " of " << source.what << " on " << s.dev.id
            << " (" << s.dev.name << "), kernel " << s.kernel->name << "\n"
            << st.blocks << " blocks" << (o.rate > 0 ? " at " + fmt(o.rate, "%g") + "/s" : "")
            << ": latency median " << fmt(st.median_ms) << " ms, p99 " << fmt(st.p99_ms)
            << " ms, worst " << fmt(st.max_ms) << " ms; " << fmt(st.blocks_per_s, "%.1f")
            << " blocks/s; missed " << st.missed << " of " << st.blocks << " deadlines ("
            << fmt(budget, "%g") << " ms)\n"
            << "budget " << fmt(budget, "%g") << " ms: "
            << (st.max_ms <= budget ? "met, worst block " + fmt(budget - st.max_ms) + " ms under"
                                    : "MISSED, worst block " + fmt(st.max_ms - budget) + " ms over")
            << "\nrel_err " << fmt(rel_err, "%.3g") << " (" << verified << " block"
            << (verified == 1 ? "" : "s") << " verified against float64; tolerance 1e-6) "
            << (ok ? "PASS" : "FAIL") << "\n";
  if (!o.json.empty()) {
    nlohmann::ordered_json j = {{"device", s.dev.id},
                                {"device_name", s.dev.name},
                                {"kernel", s.kernel->name},
                                {"channels", s.desc.channels},
                                {"samples", s.desc.samples},
                                {"layout", std::string(to_string(s.desc.layout))},
                                {"source", source.what},
                                {"blocks", st.blocks},
                                {"rate", o.rate},
                                {"deadline_ms", budget},
                                {"median_ms", st.median_ms},
                                {"p99_ms", st.p99_ms},
                                {"max_ms", st.max_ms},
                                {"blocks_per_s", st.blocks_per_s},
                                {"missed", st.missed},
                                {"rel_err", rel_err},
                                {"verified_blocks", verified},
                                {"nan_entries", nan_entries},
                                {"passed", ok}};
    write_json_file(o.json, j.dump(2));
  }
  return ok ? kExitOk : kExitVerifyFailed;
}

struct BenchRow {
  std::string kernel, status;
  bool baseline = false;
  double median_ms = 0, best_ms = 0, floor_ms = 0, e2e_ms = 0, rel_err = 0, e2e_err = 0;
};

BenchRow bench_kernel(const Setup& s, const CovKernel& k, const CovArgs& args, const CovResult& ref,
                      int reps, double& copy_floor) {
  BenchRow row{k.name, "ok", k.baseline};
  try {
    auto plan = k.make_plan(s.dev, s.desc, &k == s.kernel ? s.params : k.params.defaults());
    plan->load(args, 1);
    const double first = plan->run(0);
    const int n = first > 300 ? 2 : reps;  // the slow rungs (serial) get a couple of runs
    // Kernel and floor alternate, so both see the same machine (other work, clocks).
    std::vector<double> t, f;
    for (int r = 0; r < n; ++r) {
      f.push_back(plan->read_floor_ms(0));
      t.push_back(plan->run(0));
    }
    CovMoments m;
    plan->fetch(m);
    row.rel_err = cov_rel_err(finalize_cov(s.desc, m), ref);
    row.median_ms = quantile(t, 0.5);
    row.best_ms = *std::min_element(t.begin(), t.end());
    row.floor_ms = quantile(f, 0.5);
    if (copy_floor == 0) copy_floor = plan->copy_floor_ms();
    if (auto stream = plan->stream(1)) {  // end to end from pinned host memory, one block
      std::memcpy(stream->buffer(0), args.data, static_cast<std::size_t>(s.desc.min_bytes()));
      std::vector<double> e;
      for (int r = 0; r < std::min(n, 10); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        stream->submit(0);
        stream->wait(0, m);
        e.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count());
      }
      row.e2e_ms = quantile(e, 0.5);
      row.e2e_err = cov_rel_err(finalize_cov(s.desc, m), ref);
    }
  } catch (const Unsupported& e) {
    row.status = std::string("skipped: ") + e.what();
  } catch (const Error& e) {  // one kernel's failure must not cost the others' rows
    row.status = std::string("failed: ") + e.what();
  }
  return row;
}

int run_bench(const CovCli& o) {
  const Setup s = make_setup(o, o.samples);
  std::vector<float> data(static_cast<std::size_t>(s.desc.channels * s.desc.samples));
  generate_signal(parse_signal(o.signal), data.data(), s.desc.channels, s.desc.samples,
                  s.desc.layout, o.seed);
  const CovArgs args{s.desc, data.data(),
                     s.desc.layout == SampleLayout::Planar ? s.desc.samples : s.desc.channels};
  const SamplesView view{data.data(), s.desc.channels, s.desc.samples, s.desc.layout, 0};
  const CovResult ref = reference_covariance(view, s.desc.ddof);
  double copy_floor = 0;
  std::vector<BenchRow> rows;
  for (const auto& k : cov_kernels_for(s.dev)) {
    if (!o.kernel.empty() && k.name != o.kernel) continue;
    if (k.max_channels && s.desc.channels > k.max_channels) continue;
    std::cerr << "bench " << k.name << "...\n";
    rows.push_back(bench_kernel(s, k, args, ref, o.reps, copy_floor));
  }
  const double mb = s.desc.min_bytes() / 1e6;
  std::cout << "covariance bench: " << s.desc.shape() << " " << o.signal << " (" << fmt(mb, "%.0f")
            << " MB) on " << s.dev.id << " (" << s.dev.name << ")\n"
            << "floor_ms: one plain read pass over the block on the device, timed alternately "
               "with each kernel";
  if (copy_floor > 0)
    std::cout << "; bare host->device copy (pinned): " << fmt(copy_floor) << " ms";
  std::cout << "\n";
  std::printf("%-20s %10s %9s %9s %8s %9s %8s %9s  %s\n", "kernel", "median_ms", "best_ms",
              "floor_ms", "x_floor", "e2e_ms", "x_copy", "rel_err", "status");
  bool ok = true;
  for (const auto& r : rows) {
    if (r.status != "ok") {
      std::printf("%-20s %s\n", r.kernel.c_str(), r.status.c_str());
      ok = ok && r.status.rfind("failed", 0) != 0;
      continue;
    }
    const bool good = r.rel_err <= kTolerance && r.e2e_err <= kTolerance;
    ok = ok && (good || r.baseline);  // a vendor baseline's error is reported, not ours
    std::printf("%-20s %10.3f %9.3f %9.3f %8.2f %9.3f %8.2f %9.2e  %s\n", r.kernel.c_str(),
                r.median_ms, r.best_ms, r.floor_ms, r.floor_ms > 0 ? r.median_ms / r.floor_ms : 0,
                r.e2e_ms, copy_floor > 0 && r.e2e_ms > 0 ? r.e2e_ms / copy_floor : 0, r.rel_err,
                good         ? "ok"
                : r.baseline ? "baseline: rel_err > 1e-6"
                             : "FAIL (rel_err > 1e-6)");
  }
  if (!o.json.empty()) {
    nlohmann::ordered_json j = {{"device", s.dev.id},          {"device_name", s.dev.name},
                                {"channels", s.desc.channels}, {"samples", s.desc.samples},
                                {"layout", o.layout},          {"signal", o.signal},
                                {"copy_floor_ms", copy_floor}};
    for (const auto& r : rows)
      j["kernels"].push_back({{"kernel", r.kernel},
                              {"status", r.status},
                              {"median_ms", r.median_ms},
                              {"best_ms", r.best_ms},
                              {"floor_ms", r.floor_ms},
                              {"e2e_ms", r.e2e_ms},
                              {"rel_err", r.rel_err},
                              {"e2e_rel_err", r.e2e_err}});
    write_json_file(o.json, j.dump(2));
  }
  return ok ? kExitOk : kExitVerifyFailed;
}

}  // namespace

Run setup_cov(CLI::App& sub) {
  auto o = std::make_shared<CovCli>();
  sub.add_option("--device", o->device,
                 "Device (cpu, opencl:P:D, cuda:N); default: the best present");
  sub.add_option("--kernel", o->kernel,
                 "Covariance kernel (default: the device's for the channel count)");
  sub.add_option("--param,--params", o->params, "Kernel parameters, e.g. BLOCK=1024,THREADS=2");
  sub.add_option("--channels", o->channels, "Channels C")->check(CLI::PositiveNumber);
  auto* ns = sub.add_option("--samples", o->samples, "Samples N per block");
  sub.add_option("--layout", o->layout, "planar (C x N) or interleaved (N x C)");
  sub.add_option("--signal", o->signal, "Generator: seed (the article's), random, offset");
  sub.add_option("--seed", o->seed, "Random seed of the generator");
  sub.add_option("--blocks", o->blocks, "Blocks to process (-1: until the input ends)");
  sub.add_option("--rate", o->rate, "Block arrivals per second (0: as fast as possible)");
  sub.add_option("--deadline-ms", o->deadline_ms,
                 "Deadline per block (default 1000/rate, else 50)");
  sub.add_option("--depth", o->depth, "Blocks in flight (buffers / streams)");
  sub.add_option("--ddof", o->ddof, "Delta degrees of freedom: divisor N - ddof");
  sub.add_option("--input", o->input, "Samples: .npy, raw float32 file, or - for stdin");
  sub.add_option("--out", o->out, "Write the last block's covariance (float64 .npy)");
  sub.add_option("--json", o->json, "Write the statistics as JSON");
  sub.add_flag("--verify", o->verify, "Verify every block (default: the first) against float64");
  sub.add_flag("--bench", o->bench, "Benchmark every kernel on one block against the read floor");
  sub.add_option("--reps", o->reps, "Timed repetitions per kernel in --bench");
  return [o, ns] {
    if (o->ddof < 0) throw InvalidArgument("--ddof must be >= 0");
    if (o->blocks == 0 || o->blocks < -1) throw InvalidArgument("--blocks must be >= 1 or -1");
    if (o->blocks == -1 && o->input.empty())
      throw InvalidArgument(
          "--blocks -1 (until the input ends) needs --input; a generator never ends");
    if (o->rate < 0) throw InvalidArgument("--rate must be >= 0");
    parse_sample_layout(o->layout);
    return o->bench ? run_bench(*o) : run_stream(*o, ns->count() > 0);
  };
}

}  // namespace kafel::cli
