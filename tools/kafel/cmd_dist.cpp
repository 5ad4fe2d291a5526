// `mpirun -np P kafel dist gemm|cov ...`: distributed GEMM (SUMMA or the 1-D rows rung) and
// covariance (samples split across ranks, or a stream dealt to them) over MPI ranks (built with
// MPI only). Every result verified; rank 0 prints per-rank compute and communication figures.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "cli_util.hpp"
#include "commands.hpp"
#include "kafel/bench.hpp"
#include "kafel/cov.hpp"
#include "kafel/dist.hpp"
#include "kafel/error.hpp"
#include "kafel/signal.hpp"

namespace kafel::cli {

namespace {

constexpr std::int64_t kMaxDim = 2147483647;
constexpr double kCovTolerance = 1e-6;

struct CommonCli {
  std::string device;
  double timeout_s = 600;
};

struct GemmCli {
  CommonCli common;
  std::int64_t m = 0, n = 0, k = 0, block = 256;
  std::string grid, algorithm = "summa", type = "f32", kernel;
  int reps = 3;
  std::uint64_t seed = 1;
  bool no_overlap = false;
};

struct CovCli {
  CommonCli common;
  std::int64_t channels = 10, samples = 4194304, blocks = 1, ddof = 1;
  std::string signal = "seed", kernel;
  int depth = 3;
  double rate = 0, deadline_ms = 50;
  std::uint64_t seed = 1;
};

void add_common(CLI::App& sub, CommonCli& c) {
  sub.add_option("--device", c.device,
                 "Each rank's device: cpu, cuda (the GPU of the rank's place on its node), "
                 "cuda:N, opencl:P:D (default $KAFEL_DEVICE, else cpu)");
  number_option(sub, "--timeout", c.timeout_s, 0, 1e6, false,
                "Seconds a rank waits in one collective before aborting the job (0: for ever)")
      ->capture_default_str();
}

dist::CommOptions comm_options(const CommonCli& c) {
  dist::CommOptions o;
  o.device = c.device;
  o.timeout_s = c.timeout_s;
  return o;
}

std::string fixed(double v, int digits = 2) {
  return format_num(("%." + std::to_string(digits) + "f").c_str(), v);
}

// ---- gemm -------------------------------------------------------------------------------------

void print_gemm_ranks(const dist::Communicator& comm, const dist::DistGemmReport& r) {
  const std::vector<double> compute = comm.all(r.compute_ms), commu = comm.all(r.comm_ms),
                            exposed = comm.all(r.exposed_ms()), bytes = comm.all(r.bytes),
                            bus = comm.all(r.bus_gbs());
  if (comm.rank() != 0) return;
  std::cout << "rank  compute_ms  comm_ms  exposed_ms  sent+received  bus_GB/s\n";
  for (int i = 0; i < comm.size(); ++i) {
    const auto u = std::size_t(i);
    std::printf("%4d  %10s  %7s  %10s  %13s  %8s\n", i, fixed(compute[u]).c_str(),
                fixed(commu[u]).c_str(), fixed(exposed[u]).c_str(), human_bytes(bytes[u]).c_str(),
                fixed(bus[u]).c_str());
  }
}

int run_dist_gemm(const dist::Communicator& comm, const GemmCli& o) {
  // Every check in one agreed step: the same options fail the same way on every rank.
  DType type = DType::f32;
  dist::DistAlgorithm alg = dist::DistAlgorithm::Summa;
  dist::DistMatrix A, B, C;
  comm.collectively([&] {
    type = parse_dtype(o.type);
    alg = dist::parse_dist_algorithm(o.algorithm);
    const dist::Grid grid =
        o.grid.empty() ? (alg == dist::DistAlgorithm::Rows ? dist::Grid{comm.size(), 1}
                                                           : dist::default_grid(comm.size()))
                       : dist::Grid::parse(o.grid);
    if (grid.size() != comm.size())
      throw InvalidArgument("--grid " + grid.name() + " has " + std::to_string(grid.size()) +
                            " processes but the job has " + std::to_string(comm.size()) + " ranks");
    const dist::DistGemmLayouts l = dist::dist_gemm_layouts(alg, grid, o.m, o.n, o.k, o.block);
    A = dist::DistMatrix(comm, l.a, type);
    B = dist::DistMatrix(comm, l.b, type);
    C = dist::DistMatrix(comm, l.c, type);
  });
  dist::fill_pattern(A, o.seed);
  dist::fill_pattern(B, o.seed + 1);
  dist::DistGemmOptions opt;
  opt.algorithm = alg;
  opt.kernel = o.kernel;
  opt.overlap = !o.no_overlap;
  std::vector<dist::DistGemmReport> runs;
  dist::DistMatrix result;
  for (int rep = 0; rep < o.reps; ++rep) {
    dist::DistMatrix out = C.clone();
    runs.push_back(dist::dist_gemm(comm, 1.0, A, B, 0.0, out, opt));
    if (rep == 0) result = std::move(out);
  }
  // The run whose job wall time is the median (the same choice on every rank).
  std::vector<std::size_t> order(runs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return runs[x].job_wall_ms < runs[y].job_wall_ms;
  });
  const dist::DistGemmReport& r = runs[order[order.size() / 2]];
  const GemmDesc desc{o.m, o.n, o.k, Op::N, Op::N, 1.0, 0.0, GemmTypes::of(type)};
  const VerifyResult v = dist::dist_verify_gemm(comm, desc, A, B, C, result, o.seed + 2);
  if (comm.rank() == 0) {
    std::cout << "dist gemm " << o.m << "x" << o.n << "x" << o.k << " " << to_string(type) << " on "
              << comm.size() << " ranks (" << comm.device().id << "...): " << r.algorithm
              << ", grid " << r.grid << ", "
              << (alg == dist::DistAlgorithm::Summa ? "block " + std::to_string(o.block) + ", "
                                                    : std::string())
              << r.panels << " panel(s), overlap " << (r.overlap ? "on" : "off") << ", transport "
              << r.transport << ", kernel " << r.kernel << " " << r.config << "\n";
  }
  print_gemm_ranks(comm, r);
  if (comm.rank() == 0) {
    std::cout << "job: " << fixed(r.job_wall_ms, 3) << " ms (median of " << o.reps << "), "
              << fixed(r.job_gflops, 1) << " GFLOP/s; verify " << v.method << " "
              << (v.passed ? "passed" : "FAILED") << " (rel err " << format_num("%.2e", v.rel_err)
              << ")\n";
    if (!v.passed) std::cerr << "kafel: error: " << v.message << "\n";
  }
  return v.passed ? kExitOk : kExitVerifyFailed;
}

// ---- cov --------------------------------------------------------------------------------------

// Samples [first, first + count) of rank `rank` when `total` are split as evenly as possible.
std::pair<std::int64_t, std::int64_t> my_share(std::int64_t total, int rank, int ranks) {
  const std::int64_t base = total / ranks, extra = total % ranks;
  const std::int64_t first = rank * base + std::min<std::int64_t>(rank, extra);
  return {first, base + (rank < extra ? 1 : 0)};
}

int run_dist_cov_split(const dist::Communicator& comm, const CovCli& o) {
  const SignalKind kind = parse_signal(o.signal);
  // Every rank generates the whole block (the generators are seeded per block, not per sample)
  // and keeps its share; rank 0 checks the merged result against the reference of the whole.
  std::vector<float> whole;
  comm.collectively([&] {
    whole.resize(std::size_t(o.channels * o.samples));
    generate_signal(kind, whole.data(), o.channels, o.samples, SampleLayout::Planar, o.seed);
  });
  const auto [first, count] = my_share(o.samples, comm.rank(), comm.size());
  const SamplesView mine{whole.data() + first, o.channels, count, SampleLayout::Planar, o.samples};
  CovOptions opt;
  opt.kernel = o.kernel;
  opt.ddof = o.ddof;
  const dist::DistCovReport r = dist::dist_covariance(comm, mine, opt);
  const std::vector<double> compute = comm.all(r.compute_ms), commu = comm.all(r.comm_ms),
                            samples = comm.all(double(r.local_samples));
  if (comm.rank() != 0) return kExitOk;
  const CovResult ref =
      reference_covariance({whole.data(), o.channels, o.samples, SampleLayout::Planar, 0}, o.ddof);
  const double err = cov_rel_err(r.result, ref);
  std::cout << "dist cov " << o.channels << " channels x " << o.samples << " samples ("
            << to_string(kind) << " signal) split over " << comm.size() << " ranks ("
            << comm.device().id << "...), kernel " << r.result.kernel
            << ", merge: Chan's formula in float64 (two all-reduces)\n";
  std::cout << "rank  samples  compute_ms  comm_ms\n";
  for (int i = 0; i < comm.size(); ++i) {
    const auto u = std::size_t(i);
    std::printf("%4d  %7.0f  %10s  %7s\n", i, samples[u], fixed(compute[u]).c_str(),
                fixed(commu[u]).c_str());
  }
  const bool ok = err <= kCovTolerance;
  std::cout << "job: " << fixed(r.total_ms, 3) << " ms on rank 0; verify against the float64 "
            << "reference " << (ok ? "passed" : "FAILED") << " (rel err " << format_num("%.2e", err)
            << ", tolerance 1e-6)\n";
  return ok ? kExitOk : kExitVerifyFailed;
}

int run_dist_cov_stream(const dist::Communicator& comm, const CovCli& o) {
  const SignalKind kind = parse_signal(o.signal);
  const CovDesc desc{o.channels, o.samples, SampleLayout::Planar, o.ddof};
  const CovChoice choice = comm.collectively([&] {
    desc.validate();
    return choose_cov(comm.device(), desc, o.kernel);
  });
  CovBlockSource source;
  source.static_buffers = true;
  source.fill = [kind, desc, seed = o.seed](std::int64_t b, float* buf) {
    generate_signal(kind, buf, desc.channels, desc.samples, desc.layout, seed + std::uint64_t(b));
    return true;
  };
  // Each rank checks a block of its own against the reference while its data is still there.
  double worst = 0;
  auto hook = [&](std::int64_t, const float* data, const CovResult& res) {
    const CovResult ref =
        reference_covariance({data, desc.channels, desc.samples, desc.layout, 0}, desc.ddof);
    worst = std::max(worst, cov_rel_err(res, ref));
  };
  CovStreamOptions opt;
  opt.depth = o.depth;
  opt.rate = o.rate;
  opt.deadline_ms = o.deadline_ms;
  const dist::DistCovStreamStats st =
      dist::dist_cov_stream(comm, choice, desc, source, o.blocks, opt, hook);
  const double job_worst = comm.max(worst);
  if (comm.rank() != 0) return kExitOk;
  const CovStreamStats& j = st.job;
  std::cout << "dist cov stream: " << j.blocks << " blocks of " << o.channels << " x " << o.samples
            << " dealt round-robin to " << comm.size() << " ranks (" << comm.device().id
            << "...), kernel " << choice.kernel << "\n";
  std::cout << "rank  blocks  blocks/s\n";
  for (int i = 0; i < comm.size(); ++i)
    std::printf("%4d  %6lld  %8s\n", i, static_cast<long long>(st.rank_blocks[std::size_t(i)]),
                fixed(st.rank_blocks_per_s[std::size_t(i)], 1).c_str());
  const bool ok = job_worst <= kCovTolerance;
  std::cout << "job: " << fixed(j.blocks_per_s, 1) << " blocks/s, latency median "
            << fixed(j.median_ms) << " ms, p99 " << fixed(j.p99_ms) << " ms, max "
            << fixed(j.max_ms) << " ms, missed " << j.missed << " (deadline "
            << format_num("%g", o.deadline_ms) << " ms); verify " << (ok ? "passed" : "FAILED")
            << " (worst rel err " << format_num("%.2e", job_worst) << ", tolerance 1e-6)\n";
  return ok ? kExitOk : kExitVerifyFailed;
}

// ---- collectives -------------------------------------------------------------------------------

struct CollectivesCli {
  CommonCli common;
  std::string sizes = "1M,16M,256M";
  int reps = 20;
};

// "4K", "16M", "1G" or a plain number of bytes.
double parse_bytes(const std::string& item) {
  const char last = item.empty() ? '\0' : item.back();
  const double unit = last == 'K'   ? 1024.0
                      : last == 'M' ? 1048576.0
                      : last == 'G' ? 1073741824.0
                                    : 1.0;
  const std::string digits = unit > 1 ? item.substr(0, item.size() - 1) : item;
  return double(parse_int(digits, "--sizes item '" + item + "'")) * unit;
}

int run_collectives(const dist::Communicator& comm, const CollectivesCli& o) {
  std::vector<double> sizes;
  comm.collectively([&] {
    for (const std::string& item : split_list(o.sizes)) sizes.push_back(parse_bytes(item));
    if (sizes.empty()) throw InvalidArgument("--sizes names no size");
  });
  const std::vector<dist::CollectiveRecord> recs = dist::bench_collectives(comm, sizes, o.reps);
  if (comm.rank() != 0) return kExitOk;
  std::cout << "collectives on " << comm.size() << " ranks (" << comm.device().id
            << "...), median of " << o.reps << " runs of the slowest rank\n";
  std::cout << "op          transport  bytes       time_us     algbw_GB/s  busbw_GB/s\n";
  for (const auto& r : recs)
    std::printf("%-10s  %-9s  %-10s  %10s  %10s  %10s\n", r.op.c_str(), r.transport.c_str(),
                human_bytes(r.bytes).c_str(), fixed(r.time_us, 1).c_str(),
                fixed(r.algbw_gbs).c_str(), fixed(r.busbw_gbs).c_str());
  return kExitOk;
}

// MPI for the command's life; an error every rank agreed on is printed once (rank 0) and
// every rank returns the error exit code; an error on one rank alone aborts the job, the others
// cannot learn of it.
template <class Body>
int with_mpi(const CommonCli& common, Body body) {
  dist::Session session;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    dist::Communicator comm(MPI_COMM_WORLD, comm_options(common));
    return body(comm);
  } catch (const std::exception& e) {
    if (!dist::is_agreed(e)) {
      std::cerr << "kafel: error: rank " << rank << ": " << e.what() << "; aborting every rank\n";
      MPI_Abort(MPI_COMM_WORLD, kExitError);
    }
    // Rank 0 says it before any rank leaves: mpiexec kills the whole job as soon as one rank
    // exits non-zero, which had come before rank 0's line now and then (the mpi.cli.bad_grid
    // test saw only mpiexec's own message).
    if (rank == 0) std::cerr << "kafel: error: " << one_line(e.what()) << std::endl;
    MPI_Barrier(MPI_COMM_WORLD);
    return kExitError;
  }
}

}  // namespace

