// cpu.packed against the float64 reference with every micro-kernel this CPU can run (forced
// through the `isa` parameter): sizes around MR, NR, MC, KC, NC, transposes, layouts, scalars.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "common/problems.hpp"
#include "core/backend.hpp"
#include "cpu/blocking.hpp"
#include "cpu/cpu_features.hpp"
#include "cpu/packed_gemm.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"

namespace kafel {
namespace {

using cpu::Isa;

struct Case {
  Isa isa;
  GemmTypes type;
};

// bf16 -> f32: C in f32 (the other roles are natural: bf16 C, i8 -> i32 C).
GemmTypes bf16_to_f32() {
  GemmTypes t = DType::bf16;
  t.c = DType::f32;
  return t;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512})
    if (cpu::isa_supported(isa))
      for (GemmTypes t :
           {GemmTypes(DType::f32), GemmTypes(DType::f64), GemmTypes(DType::i32),
            GemmTypes(DType::f16), GemmTypes(DType::bf16), bf16_to_f32(), GemmTypes(DType::i8)})
        out.push_back({isa, t});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = std::string(cpu::to_string(info.param.isa)) + "_" + info.param.type.name();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// The block sizes cpu.packed derives for a case (its packed format on that ISA).
cpu::Blocking blocks(Isa isa, const GemmTypes& t, const cpu::CacheSizes& c) {
  return cpu::blocking_for(isa, cpu::packed_format(isa, t.a), c);
}

class Packed : public ::testing::TestWithParam<Case> {
 protected:
  // Small cache blocks (a few tiles each), so shapes one past MC, KC and NC stay cheap.
  Params small_blocks(int threads) const {
    const auto b = blocks(GetParam().isa, GetParam().type, {});
    return {{"isa", static_cast<int>(GetParam().isa)},
            {"threads", threads},
            {"KC", 24},
            {"MC", 2 * b.mr},
            {"NC", 2 * b.nr}};
  }
  cpu::Blocking tile() const { return blocks(GetParam().isa, GetParam().type, {}); }

