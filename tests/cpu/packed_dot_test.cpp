// The dot-product paths of cpu.packed (bf16 pairs, i8 quads with the +128 correction, i8 as
// int16 pairs, AMX tiles) on every ISA this CPU has: exact int8 at the ends of the int32
// range, bf16 against the float64 reference of the bf16-rounded inputs, edge sizes of the
// grouped k and of the tiles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/problems.hpp"
#include "cpu/cpu_features.hpp"
#include "cpu/packed_gemm.hpp"
#include "kafel/error.hpp"
#include "kafel/gemm.hpp"
#include "kafel/matrix.hpp"

namespace kafel {
namespace {

using cpu::Isa;

std::vector<Isa> isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512})
    if (cpu::isa_supported(isa)) out.push_back(isa);
  return out;
}

std::string isa_name(const ::testing::TestParamInfo<Isa>& info) {
  return std::string(cpu::to_string(info.param));
}

class PackedDot : public ::testing::TestWithParam<Isa> {
 protected:
  GemmOptions options(Params extra = {}) const {
    extra["isa"] = static_cast<int>(GetParam());
    return {"cpu.packed", extra, {}};
  }
  // The AMX settings that select distinct paths here: off (the vector dot products) and, where
  // this ISA's set has tile kernels, on.
  std::vector<int> amx_modes() const {
    std::vector<int> out = {int(cpu::AmxUse::off)};
    if (cpu::amx_refusal(GetParam(), cpu::AmxUse::on).empty()) out.push_back(int(cpu::AmxUse::on));
    return out;
  }
};

// An i8 matrix (tight, row-major) holding one value everywhere.
Matrix filled_i8(std::int64_t rows, std::int64_t cols, int value) {
  Matrix m(DType::i8, rows, cols);
  std::memset(m.data(), value, std::size_t(rows * cols));
  return m;
}

// The ends of the range: -128 x -128 (the largest product, and the value the +128 offset
// maps to 0) and -128 x 127, summed over k = 131071 terms: +-2147467264 and -2130706432,
// within 16384 of the int32 limits. Once in one KC block (the column-sum correction is
// then that large) and once in the default blocks.
TEST_P(PackedDot, Int8ExactAtTheEndsOfTheInt32Range) {
  const std::int64_t m = 7, n = 19, k = 131071;
  for (int amx : amx_modes())
    for (int b_value : {-128, 127})
      for (std::int64_t kc : {std::int64_t(0), k + 1}) {
        const Matrix a = filled_i8(m, k, -128), b = filled_i8(k, n, b_value);
        Matrix c(DType::i32, m, n);
        gemm(select_device("cpu"), Op::N, Op::N, 1.0, a, b, 0.0, c,
             options({{"KC", kc}, {"AMX", amx}}));
        const double expected = double(k) * -128.0 * b_value;
        ASSERT_LE(std::abs(expected), 2147483647.0);
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j)
            ASSERT_EQ(c.get(i, j), expected)
                << i << "," << j << " b=" << b_value << " KC=" << kc << " AMX=" << amx;
      }
}

// Random int8 over the whole range (-128..127), every transpose, odd k (partial groups of 2
// and 4), alpha / beta: exact against the reference (integer compute wraps modulo 2^32).
TEST_P(PackedDot, Int8RandomFullRangeExact) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(-128, 127);
  for (int amx : amx_modes())
    for (Op oa : {Op::N, Op::T})
      for (Op ob : {Op::N, Op::T})
        for (std::int64_t k : {1, 3, 5, 66, 1027}) {
          const std::int64_t m = amx == int(cpu::AmxUse::on) ? 45 : 13, n = 41;
          Matrix a(DType::i8, oa == Op::N ? m : k, oa == Op::N ? k : m);
          Matrix b(DType::i8, ob == Op::N ? k : n, ob == Op::N ? n : k);
          for (Matrix* x : {&a, &b})
            for (std::int64_t i = 0; i < x->rows(); ++i)
              for (std::int64_t j = 0; j < x->cols(); ++j) x->set(i, j, dist(rng));
          Matrix c(DType::i32, m, n), expected(DType::i32, m, n);
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
              c.set(i, j, dist(rng));
              expected.set(i, j, c.get(i, j));
            }
          gemm(select_device("cpu"), oa, ob, -3.0, a, b, 2.0, c,
               options({{"KC", 64}, {"AMX", amx}}));
          reference_gemm(oa, ob, -3.0, a, b, 2.0, expected);
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j)
              ASSERT_EQ(c.get(i, j), expected.get(i, j))
                  << i << "," << j << " k=" << k << " " << to_string(oa) << to_string(ob)
                  << " AMX=" << amx;
        }
}

