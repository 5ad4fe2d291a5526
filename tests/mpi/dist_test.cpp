// kafel::dist on the ranks of one mpirun: distributed GEMM (SUMMA on every grid shape of the job,
// the 1-D rows rung, odd sizes and blocks that do not divide them) against the single-process
// reference, covariance split unevenly across ranks against the float64 reference, the stream
// dealt to ranks, scatter/gather, and errors on one rank agreed by every rank.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dist_test_env.hpp"
#include "kafel/error.hpp"

namespace kd = kafel::dist;
using kafel::DType;
using kafel::Matrix;

namespace {

// Every factorisation rows x cols of the job's size (2 ranks: 1x2, 2x1; 3: 1x3, 3x1; 4: 1x4,
// 2x2, 4x1).
std::vector<kd::Grid> grids_of(int ranks) {
  std::vector<kd::Grid> out;
  for (int r = 1; r <= ranks; ++r)
    if (ranks % r == 0) out.push_back({r, ranks / r});
  return out;
}

struct GemmCase {
  std::int64_t m, n, k, block;
  DType type;
  double alpha, beta;
};

std::string describe(const GemmCase& c, const kd::Grid& g, kd::DistAlgorithm alg) {
  return std::string(kd::to_string(alg)) + " " + g.name() + " " + std::to_string(c.m) + "x" +
         std::to_string(c.n) + "x" + std::to_string(c.k) + " block " + std::to_string(c.block) +
         " " + kafel::type_info(c.type).name;
}

// Runs one distributed GEMM, checks it with the distributed Freivalds test on every rank and,
// gathered on rank 0, with the single-process full check against the float64 reference.
void check_gemm(const GemmCase& c, kd::Grid grid, kd::DistAlgorithm alg) {
  const kd::Communicator& comm = test_comm();
  SCOPED_TRACE(describe(c, grid, alg));
  const kd::DistGemmLayouts l = kd::dist_gemm_layouts(alg, grid, c.m, c.n, c.k, c.block);
  kd::DistMatrix A(comm, l.a, c.type), B(comm, l.b, c.type), C(comm, l.c, c.type);
  kd::fill_pattern(A, 11);
  kd::fill_pattern(B, 12);
  kd::fill_pattern(C, 13);
  const kd::DistMatrix C0 = C.clone();
  kd::DistGemmOptions opt;
  opt.algorithm = alg;
  const kd::DistGemmReport rep = kd::dist_gemm(comm, c.alpha, A, B, c.beta, C, opt);
  EXPECT_EQ(rep.grid, grid.name());
  EXPECT_FALSE(rep.kernel.empty());

  const kafel::GemmDesc desc{c.m,          c.n,     c.k,    kafel::Op::N,
                             kafel::Op::N, c.alpha, c.beta, kafel::GemmTypes::of(c.type)};
  const kafel::VerifyResult dv = kd::dist_verify_gemm(comm, desc, A, B, C0, C);
  EXPECT_TRUE(dv.passed) << dv.message;

  const Matrix ga = kd::gather(comm, A), gb = kd::gather(comm, B), gc0 = kd::gather(comm, C0),
               gc = kd::gather(comm, C);
  if (comm.rank() != 0) return;
  kafel::VerifyOptions full;
  full.method = kafel::VerifyMethod::Full;
  const kafel::VerifyResult v =
      kafel::verify_gemm(desc, ga.view(), gb.view(), gc0.view(), gc.view(), full);
  EXPECT_TRUE(v.passed) << v.message;
}

}  // namespace

TEST(DistGemm, SummaOnEveryGridOddSizesAndBlocks) {
  const std::vector<GemmCase> cases = {
      {37, 29, 41, 8, DType::f32, 1.0, 0.0},  // blocks that divide nothing
      {64, 33, 100, 16, DType::f64, 0.5, -1.5},
      {23, 40, 31, 7, DType::i32, 2.0, 3.0},  // exact modulo 2^32
      {5, 3, 2, 4, DType::f32, 1.0, 1.0},     // fewer blocks than processes
  };
  for (const kd::Grid& g : grids_of(test_comm().size()))
    for (const GemmCase& c : cases) check_gemm(c, g, kd::DistAlgorithm::Summa);
}