  void check(const test::Shape& s, Op oa, Op ob, double alpha, double beta, const Params& params,
             test::ProblemOptions opt = {}) {
    const GemmTypes t = GetParam().type;
    GemmDesc d{s.m, s.n, s.k, oa, ob, test::scalar_for(t, alpha), test::scalar_for(t, beta), t};
    auto p = test::make_problem(d, opt);
    const auto r = test::run_and_verify(select_device("cpu"), "cpu.packed", p, params);
    EXPECT_TRUE(r.passed) << test::describe("cpu.packed", p, opt) << " " << format_params(params)
                          << ": " << r.message;
  }
};

// Every size below, at and one past MR, NR, MC (= 2 MR), KC (= 24) and NC (= 2 NR).
TEST_P(Packed, EdgesOfEveryBlock) {
  const auto b = tile();
  const std::int64_t mr = b.mr, nr = b.nr, kc = 24;
  const std::vector<std::int64_t> ms{1, mr - 1, mr, mr + 1, 2 * mr, 2 * mr + 1, 5 * mr + 3};
  const std::vector<std::int64_t> ns{1, nr - 1, nr, nr + 1, 2 * nr, 2 * nr + 1};
  const std::vector<std::int64_t> ks{1, kc - 1, kc, kc + 1, 3 * kc + 5};
  std::uint64_t seed = 1;
  for (auto m : ms)
    for (auto n : ns) {
      const auto k = ks[seed % ks.size()];
      const Op oa = seed & 1 ? Op::T : Op::N, ob = seed & 2 ? Op::T : Op::N;
      test::ProblemOptions opt;
      opt.seed = ++seed;
      check({m, n, k}, oa, ob, 1.0, seed % 3 ? 0.0 : 0.5, small_blocks(1), opt);
    }
  for (auto k : ks) check({mr + 1, nr + 1, k}, Op::N, Op::N, -1.5, 2.0, small_blocks(2));
}

// The shared odd shapes (1x1x1, primes such as 127x61x257, k = 0, skinny) x all four
// transpose combinations, default block sizes, alpha/beta != 1 and beta = 0 (C poisoned).
TEST_P(Packed, OddShapesAllTransposes) {
  const Params params{{"isa", static_cast<int>(GetParam().isa)}};
  std::uint64_t seed = 50;
  for (const auto& s : test::odd_shapes())
    for (Op oa : {Op::N, Op::T})
      for (Op ob : {Op::N, Op::T}) {
        test::ProblemOptions opt;
        opt.seed = ++seed;
        check(s, oa, ob, seed % 2 ? -1.5 : 1.0, seed % 3 ? 0.0 : 0.25, params, opt);
      }
}

// Both layouts of every operand with ld > cols; the framework turns them into row-major.
TEST_P(Packed, LayoutsAndLeadingDimensions) {
  const Layout R = Layout::RowMajor, C = Layout::ColMajor;
  std::uint64_t seed = 200;
  for (Layout la : {R, C})
    for (Layout lb : {R, C})
      for (Layout lc : {R, C}) {
        test::ProblemOptions opt{la, lb, lc, 5, false, ++seed};
        check({37, 71, 53}, Op::N, Op::T, 2.0, -0.75, small_blocks(2), opt);
      }
}

// 1, 2 and 3 threads (3 > cores here: the split must still cover every tile exactly once),
// on a square shape (split over n) and on tall and wide skinny shapes.
TEST_P(Packed, ThreadCounts) {
  const auto b = tile();
  const std::vector<test::Shape> shapes{
      {7 * b.mr + 2, 5 * b.nr + 3, 61}, {23 * b.mr + 1, 3, 40}, {2, 9 * b.nr + 1, 33}};
  std::uint64_t seed = 300;
  for (int threads : {1, 2, 3})
    for (const auto& s : shapes) {
      test::ProblemOptions opt;
      opt.seed = ++seed;
      check(s, Op::T, Op::N, 1.0, 0.5, small_blocks(threads), opt);
      Params defaults{{"isa", static_cast<int>(GetParam().isa)}, {"threads", threads}};
      check(s, Op::N, Op::T, -1.0, 0.0, defaults, opt);
    }
}

// Small integer inputs: every type must match the reference exactly (i32 also wraps).
TEST_P(Packed, ExactOnIntegerValuedInputs) {
  for (int threads : {1, 2}) {
    GemmDesc d{29, 3 * tile().nr + 1, 100, Op::N, Op::N, 1.0, 1.0, GetParam().type};
    test::ProblemOptions opt;
    opt.integer_values = true;
    auto p = test::make_problem(d, opt);
    const Matrix expected = p.c.clone();
    reference_gemm(d.op_a, d.op_b, d.alpha, p.a, p.b, d.beta, expected);
    test::run_and_verify(select_device("cpu"), "cpu.packed", p, small_blocks(threads));
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j)
        ASSERT_EQ(p.c.get(i, j), expected.get(i, j)) << "element " << i << "," << j;
  }
}

// The block sizes the kernel really uses (from this machine's caches): k one past KC and
// m one past a register tile, so the accumulation over k blocks is exercised as shipped.
TEST_P(Packed, DefaultBlocksOnePastKc) {
  const auto b = blocks(GetParam().isa, GetParam().type, cpu::cache_sizes());
  const Params params{{"isa", static_cast<int>(GetParam().isa)}};
  check({b.mr + 1, b.nr + 3, b.kc + 1}, Op::N, Op::N, 1.0, 0.0, params);
  check({b.mr + 1, b.nr + 3, b.kc + 1}, Op::T, Op::T, 0.5, -1.0, params);
}

