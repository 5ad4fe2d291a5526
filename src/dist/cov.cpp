// Distributed covariance: samples split across ranks, merged in float64 by Chan's formula done
// with sums only (two all-reduces, any number of ranks); and a stream whose blocks are dealt to
// the ranks in turn, statistics and results collected on rank 0 in block order.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/cov_backend.hpp"
#include "dist/comm_impl.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"

namespace kafel::dist {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void check_local_view(const SamplesView& s) {
  if (s.channels < 1)
    throw InvalidArgument("covariance needs at least one channel (got " +
                          std::to_string(s.channels) + ")");
  if (s.samples < 0)
    throw InvalidArgument("a rank's sample count must not be negative (got " +
                          std::to_string(s.samples) + ")");
  if (s.samples > 0 && s.data == nullptr) throw InvalidArgument("null sample pointer");
  const std::int64_t need = s.layout == SampleLayout::Planar ? s.samples : s.channels;
  if (s.stride != 0 && s.stride < need)
    throw InvalidArgument("sample stride " + std::to_string(s.stride) + " < " +
                          std::to_string(need));
}

// This rank's (mean, centred co-moments) by the chosen kernel; ddof plays no part yet.
CovMoments local_moments(const Device& dev, const CovChoice& choice, const SamplesView& s) {
  CovMoments m;
  if (s.samples == 0) {
    m.mean.assign(std::size_t(s.channels), 0.0);
    m.comoment.assign(std::size_t(s.channels * s.channels), 0.0);
    return m;
  }
  const CovDesc desc{s.channels, s.samples, s.layout, 0};
  const CovChoice here = choose_cov(dev, desc, choice.kernel, choice.params);
  auto plan = find_cov_kernel(dev, here.kernel).make_plan(dev, desc, here.params);
  plan->load(CovArgs{desc, s.data, s.tight_stride()}, 1);
  plan->run(0);
  plan->fetch(m);
  return m;
}

// Chan's merge of P parts with sums only: N and sum n_r mu_r first, then sum of
// M_r + n_r d_r d_r^T with d_r = mu_r - mu around the exact global mean, so no term cancels
// (the pilot-shifted sums Q - S S^T / N would lose (mean/std)^2 of float64's digits).
CovMoments merge(const Communicator& comm, std::int64_t samples, const CovMoments& m,
                 std::int64_t* total, double* bytes) {
  const Communicator::Impl& c = comm.impl();
  const auto ch = m.mean.size();
  std::vector<double> first(ch + 1);
  first[0] = double(samples);
  for (std::size_t i = 0; i < ch; ++i) first[i + 1] = double(samples) * m.mean[i];
  allreduce_sum(c, first.data(), std::int64_t(first.size()), c.world, "covariance merge (means)");
  *total = std::int64_t(first[0]);
  CovMoments out;
  out.mean.resize(ch);
  for (std::size_t i = 0; i < ch; ++i) out.mean[i] = first[0] > 0 ? first[i + 1] / first[0] : 0.0;
  std::vector<double> packed(ch * (ch + 1) / 2);
  const double n = double(samples);
  for (std::size_t i = 0; i < ch; ++i) {
    const double di = m.mean[i] - out.mean[i];
    for (std::size_t j = 0; j <= i; ++j) {
      const double dj = m.mean[j] - out.mean[j];
      packed[i * (i + 1) / 2 + j] = samples ? m.comoment[i * ch + j] + n * di * dj : 0.0;
    }
  }
  allreduce_sum(c, packed.data(), std::int64_t(packed.size()), c.world,
                "covariance merge (co-moments)");
  out.comoment.resize(ch * ch);
  for (std::size_t i = 0; i < ch; ++i)
    for (std::size_t j = 0; j <= i; ++j)
      out.comoment[i * ch + j] = out.comoment[j * ch + i] = packed[i * (i + 1) / 2 + j];
  *bytes = double(first.size() + packed.size()) * sizeof(double);
  return out;
}

}  // namespace