Run setup_dist(CLI::App& sub) {
  sub.require_subcommand(1);
  sub.footer(
      "Run under MPI, one rank per device: mpirun -np 2 kafel dist gemm --m 2000 --n 1500 --k "
      "1700\n"
      "CPU ranks on one node share its cores; CUDA ranks (--device cuda) take the GPU of their\n"
      "place on the node and talk through NCCL when kafel was built with it.");
  auto g = std::make_shared<GemmCli>();
  CLI::App* gemm = sub.add_subcommand("gemm", "C = A B distributed over a process grid, verified");
  add_common(*gemm, g->common);
  int_option(*gemm, "--m", g->m, 1, kMaxDim, "Rows of A and C")->required();
  int_option(*gemm, "--n", g->n, 1, kMaxDim, "Columns of B and C")->required();
  int_option(*gemm, "--k", g->k, 1, kMaxDim, "Columns of A, rows of B")->required();
  gemm->add_option("--grid", g->grid, "Process grid PxQ (default: the most square one)");
  int_option(*gemm, "--block", g->block, 1, kMaxDim, "SUMMA's square block size")
      ->capture_default_str();
  gemm->add_option("--algorithm", g->algorithm, "summa or rows (the 1-D rung)")
      ->capture_default_str();
  gemm->add_option("--type", g->type, "Element type (natural roles): f32, f64, i32, bf16, ...")
      ->capture_default_str();
  gemm->add_option("--kernel", g->kernel, "Local GEMM kernel (default: choose_gemm's choice)");
  int_option(*gemm, "--reps", g->reps, 1, 1000, "Timed runs (the median is reported)")
      ->capture_default_str();
  seed_option(*gemm, g->seed, "Seed of A and B's pattern");
  gemm->add_flag("--no-overlap", g->no_overlap, "Broadcast each panel, then compute (SUMMA)");

  auto c = std::make_shared<CovCli>();
  CLI::App* cov = sub.add_subcommand(
      "cov", "Covariance with samples split across ranks (--blocks 1) or a stream dealt to them");
  add_common(*cov, c->common);
  int_option(*cov, "--channels", c->channels, 1, 1 << 20, "Channels")->capture_default_str();
  int_option(*cov, "--samples", c->samples, 2, std::int64_t(1) << 40,
             "Samples (of the whole block, or of each stream block)")
      ->capture_default_str();
  int_option(*cov, "--blocks", c->blocks, 1, kMaxCount,
             "1: one block split across ranks; more: a stream, block b on rank b mod P")
      ->capture_default_str();
  int_option(*cov, "--ddof", c->ddof, 0, 1, "Divisor N - ddof")->capture_default_str();
  cov->add_option("--signal", c->signal, "seed (the article's), random, offset")
      ->capture_default_str();
  cov->add_option("--kernel", c->kernel, "Covariance kernel (default: choose_cov's choice)");
  int_option(*cov, "--depth", c->depth, 1, kMaxCovDepth, "Stream: blocks in flight per rank")
      ->capture_default_str();
  number_option(*cov, "--rate", c->rate, 0, 1e9, false, "Stream: arrivals per second (0: max)");
  number_option(*cov, "--deadline", c->deadline_ms, 0, 1e9, true, "Stream: deadline (ms)")
      ->capture_default_str();
  seed_option(*cov, c->seed, "Signal seed");

  auto b = std::make_shared<CollectivesCli>();
  CLI::App* coll = sub.add_subcommand(
      "collectives", "Broadcast, all-reduce, all-gather bandwidth (nccl-tests' algbw/busbw)");
  add_common(*coll, b->common);
  coll->add_option("--sizes", b->sizes, "Bytes per collective: 4K, 16M, 1G items")
      ->capture_default_str();
  int_option(*coll, "--reps", b->reps, 1, kMaxCount, "Timed runs per size")->capture_default_str();

  return [g, c, b, gemm, coll] {
    if (coll->parsed())
      return with_mpi(b->common,
                      [&](const dist::Communicator& comm) { return run_collectives(comm, *b); });
    if (gemm->parsed())
      return with_mpi(g->common,
                      [&](const dist::Communicator& comm) { return run_dist_gemm(comm, *g); });
    return with_mpi(c->common, [&](const dist::Communicator& comm) {
      return c->blocks > 1 ? run_dist_cov_stream(comm, *c) : run_dist_cov_split(comm, *c);
    });
  };
}

}  // namespace kafel::cli