// c = a b in f32 from bf16 inputs against the float64 reference `ref` of the same stored
// inputs: the only error is the f32 accumulation, within ~(k + 2) ulps of sum |a| |b|.
void expect_within_f32_accumulation(const MatrixView& a, const MatrixView& b, const MatrixView& c,
                                    const MatrixView& ref) {
  const std::int64_t k = a.cols;
  for (std::int64_t i = 0; i < c.rows; ++i)
    for (std::int64_t j = 0; j < c.cols; ++j) {
      double abs_sum = 0;
      for (std::int64_t p = 0; p < k; ++p) abs_sum += std::abs(a.get(i, p) * b.get(p, j));
      const double bound = (double(k) + 2) * std::ldexp(1.0, -24) * abs_sum + 1e-30;
      ASSERT_LE(std::abs(c.get(i, j) - ref.get(i, j)), bound) << i << "," << j << " k=" << k;
    }
}

// The default blocking of the dot formats (KC up to 2048 i8 / 1024 bf16 values): several k
// blocks, the last with a partial group, several B panels (the last partial), leading
// dimensions wider than the matrices, through the word-group packing of row-major operands.
TEST_P(PackedDot, DefaultBlocksSeveralPanelsAndLeadingDimensions) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> dist(-128, 127);
  const std::int64_t m = 23, n = 201, k = 4099, pad = 5;
  std::vector<std::int8_t> a(std::size_t(m * (k + pad))), b(std::size_t(k * (n + pad)));
  for (auto& v : a) v = std::int8_t(dist(rng));
  for (auto& v : b) v = std::int8_t(dist(rng));
  const MatrixView av{DType::i8, a.data(), m, k, k + pad, Layout::RowMajor};
  const MatrixView bv{DType::i8, b.data(), k, n, n + pad, Layout::RowMajor};
  Matrix expected(DType::i32, m, n);
  reference_gemm(Op::N, Op::N, 1.0, av, bv, 0.0, expected.view());
  for (int amx : amx_modes()) {
    Matrix c(DType::i32, m, n);
    gemm(select_device("cpu"), Op::N, Op::N, 1.0, av, bv, 0.0, c.view(), options({{"AMX", amx}}));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        ASSERT_EQ(c.get(i, j), expected.get(i, j)) << i << "," << j << " AMX=" << amx;
  }

  std::normal_distribution<float> normal(0.f, 1.f);
  Matrix x(DType::bf16, m, k + pad), y(DType::bf16, k, n + pad);
  for (Matrix* z : {&x, &y})
    for (std::int64_t i = 0; i < z->rows(); ++i)
      for (std::int64_t j = 0; j < z->cols(); ++j) z->set(i, j, normal(rng));
  const MatrixView xv{DType::bf16, x.data(), m, k, k + pad, Layout::RowMajor};
  const MatrixView yv{DType::bf16, y.data(), k, n, n + pad, Layout::RowMajor};
  Matrix ref(DType::f64, m, n);
  reference_gemm(Op::N, Op::N, 1.0, xv, yv, 0.0, ref.view());
  for (int amx : amx_modes()) {
    SCOPED_TRACE("AMX=" + std::to_string(amx));
    Matrix f(DType::f32, m, n);
    gemm(select_device("cpu"), Op::N, Op::N, 1.0, xv, yv, 0.0, f.view(), options({{"AMX", amx}}));
    expect_within_f32_accumulation(xv, yv, f.view(), ref.view());
  }
}

