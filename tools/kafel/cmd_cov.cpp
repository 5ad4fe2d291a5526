// `kafel cov`: covariance of one block or a stream of blocks (generator, .npy, raw file, FIFO,
// stdin) through the library's stream, or every kernel through bench_cov (`--bench`).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli_util.hpp"
#include "commands.hpp"
#include "kafel/bench.hpp"
#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"
#include "kafel/kernels.hpp"
#include "kafel/signal.hpp"

namespace kafel::cli {

namespace {

constexpr double kTolerance = 1e-6;
constexpr std::int64_t kMaxChannels = 1 << 20;
constexpr std::int64_t kMaxSamples = std::int64_t(1) << 40;

struct CovCli {
  std::string device, kernel, params, signal = "seed", layout = "planar", input, out, json;
  std::string type = "f32";
  std::int64_t channels = 10, samples = 4194304, blocks = 1, ddof = 1, batch = 1;
  double rate = 0, deadline_ms = 50;
  CovWindowOptions windows;  // --window/--hop/--forget/--fb
  int depth = 3, reps = 20, warmup = 2;
  std::uint64_t seed = 1;
  bool verify = false, bench = false, triangle = false;
  bool windowed() const {
    return windows.window > 0 || windows.forget > 0 || windows.forward_backward;
  }
  const CLI::Option* channels_opt = nullptr;
  const CLI::Option* type_opt = nullptr;
  const CLI::Option* samples_opt = nullptr;
  const CLI::Option* deadline_opt = nullptr;
  // Options of the stream mode, refused with --bench rather than ignored.
  std::vector<const CLI::Option*> stream_only;
  // Options of --bench, refused without it.
  std::vector<const CLI::Option*> bench_only;
};

// A block source: the generator (static buffers), a raw file / FIFO / stdin of --type samples,
// or a .npy file holding all blocks (C x total planar, total x C interleaved).
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
    // Batches of one block take seeds seed + b*batch ..: no two blocks share a batch's signal.
    generate_samples(kind, d.type, buf, d.channels, d.samples, d.layout,
                     seed + std::uint64_t(b * d.batch), d.batch);
    return true;
  };
  return s;
}

// Copies samples [first, first + d.samples) of every channel of `m` (C x total planar, total x C
// interleaved, elements of d.type) into a block in the kernel's layout.
void copy_block(const MatrixView& m, const CovDesc& d, std::int64_t first, char* to) {
  const std::size_t es = dtype_size(d.type);
  const bool planar = d.layout == SampleLayout::Planar;
  if (m.layout == Layout::RowMajor && (planar || m.ld == d.channels)) {
    // Contiguous runs: a channel's samples (planar), or the whole block (interleaved).
    for (std::int64_t c = 0; c < (planar ? d.channels : 1); ++c)
      std::memcpy(to + std::size_t(c * d.samples) * es,
                  planar ? m.address(c, first) : m.address(first, 0),
                  std::size_t(d.samples * (planar ? 1 : d.channels)) * es);
    return;
  }
  for (std::int64_t n = 0; n < d.samples; ++n)
    for (std::int64_t c = 0; c < d.channels; ++c)
      std::memcpy(to + std::size_t(planar ? c * d.samples + n : n * d.channels + c) * es,
                  planar ? m.address(c, first + n) : m.address(first + n, c), es);
}

// A .npy input: real arrays (<f4, and <f8 <i4 <f2 |i1 converted to f32) or complex ones (<c8,
// and <c16 rounded to cf32 per half; a value beyond float32's range is refused).
Source npy_source(const CovCli& o, const CovDesc& d) {
  NpyHeader h;
  auto m = std::make_shared<Matrix>(read_npy(o.input, &h));
  std::string converted;
  if (m->dtype() != d.type) {
    check_convertible(m->view(), d.type, "'" + o.input + "'");
    Matrix f(d.type, m->rows(), m->cols(), m->layout());
    copy(m->view(), f.view());
    converted = std::string(" (") + type_info(m->dtype()).npy + " converted to " +
                std::string(to_string(d.type)) + ")";
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
  s.what = o.input + converted;
  s.keep = m;
  s.src.fill = [m, d, total](std::int64_t b, float* buf) {
    if ((b + 1) * d.samples > total) return false;
    copy_block(m->view(), d, b * d.samples, reinterpret_cast<char*>(buf));
    return true;
  };
  return s;
}

Source raw_source(const CovCli& o, const CovDesc& d) {
  auto stream = std::make_shared<SampleStream>(o.input, d.channels, d.samples, d.layout, d.type);
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
    std::memcpy(buf, block->data(), static_cast<std::size_t>(d.min_bytes()));
    return true;
  };
  return s;
}