TEST(DistGemm, SummaNarrowOutputAccumulatesWide) {
  // bf16 C summed across panels in f32 and rounded once.
  const GemmCase c{31, 26, 45, 8, DType::bf16, 1.0, 0.5};
  check_gemm(c, kd::default_grid(test_comm().size()), kd::DistAlgorithm::Summa);
}

TEST(DistGemm, SummaWithoutOverlapGivesTheSameResult) {
  const kd::Communicator& comm = test_comm();
  const kd::Grid g = kd::default_grid(comm.size());
  const auto l = kd::dist_gemm_layouts(kd::DistAlgorithm::Summa, g, 30, 20, 50, 8);
  kd::DistMatrix A(comm, l.a, DType::f64), B(comm, l.b, DType::f64), C1(comm, l.c, DType::f64);
  kd::fill_pattern(A, 1);
  kd::fill_pattern(B, 2);
  kd::DistMatrix C2 = C1.clone();
  kd::DistGemmOptions opt;
  kd::dist_gemm(comm, 1.0, A, B, 0.0, C1, opt);
  opt.overlap = false;
  const kd::DistGemmReport rep = kd::dist_gemm(comm, 1.0, A, B, 0.0, C2, opt);
  EXPECT_FALSE(rep.overlap);
  EXPECT_EQ(rep.panels, 7);
  for (std::int64_t i = 0; i < C1.local().rows(); ++i)
    for (std::int64_t j = 0; j < C1.local().cols(); ++j)
      ASSERT_EQ(C1.local().get(i, j), C2.local().get(i, j)) << i << "," << j;
}

TEST(DistGemm, RowsRung) {
  const int p = test_comm().size();
  check_gemm({41, 27, 33, 0, DType::f32, 1.0, 0.0}, {p, 1}, kd::DistAlgorithm::Rows);
  check_gemm({3, 9, 2, 0, DType::f64, -1.0, 2.0}, {p, 1}, kd::DistAlgorithm::Rows);
}

TEST(DistGemm, FreivaldsCatchesOneWrongElement) {
  const kd::Communicator& comm = test_comm();
  const kd::Grid g = kd::default_grid(comm.size());
  const auto l = kd::dist_gemm_layouts(kd::DistAlgorithm::Summa, g, 20, 20, 20, 8);
  kd::DistMatrix A(comm, l.a, DType::f32), B(comm, l.b, DType::f32), C(comm, l.c, DType::f32);
  kd::fill_pattern(A, 3);
  kd::fill_pattern(B, 4);
  const kd::DistMatrix C0 = C.clone();
  kd::dist_gemm(comm, 1.0, A, B, 0.0, C);
  // Element (19, 19) lives on the last rank; only that rank changes it, every rank must see it.
  if (C.local().rows() > 0 && l.c.row_owner(19) == C.prow() && l.c.col_owner(19) == C.pcol())
    C.local().set(l.c.local_row(19), l.c.local_col(19),
                  C.local().get(l.c.local_row(19), l.c.local_col(19)) + 0.01);
  const kafel::GemmDesc desc{20, 20, 20, kafel::Op::N, kafel::Op::N, 1.0, 0.0, DType::f32};
  const kafel::VerifyResult v = kd::dist_verify_gemm(comm, desc, A, B, C0, C);
  EXPECT_FALSE(v.passed);
}