DistCovReport dist_covariance(const Communicator& comm, const SamplesView& local,
                              const CovOptions& opt) {
  const auto start = Clock::now();
  DistCovReport rep;
  CovChoice choice;
  comm.collectively([&] {
    check_local_view(local);
    if (opt.ddof < 0)
      throw InvalidArgument("ddof must be >= 0 (got " + std::to_string(opt.ddof) + ")");
    CovDesc probe{local.channels, std::max<std::int64_t>(local.samples, 1), local.layout, 0};
    probe.validate();
    choice = choose_cov(comm.device(), probe, opt.kernel, opt.params);
  });
  check_same_everywhere(comm, {double(local.channels), double(local.layout), double(opt.ddof)},
                        "channel count, layout or ddof");
  CovMoments mine;
  const auto t0 = Clock::now();
  comm.collectively([&] { mine = local_moments(comm.device(), choice, local); });
  rep.compute_ms = ms_since(t0);
  const auto t1 = Clock::now();
  std::int64_t total = 0;
  const CovMoments merged = merge(comm, local.samples, mine, &total, &rep.bytes);
  rep.comm_ms = ms_since(t1);
  comm.collectively([&] {
    if (total <= opt.ddof)
      throw InvalidArgument("covariance needs more samples than ddof over all ranks: N = " +
                            std::to_string(total) + ", ddof = " + std::to_string(opt.ddof));
  });
  rep.result = finalize_cov(CovDesc{local.channels, total, local.layout, opt.ddof}, merged);
  rep.result.kernel = choice.kernel;
  rep.result.kernel_ms = rep.compute_ms;
  rep.local_samples = local.samples;
  rep.total_ms = ms_since(start);
  rep.result.total_ms = rep.total_ms;
  return rep;
}

// ---- the round-robin stream -----------------------------------------------------------------

namespace {

constexpr int kResultTag = 7104;

// Blocks b < max_blocks with b mod P = rank (-1: until the source ends).
std::int64_t my_blocks(std::int64_t max_blocks, int rank, int ranks) {
  if (max_blocks < 0) return -1;
  return max_blocks > rank ? (max_blocks - rank + ranks - 1) / ranks : 0;
}

struct Collected {
  std::vector<double> packed;  // per local block: mean (C), cov (C*C)
  std::int64_t blocks = 0;
};

void send_results(const Communicator& comm, const Collected& mine) {
  const Communicator::Impl& c = comm.impl();
  const double count = double(mine.packed.size());
  send_bytes(c, &count, sizeof count, 0, kResultTag, "results to rank 0");
  send_bytes(c, mine.packed.data(), mine.packed.size() * sizeof(double), 0, kResultTag,
             "results to rank 0");
}

std::vector<double> receive_results(const Communicator& comm, int from) {
  const Communicator::Impl& c = comm.impl();
  double count = 0;
  recv_bytes(c, &count, sizeof count, from, kResultTag,
             "results from rank " + std::to_string(from));
  std::vector<double> v(static_cast<std::size_t>(count));
  recv_bytes(c, v.data(), v.size() * sizeof(double), from, kResultTag,
             "results from rank " + std::to_string(from));
  return v;
}

CovResult unpack(const CovDesc& desc, const std::string& kernel, const double* p) {
  const auto ch = std::size_t(desc.channels);
  CovResult r;
  r.channels = desc.channels;
  r.samples = desc.samples;
  r.ddof = desc.ddof;
  r.kernel = kernel;
  r.mean.assign(p, p + ch);
  r.cov.assign(p + ch, p + ch + ch * ch);
  r.cov_f32.assign(r.cov.begin(), r.cov.end());
  for (double v : r.cov) r.nan_entries += std::isnan(v);
  return r;
}

// Every rank's latencies, rates and (when asked) results on rank 0, merged in block order.
void collect(const Communicator& comm, const CovDesc& desc, const CovChoice& choice,
             const CovStreamOptions& opt, const Collected& mine, bool results,
             const CovRootHook& root_hook, DistCovStreamStats& out) {
  const CovStreamStats& st = out.local;
  std::vector<double> figures{st.wall_ms, st.startup_ms, st.blocks_per_s};
  figures.insert(figures.end(), st.latency_ms.begin(), st.latency_ms.end());
  const auto all = gather_vectors(comm, figures, 0);
  std::vector<std::vector<double>> packed(std::size_t(comm.size()));
  if (results) {
    if (comm.rank() != 0) {
      send_results(comm, mine);
    } else {
      packed[0] = mine.packed;
      for (int r = 1; r < comm.size(); ++r) packed[std::size_t(r)] = receive_results(comm, r);
    }
  }
  if (comm.rank() != 0) return;
  const int ranks = comm.size();
  CovStreamStats& job = out.job;
  std::vector<std::size_t> next(std::size_t(ranks), 3);
  const std::size_t per = std::size_t(desc.channels + desc.channels * desc.channels);
  for (std::int64_t b = 0;; ++b) {  // block b is rank b mod P's (b / P)-th
    const auto r = std::size_t(b % ranks);
    if (next[r] >= all[r].size()) break;
    job.latency_ms.push_back(all[r][next[r]++]);
    if (results && root_hook)
      root_hook(b, unpack(desc, choice.kernel, packed[r].data() + std::size_t(b / ranks) * per));
  }
  for (int r = 0; r < ranks; ++r) {
    const auto& f = all[std::size_t(r)];
    job.wall_ms = std::max(job.wall_ms, f[0]);
    job.startup_ms = std::max(job.startup_ms, f[1]);
    out.rank_blocks.push_back(std::int64_t(f.size()) - 3);
    out.rank_blocks_per_s.push_back(f[2]);
  }
  job.blocks = std::int64_t(job.latency_ms.size());
  job.median_ms = quantile(job.latency_ms, 0.5);
  job.p99_ms = quantile(job.latency_ms, 0.99);
  job.max_ms =
      job.latency_ms.empty() ? 0 : *std::max_element(job.latency_ms.begin(), job.latency_ms.end());
  job.blocks_per_s = job.wall_ms > 0 ? 1000.0 * double(job.blocks) / job.wall_ms : 0;
  for (double l : job.latency_ms) job.missed += l > opt.deadline_ms;
}

}  // namespace