Source make_source(const CovCli& o, const CovDesc& d) {
  if (o.input.empty()) return generator_source(o, d);
  if (d.batch != 1)
    throw InvalidArgument("--input holds one covariance per block; --batch " +
                          std::to_string(d.batch) +
                          " runs on generated samples (--signal), or through the Python package "
                          "for batched arrays");
  if (ends_with(o.input, ".npy")) return npy_source(o, d);
  return raw_source(o, d);
}

// Planar blocks cut into window segments: segment k of every channel together, as batch k of
// the segment descriptor (the kernels take batches back to back). Interleaved blocks already
// are in that order.
Source segment_major(Source s, const CovDesc& block, std::int64_t seg) {
  const std::size_t es = dtype_size(block.type);
  auto tmp = std::make_shared<std::vector<float>>(static_cast<std::size_t>(
      (block.min_bytes() + 3) / 4));  // float storage keeps every sample type aligned
  s.src.fill = [inner = s.src.fill, tmp, block, seg, es](std::int64_t b, float* buf) {
    if (!inner(b, tmp->data())) return false;
    const auto* from = reinterpret_cast<const char*>(tmp->data());
    auto* to = reinterpret_cast<char*>(buf);
    for (std::int64_t k = 0; k < block.samples / seg; ++k)
      for (std::int64_t c = 0; c < block.channels; ++c)
        std::memcpy(to + std::size_t((k * block.channels + c) * seg) * es,
                    from + std::size_t(c * block.samples + k * seg) * es, std::size_t(seg) * es);
    return true;
  };
  return s;
}

// The sample type: --type, else (for a .npy input) the array's: cf32 for complex arrays (<c8;
// <c16 rounded), f32 for real ones (converted). A --type the .npy cannot hold is refused rather
// than reinterpreted: NumPy has no complex int8/int16 (raw files carry those).
DType resolve_type(const CovCli& o) {
  const DType asked = parse_dtype(o.type);
  if (!is_cov_sample_type(asked))
    throw InvalidArgument("--type " + o.type + " is not a covariance sample type (use one of " +
                          cov_sample_types_text() + ")");
  if (!ends_with(o.input, ".npy")) return asked;
  const DType held = read_npy_header(o.input).dtype;
  const DType natural = is_complex(held) ? DType::c64 : DType::f32;
  if (!o.type_opt->count() || asked == natural) return natural;
  const std::string what = o.input + " holds " + (is_complex(held) ? "complex" : "real") +
                           " samples ('" + type_info(held).npy + "')";
  if (asked == DType::ci8 || asked == DType::ci16)
    throw InvalidArgument(what + "; NumPy has no complex int8/int16, so --type " + o.type +
                          " comes in raw files (--input x.bin --type " + o.type +
                          " --channels C): leave --type out to read the .npy as " +
                          std::string(to_string(natural)));
  throw InvalidArgument(what + "; --type " + o.type +
                        (is_complex(held) ? " would drop the imaginary parts"
                                          : " would read neighbouring samples as (re, im) pairs") +
                        ": leave --type out (or give --type " + std::string(to_string(natural)) +
                        ")" + (is_complex(held) ? "" : ", or save the array as numpy.complex64"));
}

// Samples per channel in a .npy or raw input file (a raw one must be a regular file).
std::int64_t file_samples(const CovCli& o) {
  if (ends_with(o.input, ".npy")) {
    const NpyHeader h = read_npy_header(o.input);
    if (h.shape.size() != 2) throw InvalidArgument(o.input + " is not a 2-D array");
    return parse_sample_layout(o.layout) == SampleLayout::Planar ? h.shape[1] : h.shape[0];
  }
  return raw_sample_frames(o.input, o.channels, resolve_type(o));
}