TEST(DistGemm, BadInputOnOneRankIsAnErrorOnEveryRank) {
  const kd::Communicator& comm = test_comm();
  const kd::Grid g = kd::default_grid(comm.size());
  const auto l = kd::dist_gemm_layouts(kd::DistAlgorithm::Summa, g, 16, 16, 16, 4);
  kd::DistMatrix A(comm, l.a, DType::f32), B(comm, l.b, DType::f32), C(comm, l.c, DType::f32);
  // The last rank's C is not the block its layout gives it.
  if (comm.rank() == comm.size() - 1) C.local() = Matrix(DType::f32, 1, 1);
  try {
    kd::dist_gemm(comm, 1.0, A, B, 0.0, C);
    ADD_FAILURE() << "no error";
  } catch (const kafel::InvalidArgument& e) {
    EXPECT_TRUE(kd::is_agreed(e));
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(comm.size() - 1)),
              std::string::npos)
        << e.what();
  }
  // A problem that differs between ranks (alpha) is refused on every rank too.
  kd::DistMatrix C2(comm, l.c, DType::f32);
  EXPECT_THROW(kd::dist_gemm(comm, comm.rank() == 0 ? 1.0 : 2.0, A, B, 0.0, C2),
               kafel::InvalidArgument);
}

TEST(DistMatrix, ScatterThenGatherIsTheIdentity) {
  const kd::Communicator& comm = test_comm();
  for (const kd::Grid& g : grids_of(comm.size())) {
    const kd::BlockLayout layout{13, 11, 3, 4, g};
    Matrix global;
    if (comm.rank() == 0) {
      global = Matrix(DType::f64, 13, 11);
      kd::fill_pattern(global.view(), 99);
    }
    kd::DistMatrix d(comm, layout, DType::f64);
    const kafel::MatrixView view = global.view();
    kd::scatter(comm, comm.rank() == 0 ? &view : nullptr, d);
    // The dealt-out blocks equal the pattern generated in place.
    kd::DistMatrix want(comm, layout, DType::f64);
    kd::fill_pattern(want, 99);
    for (std::int64_t i = 0; i < d.local().rows(); ++i)
      for (std::int64_t j = 0; j < d.local().cols(); ++j)
        ASSERT_EQ(d.local().get(i, j), want.local().get(i, j)) << g.name();
    const Matrix back = kd::gather(comm, d);
    if (comm.rank() != 0) continue;
    for (std::int64_t i = 0; i < 13; ++i)
      for (std::int64_t j = 0; j < 11; ++j) ASSERT_EQ(back.get(i, j), global.get(i, j));
  }
}

// ---- covariance -------------------------------------------------------------------------------

namespace {

constexpr std::int64_t kChannels = 6;

// Channel c at global sample g: a large offset mean (the case that loses digits in naive sums)
// plus a deterministic signal and noise.
float sample(std::int64_t c, std::int64_t g) {
  const std::uint64_t h = (std::uint64_t(g) * 0x9E3779B97F4A7C15ull) ^ (std::uint64_t(c) << 40);
  const double noise = double((h >> 11) % 100000) / 50000.0 - 1.0;
  return float(1000.0 + 25.0 * double(c) + std::sin(0.01 * double(g) + double(c)) + noise);
}

// Planar samples [first, first + count) of every channel.
std::vector<float> signal(std::int64_t first, std::int64_t count) {
  std::vector<float> x(std::size_t(kChannels * count));
  for (std::int64_t c = 0; c < kChannels; ++c)
    for (std::int64_t n = 0; n < count; ++n) x[std::size_t(c * count + n)] = sample(c, first + n);
  return x;
}

// Rank r's share: uneven (the last rank's is the largest), `empty_rank` gets none.
std::int64_t share(int r, int empty_rank) {
  return r == empty_rank ? 0 : 1000 + 737 * std::int64_t(r);
}

void check_split_covariance(int empty_rank) {
  const kd::Communicator& comm = test_comm();
  std::int64_t first = 0, total = 0;
  for (int r = 0; r < comm.size(); ++r) {
    if (r < comm.rank()) first += share(r, empty_rank);
    total += share(r, empty_rank);
  }
  const std::int64_t mine = share(comm.rank(), empty_rank);
  const std::vector<float> local = signal(first, mine);
  const kafel::SamplesView view{local.data(), kChannels, mine, kafel::SampleLayout::Planar, 0};
  const kd::DistCovReport rep = kd::dist_covariance(comm, view);
  EXPECT_EQ(rep.local_samples, mine);
  EXPECT_EQ(rep.result.samples, total);

  const std::vector<float> all = signal(0, total);
  const kafel::CovResult ref =
      kafel::reference_covariance({all.data(), kChannels, total, kafel::SampleLayout::Planar, 0});
  EXPECT_LT(kafel::cov_rel_err(rep.result, ref), 1e-6);
  for (std::int64_t c = 0; c < kChannels; ++c)
    EXPECT_NEAR(rep.result.mean[std::size_t(c)], ref.mean[std::size_t(c)], 1e-9 * 1100);
}

}  // namespace