// bf16 -> f32 against the float64 reference of the stored (bf16-rounded) inputs, on both bf16
// paths this ISA has (widened for the f32 FMA, and the pairs where it has their kernel), with
// every transpose; asking for pairs where there are none is refused before anything runs.
TEST_P(PackedDot, Bf16MatchesTheReferenceOfRoundedInputs) {
  std::mt19937 rng(3);
  std::normal_distribution<double> dist(0.0, 1.0);
  // Each path as {BF16, AMX}: automatic (AMX where there are tiles), widened, pairs, tiles.
  std::vector<std::pair<cpu::Bf16Path, int>> paths = {{cpu::Bf16Path::automatic, 0},
                                                      {cpu::Bf16Path::f32, 0}};
  if (amx_modes().size() > 1) paths.push_back({cpu::Bf16Path::automatic, int(cpu::AmxUse::on)});
  if (cpu::bf16_path_refusal(GetParam(), cpu::Bf16Path::dot).empty()) {
    paths.push_back({cpu::Bf16Path::dot, 0});
  } else {
    Matrix x(DType::bf16, 2, 2), y(DType::f32, 2, 2);
    EXPECT_THROW(gemm(select_device("cpu"), Op::N, Op::N, 1.0, x, x, 0.0, y,
                      options({{"BF16", int(cpu::Bf16Path::dot)}})),
                 Unsupported);
  }
  for (const auto& [path, amx] : paths)
    for (std::int64_t k : {1, 2, 7, 515})
      for (Op op_a : {Op::N, Op::T})
        for (Op op_b : {Op::N, Op::T}) {
          const std::int64_t m = 19 + (amx ? 32 : 0), n = 70;
          Matrix a(DType::bf16, op_a == Op::N ? m : k, op_a == Op::N ? k : m);
          Matrix b(DType::bf16, op_b == Op::N ? k : n, op_b == Op::N ? n : k);
          for (Matrix* x : {&a, &b})
            for (std::int64_t i = 0; i < x->rows(); ++i)
              for (std::int64_t j = 0; j < x->cols(); ++j) x->set(i, j, dist(rng));
          Matrix c(DType::f32, m, n), expected(DType::f64, m, n);
          gemm(select_device("cpu"), op_a, op_b, 1.0, a, b, 0.0, c,
               options({{"KC", 128}, {"BF16", int(path)}, {"AMX", amx}}));
          reference_gemm(op_a, op_b, 1.0, a, b, 0.0, expected);
          SCOPED_TRACE("BF16=" + std::to_string(int(path)) + " AMX=" + std::to_string(amx) +
                       " k=" + std::to_string(k));
          expect_within_f32_accumulation(op_a == Op::N ? a.view() : a.view().transposed(),
                                         op_b == Op::N ? b.view() : b.view().transposed(), c.view(),
                                         expected.view());
        }
}

// The packed format each ISA uses: the dot-product formats exactly where the set has them.
TEST_P(PackedDot, FormatFollowsTheMicroKernels) {
  const Isa isa = GetParam();
  using cpu::Format;
  const Format bf16 = cpu::packed_format(isa, DType::bf16);
  const Format i8 = cpu::packed_format(isa, DType::i8);
  if (isa == Isa::generic) {
    EXPECT_EQ(bf16, Format::bf16x2);
    EXPECT_EQ(i8, Format::u8s8x4);
  }
  if (isa == Isa::avx2) {
    EXPECT_EQ(bf16, Format::f32);
    EXPECT_EQ(i8, Format::i16x2);
  }
  if (isa == Isa::avx512 && cpu::cpu_has_amx()) {  // the tiles, unless told otherwise
    EXPECT_EQ(bf16, Format::amx_bf16);
    EXPECT_EQ(i8, Format::amx_i8);
    EXPECT_EQ(cpu::packed_format(isa, DType::bf16, cpu::Bf16Path::f32), Format::f32);
    EXPECT_EQ(cpu::packed_format(isa, DType::i8, cpu::Bf16Path::automatic, cpu::AmxUse::off),
              Format::u8s8x4);
    EXPECT_THROW(cpu::packed_format(isa, DType::bf16, cpu::Bf16Path::f32, cpu::AmxUse::on),
                 Unsupported);
    // BF16 speaks of bf16 only: i8 takes the tiles whatever it says.
    EXPECT_EQ(cpu::packed_format(isa, DType::i8, cpu::Bf16Path::f32, cpu::AmxUse::on),
              Format::amx_i8);
  } else if (isa == Isa::avx512) {
    EXPECT_EQ(bf16, cpu::cpu_bf16_dot_pays() ? Format::bf16x2 : Format::f32);
    EXPECT_EQ(cpu::packed_format(isa, DType::bf16, cpu::Bf16Path::f32), Format::f32);
    if (cpu::cpu_has_avx512_bf16())
      EXPECT_EQ(cpu::packed_format(isa, DType::bf16, cpu::Bf16Path::dot), Format::bf16x2);
    else
      EXPECT_THROW(cpu::packed_format(isa, DType::bf16, cpu::Bf16Path::dot), Unsupported);
    EXPECT_EQ(i8, cpu::cpu_has_avx512_vnni() ? Format::u8s8x4 : Format::i16x2);
  }
  if (isa != Isa::avx512 || !cpu::cpu_has_amx()) {  // asking for tiles where there are none
    EXPECT_THROW(cpu::packed_format(isa, DType::i8, cpu::Bf16Path::automatic, cpu::AmxUse::on),
                 Unsupported);
  }
  // AMX=on concerns bf16 and i8 alone.
  EXPECT_EQ(cpu::packed_format(isa, DType::f32, cpu::Bf16Path::automatic, cpu::AmxUse::on),
            Format::f32);
  EXPECT_EQ(cpu::packed_format(isa, DType::f64), Format::f64);
  EXPECT_EQ(cpu::packed_format(isa, DType::i32), Format::u32);
  EXPECT_EQ(cpu::packed_format(isa, DType::f16), Format::f32);
}