// Block samples of an input file: --samples, or (for .npy / raw files) the whole file split
// into --blocks blocks (one when --blocks is -1). A window longer than a whole file is refused
// here, before a block size taken from the file can blame the window segment instead.
std::int64_t block_samples(const CovCli& o) {
  if (o.input.empty() || o.input == "-") return o.samples;
  std::error_code ec;
  const bool sized = ends_with(o.input, ".npy") || std::filesystem::is_regular_file(o.input, ec);
  if (o.windows.window > 0 && sized) {
    const std::int64_t total = file_samples(o);
    if (o.windows.window > total)
      throw InvalidArgument("--window " + std::to_string(o.windows.window) + " exceeds the " +
                            std::to_string(total) + " samples per channel in " + o.input);
  }
  if (o.samples_opt->count()) return o.samples;
  return file_samples(o) / std::max<std::int64_t>(o.blocks, 1);
}

// Channels: --channels, else (for a .npy input) the array's channel dimension, else 10.
std::int64_t resolve_channels(const CovCli& o) {
  if (o.channels_opt->count() || !ends_with(o.input, ".npy")) return o.channels;
  const NpyHeader h = read_npy_header(o.input);
  if (h.shape.size() != 2)
    throw InvalidArgument(o.input +
                          " is not a 2-D array (channels x samples, or samples x "
                          "channels with --layout interleaved)");
  return parse_sample_layout(o.layout) == SampleLayout::Planar ? h.shape[0] : h.shape[1];
}

// The operation of the command line: sample type, batch and shape, checked.
CovDesc make_desc(const CovCli& o, std::int64_t channels, std::int64_t samples) {
  const DType type = resolve_type(o);
  const CovDesc d{channels, samples, parse_sample_layout(o.layout), o.ddof, type, o.batch};
  d.validate();
  return d;
}

// --out: float64 (complex128 for complex samples) .npy of the last block, batch x C x C (the
// batch dimension only when --batch > 1), or with --triangle the lower triangles packed row by
// row (batch x C(C+1)/2).
void write_cov_out(const std::string& path, const CovResult& r, bool triangle) {
  std::vector<std::int64_t> shape;
  if (r.batch > 1) shape.push_back(r.batch);
  if (!triangle) {
    shape.insert(shape.end(), {r.channels, r.channels});
    write_npy_f64(path, shape, r.cov.data(), r.complex() ? r.cov_im.data() : nullptr);
    return;
  }
  shape.push_back(r.channels * (r.channels + 1) / 2);
  std::vector<double> re, im;
  for (std::int64_t b = 0; b < r.batch; ++b) {
    std::vector<double> bim;
    const std::vector<double> bre = lower_packed(r, b, r.complex() ? &bim : nullptr);
    re.insert(re.end(), bre.begin(), bre.end());
    im.insert(im.end(), bim.begin(), bim.end());
  }
  write_npy_f64(path, shape, re.data(), r.complex() ? im.data() : nullptr);
}

std::string fmt(double v, const char* f = "%.3f") {
  return format_num(f, v);
}

// The choice for the stream or the default row of the bench: the kernel named (or the
// default for the shape) with --param parsed by its own parameter space.
CovChoice make_choice(const Device& dev, const CovDesc& desc, const CovCli& o) {
  const std::string name = o.kernel.empty() ? choose_cov(dev, desc).kernel : o.kernel;
  const Params overrides =
      o.params.empty() ? Params{} : cov_kernel(dev, name).params.parse(o.params);
  return choose_cov(dev, desc, name, overrides);
}

nlohmann::ordered_json stream_json(const Device& dev, const CovDesc& d, const CovChoice& c,
                                   const std::string& source, const CovStreamStats& st,
                                   const CovStreamOptions& so, double rel_err,
                                   std::int64_t verified, std::int64_t nan_entries, bool ok) {
  return {{"device", dev.id},
          {"device_name", dev.name},
          {"kernel", c.kernel},
          {"config", c.config()},
          {"channels", d.channels},
          {"samples", d.samples},
          {"type", std::string(to_string(d.type))},
          {"batch", d.batch},
          {"layout", std::string(to_string(d.layout))},
          {"source", source},
          {"blocks", st.blocks},
          {"rate", so.rate},
          {"deadline_ms", so.deadline_ms},
          {"startup_ms", st.startup_ms},
          {"median_ms", st.median_ms},
          {"p99_ms", st.p99_ms},
          {"max_ms", st.max_ms},
          {"blocks_per_s", st.blocks_per_s},
          {"missed", st.missed},
          {"rel_err", rel_err},
          {"verified_blocks", verified},
          {"nan_entries", nan_entries},
          {"passed", ok},
          {"wall_ms", st.wall_ms},
          {"latency_ms", st.latency_ms}};  // per block, for the stream timeline (bench/plot.py)
}