DistCovStreamStats dist_cov_stream(const Communicator& comm, const CovChoice& choice,
                                   const CovDesc& desc, const CovBlockSource& source,
                                   std::int64_t max_blocks, const CovStreamOptions& opt,
                                   const CovResultHook& hook, const CovRootHook& root_hook) {
  const int ranks = comm.size(), rank = comm.rank();
  comm.collectively([&] {
    desc.validate();
    if (!source.fill) throw InvalidArgument("distributed stream: the block source has no fill");
  });
  check_same_everywhere(
      comm,
      {double(desc.channels), double(desc.samples), double(desc.layout), double(desc.ddof),
       double(max_blocks), double(opt.depth), opt.rate, opt.deadline_ms},
      "stream (shape, blocks, depth, rate or deadline)");
  double results = root_hook ? 1.0 : 0.0;
  bcast_bytes(comm.impl(), &results, sizeof results, 0, comm.mpi(), "stream set-up");

  CovBlockSource mine = source;
  mine.fill = [&source, ranks, rank](std::int64_t j, float* buf) {
    return source.fill(j * ranks + rank, buf);
  };
  CovStreamOptions local_opt = opt;
  local_opt.rate = opt.rate / ranks;  // each rank sees every P-th arrival
  Collected collected;
  const std::size_t per = std::size_t(desc.channels + desc.channels * desc.channels);
  auto local_hook = [&](std::int64_t j, const float* data, const CovResult& r) {
    if (hook) hook(j * ranks + rank, data, r);
    if (results == 0) return;
    collected.packed.insert(collected.packed.end(), r.mean.begin(), r.mean.end());
    collected.packed.insert(collected.packed.end(), r.cov.begin(), r.cov.end());
    ++collected.blocks;
  };
  collected.packed.reserve(
      results ? per * std::size_t(std::max<std::int64_t>(my_blocks(max_blocks, rank, ranks), 0))
              : 0);
  DistCovStreamStats out;
  comm.barrier();  // the ranks' clocks start together
  comm.collectively([&] {
    out.local = run_cov_stream(comm.device(), choice, desc, mine,
                               my_blocks(max_blocks, rank, ranks), local_opt, local_hook);
  });
  collect(comm, desc, choice, opt, collected, results != 0, root_hook, out);
  return out;
}

}  // namespace kafel::dist