// AMX against the vector path with general alpha and beta (the tile kernels' buffered
// epilogue) and C row strides that are not tile multiples: i8 bit-exact (both wrap modulo 2^32),
// bf16 within the f32 accumulation bound of the reference. Refused cleanly where absent.
TEST_P(PackedDot, AmxTilesAgreeWithTheVectorPath) {
  if (amx_modes().size() < 2) {
    Matrix x(DType::i8, 2, 2), y(DType::i32, 2, 2);
    EXPECT_THROW(gemm(select_device("cpu"), Op::N, Op::N, 1.0, x, x, 0.0, y,
                      options({{"AMX", int(cpu::AmxUse::on)}})),
                 Unsupported);
    GTEST_SKIP() << "no AMX tile kernels for " << cpu::to_string(GetParam()) << " here";
  }
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> small(-128, 127);
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::int64_t m = 67, n = 97, k = 4161;  // 2 tiles + 3 rows, 3 tiles + 1, 65 steps + 1
  for (auto [alpha, beta] : {std::pair{1.0, 1.0}, {2.0, -1.0}, {-1.0, 0.0}, {1.0, 3.0}}) {
    SCOPED_TRACE("alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta));
    Matrix a(DType::i8, m, k), b(DType::i8, k, n), tiles(DType::i32, m, n),
        vector(DType::i32, m, n);
    for (Matrix* x : {&a, &b, &tiles})
      for (std::int64_t i = 0; i < x->rows(); ++i)
        for (std::int64_t j = 0; j < x->cols(); ++j) x->set(i, j, small(rng));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) vector.set(i, j, tiles.get(i, j));
    gemm(select_device("cpu"), Op::N, Op::N, alpha, a, b, beta, tiles,
         options({{"AMX", int(cpu::AmxUse::on)}, {"KC", 1024}}));
    gemm(select_device("cpu"), Op::N, Op::N, alpha, a, b, beta, vector,
         options({{"AMX", int(cpu::AmxUse::off)}}));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        ASSERT_EQ(tiles.get(i, j), vector.get(i, j)) << i << "," << j;

    Matrix x(DType::bf16, m, k), y(DType::bf16, k, n), f(DType::f32, m, n), ref(DType::f64, m, n);
    for (Matrix* z : {&x, &y})
      for (std::int64_t i = 0; i < z->rows(); ++i)
        for (std::int64_t j = 0; j < z->cols(); ++j) z->set(i, j, normal(rng));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        f.set(i, j, double(small(rng)));
        ref.set(i, j, f.get(i, j));
      }
    gemm(select_device("cpu"), Op::N, Op::N, alpha, x, y, beta, f,
         options({{"AMX", int(cpu::AmxUse::on)}, {"KC", 512}}));
    reference_gemm(Op::N, Op::N, alpha, x, y, beta, ref);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double abs_sum = 0;
        for (std::int64_t p = 0; p < k; ++p) abs_sum += std::abs(x.get(i, p) * y.get(p, j));
        const double bound = (double(k) + 8) * std::ldexp(1.0, -24) *
                             (std::abs(alpha) * abs_sum + std::abs(beta * ref.get(i, j)) + 4);
        ASSERT_LE(std::abs(f.get(i, j) - ref.get(i, j)), bound) << i << "," << j;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, PackedDot, ::testing::ValuesIn(isas()), isa_name);

}  // namespace
}  // namespace kafel