// With --window the stream's kernel computes the moments of every block's segments
// (gcd(window, hop) samples each, ddof 0) in one batched launch, and CovEstimator assembles the
// windows from them by the float64 Chan merge (each sample read once however much the windows
// overlap); --forget and --fb act on the estimates. Without --window, each block is one.
CovDesc stream_desc(const CovDesc& block, const CovEstimator* est) {
  if (!est || est->segment() == 0) return block;
  if (block.batch != 1)
    throw InvalidArgument("--window takes one covariance per block (no --batch)");
  const std::int64_t seg = est->segment();
  if (block.samples % seg != 0)
    throw InvalidArgument("--samples " + std::to_string(block.samples) +
                          " is not a multiple of the window segment gcd(--window, --hop) = " +
                          std::to_string(seg) + " (blocks are cut into whole segments)");
  CovDesc d = block;
  d.samples = seg;
  d.ddof = 0;
  d.batch = block.samples / seg;
  return d;
}

int run_stream(const CovCli& o) {
  const Device dev = select_device(o.device);
  const CovDesc block = make_desc(o, resolve_channels(o), block_samples(o));
  std::optional<CovEstimator> est;
  if (o.windowed()) est.emplace(block, o.windows);
  const CovDesc desc = stream_desc(block, est ? &*est : nullptr);
  const CovChoice choice = make_choice(dev, desc, o);
  Source source = make_source(o, block);
  if (desc.samples != block.samples && block.layout == SampleLayout::Planar)
    source = segment_major(std::move(source), block, desc.samples);
  CovStreamOptions so;
  so.depth = o.depth;
  so.rate = o.rate;
  so.deadline_ms = o.deadline_opt->count() ? o.deadline_ms : o.rate > 0 ? 1000.0 / o.rate : 50.0;
  double rel_err = 0;
  std::int64_t verified = 0, nan_entries = 0;
  std::map<const float*, CovResult> refs;  // static buffers: one reference per buffer
  CovResult last;
  std::int64_t estimates = 0;
  auto hook = [&](std::int64_t b, const float* data, const CovResult& r) {
    nan_entries = std::max(nan_entries, r.nan_entries);
    if (b == 0 || o.verify) {
      auto it = refs.find(data);
      if (it == refs.end()) {
        const SamplesView v{data, desc.channels, desc.samples, desc.layout,
                            0,    desc.type,     desc.batch};
        it = refs.emplace(data, reference_covariance(v, desc.ddof)).first;
      }
      rel_err = std::max(rel_err, cov_rel_err(r, it->second));
      ++verified;
      if (!source.src.static_buffers) refs.clear();
    }
    if (!est) {
      last = r;
    } else if (est->segment() == 0) {
      last = est->push_block(r);
      ++estimates;
    } else {
      for (CovResult& e : est->push_segments(r)) {
        last = std::move(e);
        ++estimates;
      }
    }
  };
  const CovStreamStats st = run_cov_stream(dev, choice, desc, source.src, o.blocks, so, hook);
  if (st.blocks == 0)
    throw InvalidArgument("no block of " + std::to_string(desc.samples) + " samples in " +
                          source.what + " (empty input?)");
  if (est && estimates == 0)
    throw InvalidArgument("no window completed: " + std::to_string(st.blocks * block.samples) +
                          " samples read, the window holds " + std::to_string(o.windows.window));
  if (nan_entries)
    warn("NaN in the data: " + std::to_string(nan_entries) + " of " +
         std::to_string(desc.batch * desc.channels * desc.channels) +
         " covariance entries are NaN");
  const bool ok = rel_err <= kTolerance;
  const double budget = so.deadline_ms;
  std::cout << "covariance " << desc.shape() << " of " << source.what << " on " << dev.id << " ("
            << dev.name << "), kernel " << choice.kernel << "\n"
            << "start-up " << fmt(st.startup_ms)
            << " ms (plan, buffers, one warm-up pass over each; before the first deadline)\n"
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
  if (est)
    std::cout << estimates << " estimates"
              << (o.windows.window > 0
                      ? " of " + std::to_string(o.windows.window) + "-sample windows every " +
                            std::to_string(o.windows.hop ? o.windows.hop : o.windows.window) +
                            " samples (the kernel verified on segments of " +
                            std::to_string(desc.samples) + ")"
                      : " (one per block)")
              << (o.windows.forget > 0 ? ", forgetting " + fmt(o.windows.forget, "%g") : "")
              << (o.windows.forward_backward ? ", forward-backward averaged" : "")
              << "; --out holds the last\n";
  if (!ok) return kExitVerifyFailed;  // no result files for a result that failed
  if (!o.out.empty()) write_cov_out(o.out, last, o.triangle);
  if (!o.json.empty()) {
    auto j =
        stream_json(dev, block, choice, source.what, st, so, rel_err, verified, nan_entries, ok);
    if (est) {
      j["window"] = o.windows.window;
      j["hop"] = o.windows.hop ? o.windows.hop : o.windows.window;
      j["segment"] = est->segment();
      j["forget"] = o.windows.forget;
      j["forward_backward"] = o.windows.forward_backward;
      j["estimates"] = estimates;
    }
    write_file_atomic(o.json, j.dump(2) + "\n");
  }
  return kExitOk;
}