// A read in place (APACK 0, row-major f32 / f64 / i32 A with no transpose) gives the same bits
// as A packed (APACK 1): the micro-kernel multiplies the same values in the same order. Edge
// panels (m one past a tile), k over several KC blocks, padded rows, beta != 0, 1 and 2 threads;
// the other types and a transposed A are packed either way and must agree too.
TEST_P(Packed, InPlaceAEqualsPackedA) {
  const auto b = tile();
  std::uint64_t seed = 400;
  for (Op oa : {Op::N, Op::T})
    for (int threads : {1, 2}) {
      const GemmTypes t = GetParam().type;
      GemmDesc d{3 * b.mr + 1,
                 2 * b.nr + 5,
                 3 * 24 + 7,
                 oa,
                 Op::N,
                 test::scalar_for(t, 1.5),
                 test::scalar_for(t, -0.5),
                 t};
      test::ProblemOptions opt;
      opt.ld_pad = 3;
      opt.seed = ++seed;
      auto in_place = test::make_problem(d, opt);
      auto packed = test::make_problem(d, opt);
      Params params = small_blocks(threads);
      params["APACK"] = 0;
      EXPECT_TRUE(
          test::run_and_verify(select_device("cpu"), "cpu.packed", in_place, params).passed);
      params["APACK"] = 1;
      EXPECT_TRUE(test::run_and_verify(select_device("cpu"), "cpu.packed", packed, params).passed);
      for (std::int64_t i = 0; i < d.m; ++i)
        for (std::int64_t j = 0; j < d.n; ++j)
          ASSERT_EQ(in_place.c.get(i, j), packed.c.get(i, j))
              << "element " << i << "," << j << " op(A) " << (oa == Op::N ? "N" : "T");
    }
}

INSTANTIATE_TEST_SUITE_P(Isas, Packed, ::testing::ValuesIn(cases()), case_name);

TEST(PackedSetup, IsaNamesAndSupport) {
  EXPECT_EQ(cpu::parse_isa("avx2"), Isa::avx2);
  EXPECT_EQ(cpu::parse_isa("generic"), Isa::generic);
  EXPECT_THROW(cpu::parse_isa("sse9"), InvalidArgument);
  EXPECT_TRUE(cpu::isa_supported(Isa::generic));
  EXPECT_TRUE(cpu::isa_supported(cpu::default_isa()));
}

TEST(PackedSetup, BlockSizesAreTileMultiples) {
  using cpu::Format;
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512})
    for (Format t : {Format::f32, Format::f64, Format::u32, Format::bf16x2, Format::i16x2,
                     Format::u8s8x4, Format::amx_bf16, Format::amx_i8}) {
      for (const cpu::CacheSizes& c : {cpu::cache_sizes(), cpu::CacheSizes{}}) {
        const auto b = cpu::blocking_for(isa, t, c);
        EXPECT_GT(b.kc, 0);
        EXPECT_EQ(b.mc % b.mr, 0);
        EXPECT_EQ(b.nc % b.nr, 0);
      }
      const auto o = cpu::blocking_for(isa, t, {}, 100, 7, 5);
      EXPECT_EQ(o.kc, 100);
      // AVX-512 f64 panels are at least 512 deep, also where L1 would give fewer (32 KiB).
      if (isa == Isa::avx512 && t == Format::f64) {
        EXPECT_GE(cpu::blocking_for(isa, t, cpu::CacheSizes{32 * 1024, 1 << 20, 32 << 20}).kc, 512);
      }
      EXPECT_EQ(o.mc % o.mr, 0);
      EXPECT_EQ(o.nc % o.nr, 0);
    }
}

TEST(PackedSetup, IsTheDefaultCpuKernel) {
  const Device cpu = select_device("cpu");
  for (DType t : {DType::f32, DType::f64, DType::i32, DType::f16, DType::bf16, DType::i8})
    EXPECT_EQ(choose_gemm(cpu, GemmDesc{512, 512, 512, Op::N, Op::N, 1, 0, t}).kernel, "cpu.packed")
        << to_string(t);
}

TEST(PackedSetup, BadParametersAreRejected) {
  const Device cpu = select_device("cpu");
  GemmDesc d{4, 4, 4, Op::N, Op::N, 1.0, 0.0, DType::f32};
  auto p = test::make_problem(d);
  EXPECT_THROW(test::run_and_verify(cpu, "cpu.packed", p, {{"isa", 7}}), InvalidArgument);
}

}  // namespace
}  // namespace kafel