TEST(DistCov, SamplesSplitUnevenlyWithOffsetMean) {
  check_split_covariance(-1);
}

TEST(DistCov, ARankWithNoSamples) {
  check_split_covariance(0);
}

TEST(DistCov, ChannelCountDifferingOnOneRankIsAnErrorOnEveryRank) {
  const kd::Communicator& comm = test_comm();
  const std::int64_t channels = comm.rank() == comm.size() - 1 ? 3 : 4;
  const std::vector<float> x(std::size_t(channels * 50), 1.0f);
  const kafel::SamplesView view{x.data(), channels, 50, kafel::SampleLayout::Planar, 0};
  EXPECT_THROW(kd::dist_covariance(comm, view), kafel::InvalidArgument);
}

TEST(DistCov, StreamDealtToRanksGivesEveryBlockInOrderOnRankZero) {
  const kd::Communicator& comm = test_comm();
  const kafel::CovDesc desc{kChannels, 2000, kafel::SampleLayout::Planar, 1};
  const std::int64_t blocks = 2 * comm.size() + 1;  // an uneven deal
  kafel::CovBlockSource source;
  source.fill = [&](std::int64_t b, float* buf) {
    const std::vector<float> x = signal(b * desc.samples, desc.samples);
    std::copy(x.begin(), x.end(), buf);
    return true;
  };
  const kafel::CovChoice choice = kafel::choose_cov(comm.device(), desc);
  std::vector<std::int64_t> order;
  double worst = 0;
  const kd::DistCovStreamStats st = kd::dist_cov_stream(
      comm, choice, desc, source, blocks, kafel::CovStreamOptions{}, {},
      [&](std::int64_t b, const kafel::CovResult& r) {
        order.push_back(b);
        const std::vector<float> x = signal(b * desc.samples, desc.samples);
        const kafel::CovResult ref = kafel::reference_covariance(
            {x.data(), kChannels, desc.samples, kafel::SampleLayout::Planar, 0});
        worst = std::max(worst, kafel::cov_rel_err(r, ref));
      });
  if (comm.rank() != 0) {
    EXPECT_TRUE(order.empty());
    return;
  }
  ASSERT_EQ(std::int64_t(order.size()), blocks);
  for (std::int64_t b = 0; b < blocks; ++b) EXPECT_EQ(order[std::size_t(b)], b);
  EXPECT_LT(worst, 1e-6);
  EXPECT_EQ(st.job.blocks, blocks);
  EXPECT_EQ(std::int64_t(st.job.latency_ms.size()), blocks);
  ASSERT_EQ(int(st.rank_blocks.size()), comm.size());
  std::int64_t sum = 0;
  for (std::int64_t n : st.rank_blocks) sum += n;
  EXPECT_EQ(sum, blocks);
}

TEST(DistComm, GridParsingAndDefaults) {
  EXPECT_EQ(kd::Grid::parse("2x3").name(), "2x3");
  EXPECT_THROW(kd::Grid::parse("2x"), kafel::InvalidArgument);
  EXPECT_THROW(kd::Grid::parse("0x2"), kafel::InvalidArgument);
  EXPECT_EQ(kd::default_grid(4).name(), "2x2");
  EXPECT_EQ(kd::default_grid(3).name(), "1x3");
  EXPECT_EQ(kd::default_grid(2).name(), "1x2");
}