// ---- --bench -----------------------------------------------------------------------------

void print_bench(const CovDesc& d, const Device& dev, const std::string& signal,
                 const std::vector<CovBenchRecord>& rows) {
  double copy_floor = 0;
  for (const auto& r : rows) copy_floor = std::max(copy_floor, r.copy_floor_ms);
  std::cout << "covariance bench: " << d.shape() << " " << signal << " ("
            << fmt(d.min_bytes() / 1e6, "%.0f") << " MB) on " << dev.id << " (" << dev.name << ")\n"
            << "each kernel verified against float64 first (tolerance 1e-6), then timed; "
               "floor_ms: one plain read pass over the block, timed alternately with it; "
               "compute_ms: flops / the device's f32 peak estimate; bound: the larger floor";
  if (copy_floor > 0)
    std::cout << "; bare host->device copy (pinned): " << fmt(copy_floor) << " ms";
  std::cout << "\n";
  std::printf("%-20s %10s %9s %7s %9s %10s %8s %8s %9s %8s %9s  %s\n", "kernel", "median_ms",
              "best_ms", "spread", "floor_ms", "compute_ms", "bound", "x_floor", "e2e_ms", "x_copy",
              "rel_err", "status");
  for (const auto& r : rows) {
    if (!r.ok()) {
      std::printf("%-20s %s\n", r.kernel.c_str(),
                  (r.failed() ? "FAIL: " + r.error : r.error).c_str());
      continue;
    }
    auto cell = [](double v, const char* f) { return v > 0 ? fmt(v, f) : std::string("-"); };
    // x_floor: against the binding floor (the larger of read and compute).
    const double floor = std::max(r.floor_ms, r.compute_floor_ms);
    std::printf("%-20s %10.3f %9.3f %7.2f %9s %10s %8s %8s %9s %8s %9.2e  %s\n", r.kernel.c_str(),
                r.median_ms, r.best_ms, r.spread, cell(r.floor_ms, "%.3f").c_str(),
                cell(r.compute_floor_ms, "%.3f").c_str(), r.bound.empty() ? "-" : r.bound.c_str(),
                cell(floor > 0 ? r.median_ms / floor : 0, "%.2f").c_str(),
                cell(r.e2e_ms, "%.3f").c_str(),
                cell(r.copy_floor_ms > 0 ? r.e2e_ms / r.copy_floor_ms : 0, "%.2f").c_str(),
                r.rel_err, r.verified ? "ok" : "baseline: rel_err > 1e-6 (reported, not enforced)");
  }
}

nlohmann::ordered_json bench_json(const Device& dev, const CovDesc& d, const CovCli& o,
                                  const std::vector<CovBenchRecord>& rows) {
  nlohmann::ordered_json j = {{"device", dev.id},
                              {"device_name", dev.name},
                              {"channels", d.channels},
                              {"samples", d.samples},
                              {"type", std::string(to_string(d.type))},
                              {"batch", d.batch},
                              {"flops", d.flops()},
                              {"layout", o.layout},
                              {"signal", o.signal},
                              {"kernels", nlohmann::ordered_json::array()}};
  for (const auto& r : rows) {
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto& [name, v] : r.params) params[name] = v;
    j["kernels"].push_back({{"kernel", r.kernel},
                            {"config", r.config},
                            {"params", params},
                            {"baseline", r.baseline},
                            {"status", r.status},
                            {"error", r.error},
                            {"median_ms", r.median_ms},
                            {"best_ms", r.best_ms},
                            {"spread", r.spread},
                            {"floor_ms", r.floor_ms},
                            {"compute_floor_ms", r.compute_floor_ms},
                            {"bound", r.bound},
                            {"copy_floor_ms", r.copy_floor_ms},
                            {"e2e_ms", r.e2e_ms},
                            {"gbs", r.gbs},
                            {"warmup", r.warmup},
                            {"reps", r.reps},
                            {"slots", r.slots},
                            {"timer", r.timer},
                            {"verified", r.verified},
                            {"rel_err", r.rel_err},
                            {"e2e_rel_err", r.e2e_rel_err}});
  }
  return j;
}

int bench_exit(const std::vector<CovBenchRecord>& rows) {
  int ok = 0, failed = 0;
  for (const auto& r : rows) {
    ok += r.ok();
    failed += r.failed();
  }
  if (failed) {
    std::cerr << "kafel: " << failed << " of " << rows.size() << " kernels failed\n";
    return kExitVerifyFailed;
  }
  if (ok == 0) {
    std::cerr << "kafel: error: every kernel was skipped, nothing was measured\n";
    return kExitError;
  }
  return kExitOk;
}

int run_bench(const CovCli& o) {
  const Device dev = select_device(o.device);
  const CovDesc desc = make_desc(o, o.channels, o.samples);
  const CovChoice chosen = make_choice(dev, desc, o);
  check_host_memory(desc.min_bytes(), "the samples of " + desc.shape());
  // float storage keeps every sample type aligned; ci8 blocks may end mid-float.
  std::vector<float> data(static_cast<std::size_t>((desc.min_bytes() + 3) / 4));
  generate_samples(parse_signal(o.signal), desc.type, data.data(), desc.channels, desc.samples,
                   desc.layout, o.seed, desc.batch);
  const SamplesView view{data.data(), desc.channels, desc.samples, desc.layout,
                         0,           desc.type,     desc.batch};
  const CovResult ref = reference_covariance(view, desc.ddof);
  CovBenchOptions bo;
  bo.reps = o.reps;
  bo.warmup = o.warmup;
  bo.ddof = o.ddof;
  bo.tolerance = kTolerance;
  bo.reference = &ref;
  std::vector<CovBenchRecord> rows;
  for (const auto& k : cov_kernels(dev)) {
    if (!o.kernel.empty() && k.name != o.kernel) continue;
    std::cerr << "bench " << k.name << "...\n";
    bo.overrides = k.name == chosen.kernel ? chosen.params : Params{};
    rows.push_back(bench_cov(dev, k.name, view, bo));
  }
  print_bench(desc, dev, o.signal, rows);
  const int code = bench_exit(rows);
  if (code == kExitOk && !o.json.empty())
    write_file_atomic(o.json, bench_json(dev, desc, o, rows).dump(2) + "\n");
  return code;
}

void refuse_mixed(const CovCli& o) {
  const auto& wrong = o.bench ? o.stream_only : o.bench_only;
  for (const CLI::Option* opt : wrong)
    if (opt->count())
      throw InvalidArgument(opt->get_name() +
                            (o.bench ? " has no effect with --bench" : " goes with --bench"));
  if (o.blocks == 0) throw InvalidArgument("--blocks must be >= 1, or -1 (until the input ends)");
  if (o.blocks == -1 && o.input.empty())
    throw InvalidArgument(
        "--blocks -1 (until the input ends) needs --input; a generator never ends");
  if (o.verify && o.bench) throw InvalidArgument("--verify has no effect with --bench");
}

}  // namespace

Run setup_cov(CLI::App& sub) {
  auto o = std::make_shared<CovCli>();
  sub.footer(
      "Stream mode: blocks from the generator (--signal), a .npy, a raw file, a FIFO or stdin (-)\n"
      "through the library's stream. Inputs: a .npy's dtype sets --type (complex <c8 -> cf32,\n"
      "<c16 rounded to cf32; real ones -> f32); raw files hold --type samples (complex: re, im\n"
      "interleaved; ci8/ci16 only raw, NumPy has no complex integers). Start-up (plan,\n"
      "buffers, a warm-up pass over each) is reported apart from the blocks' latency. The\n"
      "first block (every one with\n"
      "--verify) is checked against the float64 reference (rel_err <= 1e-6).\n"
      "--bench: every kernel (or --kernel) on one generated block, verified first, then\n"
      "warm-up and --reps timed runs alternating with the read floor.\n"
      "Device: --device, else $KAFEL_DEVICE, else cpu. Sizes are checked against host and\n"
      "device memory before anything is allocated. Outputs (--out, --json) are checked before\n"
      "the run, written whole or not at all, and not written when verification fails.\n"
      "Exit codes: 0 verified, 1 error or every kernel skipped, 2 usage, 3 verification failed.");
  sub.add_option("--device", o->device,
                 "Device (cpu, opencl:P:D, cuda:N); default $KAFEL_DEVICE or cpu");
  sub.add_option("--kernel", o->kernel,
                 "Covariance kernel (default: the device's for the channel count)");
  sub.add_option("--param,--params", o->params, "Kernel parameters, e.g. BLOCK=1024,THREADS=2");
  o->channels_opt = int_option(sub, "--channels", o->channels, 1, kMaxChannels,
                               "Channels C (default: from a .npy input's shape, else 10)");
  o->samples_opt = int_option(sub, "--samples", o->samples, 1, kMaxSamples, "Samples N per block");
  sub.add_option("--layout", o->layout, "planar (C x N) or interleaved (N x C)");
  o->type_opt =
      sub.add_option("--type", o->type,
                     "Sample type: f32, cf32 (complex64), ci8, ci16 (complex int8/int16); "
                     "default f32, or a .npy input's (cf32 for complex arrays)");
  int_option(sub, "--batch", o->batch, 1, kMaxCount,
             "Independent covariances per block (B x C x N, one launch)");
  sub.add_option("--signal", o->signal, "Generator: seed (the article's), random, offset");
  seed_option(sub, o->seed, "Random seed of the generator (0 .. 2^63-1)");
  int_option(sub, "--ddof", o->ddof, 0, kMaxSamples, "Delta degrees of freedom: divisor N - ddof");
  o->stream_only = {
      int_option(sub, "--blocks", o->blocks, -1, kMaxCount,
                 "Blocks to process (-1: until the input ends)"),
      number_option(sub, "--rate", o->rate, 0, 1e6, false,
                    "Block arrivals per second (0: as fast as possible)"),
      o->deadline_opt = number_option(sub, "--deadline-ms", o->deadline_ms, 0, 1e9, true,
                                      "Deadline per block (default 1000/rate, else 50)"),
      int_option(sub, "--depth", o->depth, 1, kMaxCovDepth, "Blocks in flight (buffers / streams)"),
      sub.add_option("--input", o->input,
                     "Samples: .npy, raw file (or FIFO) of --type samples, - for stdin"),
      sub.add_option("--out", o->out,
                     "Write the last block's covariance (.npy float64, complex128 for complex "
                     "samples; batch x C x C)"),
      int_option(sub, "--window", o->windows.window, 1, kMaxSamples,
                 "Sliding windows of this many samples (estimates span blocks)"),
      int_option(sub, "--hop", o->windows.hop, 1, kMaxSamples,
                 "Samples between window starts (default: the window, no overlap)"),
      number_option(sub, "--forget", o->windows.forget, 0, 1, false,
                    "Exponential forgetting lambda in [0, 1): R <- lambda R + (1 - lambda) new"),
      sub.add_flag("--fb", o->windows.forward_backward,
                   "Forward-backward averaging (uniform linear arrays): R <- (R + J R* J) / 2"),
      sub.add_flag("--triangle", o->triangle,
                   "--out holds the lower triangle packed row by row (C(C+1)/2 per batch)"),
  };
  sub.add_option("--json", o->json, "Write the statistics as JSON");
  sub.add_flag("--verify", o->verify, "Verify every block (default: the first) against float64");
  sub.add_flag("--bench", o->bench, "Benchmark every kernel on one block against the read floor");
  o->bench_only = {
      int_option(sub, "--reps", o->reps, 1, kMaxCount, "Timed repetitions per kernel in --bench"),
      int_option(sub, "--warmup", o->warmup, 0, kMaxCount, "Warm-up runs per kernel in --bench"),
  };
  return [o] {
    check_environment();
    refuse_mixed(*o);
    parse_sample_layout(o->layout);
    parse_signal(o->signal);
    check_outputs({{"--out", o->out}, {"--json", o->json}}, {o->input});
    return o->bench ? run_bench(*o) : run_stream(*o);
  };
}

}  // namespace kafel::cli
