// The type table, the compute-mode table and element roles: exact conversions of every storage
// format (all bit patterns of the 8- and 16-bit floats), names and parsing, role checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>

#include "core/registry.hpp"
#include "kafel/error.hpp"
#include "kafel/types.hpp"

namespace kafel {
namespace {

// Every finite bit pattern of a 1- or 2-byte float decodes to a value that encodes back to
// the same bits (NaN patterns stay NaN), and the decoded values are strictly increasing.
template <class Bits>
void round_trips(DType t) {
  const int n = 1 << (8 * sizeof(Bits));
  for (int i = 0; i < n; ++i) {
    const auto bits = static_cast<Bits>(i);
    const double v = load_as_double(t, &bits);
    Bits back{};
    store_from_double(t, &back, v);
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(load_as_double(t, &back))) << to_string(t) << " " << i;
      continue;
    }
    if (v == 0) continue;  // +0 and -0 both round-trip to themselves below
    EXPECT_EQ(back, bits) << to_string(t) << " pattern " << i << " = " << v;
  }
}

TEST(Types, SixteenAndEightBitFloatsRoundTripEveryPattern) {
  round_trips<std::uint16_t>(DType::f16);
  round_trips<std::uint16_t>(DType::bf16);
  round_trips<std::uint8_t>(DType::e4m3);
  round_trips<std::uint8_t>(DType::e5m2);
}

TEST(Types, RoundToNearestEvenAndOverflow) {
  EXPECT_EQ(round_to(DType::bf16, 1.0 + 0x1p-8), 1.0);               // tie: to even (1.0)
  EXPECT_EQ(round_to(DType::bf16, 1.0 + 3 * 0x1p-8), 1.0 + 0x1p-6);  // tie: to even (up)
  EXPECT_EQ(round_to(DType::f16, 65504.0), 65504.0);
  EXPECT_TRUE(std::isinf(round_to(DType::f16, 65520.0)));  // rounds past the largest finite
  EXPECT_EQ(round_to(DType::e4m3, 448.0), 448.0);
  EXPECT_EQ(round_to(DType::e4m3, 460.0), 448.0);         // below the halfway point 464
  EXPECT_TRUE(std::isnan(round_to(DType::e4m3, 480.0)));  // e4m3 has no infinity
  EXPECT_EQ(round_to(DType::e5m2, 57344.0), 57344.0);
  EXPECT_TRUE(std::isinf(round_to(DType::e5m2, 1e6)));
  EXPECT_EQ(round_to(DType::e4m3, 0x1p-9), 0x1p-9);  // the smallest subnormal
  EXPECT_EQ(round_to(DType::e4m3, 0x1p-11), 0.0);    // below half of it
  EXPECT_EQ(round_to(DType::i8, 127.0), 127.0);
  EXPECT_EQ(round_to(DType::i8, 128.0), -128.0);  // integers wrap, as the kernels do
  EXPECT_EQ(round_to(DType::i32, 2.5), 2.0);
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
}

TEST(Types, TableIsConsistent) {
  for (const TypeInfo& t : all_types()) {
    EXPECT_EQ(&type_info(t.type), &t);
    EXPECT_EQ(parse_dtype(t.name), t.type);
    EXPECT_GT(t.size, 0u);
    if (t.kind == TypeKind::complex) {
      EXPECT_EQ(t.load, nullptr);
      EXPECT_THROW(load_as_double(t.type, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"), InvalidArgument);
    } else {
      EXPECT_NE(t.load, nullptr) << t.name;
      EXPECT_LE(round_to(t.type, t.max_value), t.max_value) << t.name;
    }
  }
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(parse_dtype("INT8"), DType::i8);
  EXPECT_EQ(unit_roundoff(DType::bf16), 0x1p-8);
  EXPECT_EQ(unit_roundoff(DType::i8), 0.0);
  EXPECT_THROW(parse_dtype("f8"), InvalidArgument);
}

TEST(Roles, NamesParseBackAndBadCombinationsAreRefused) {
  EXPECT_EQ(GemmTypes::of(DType::f32).name(), "f32");
  EXPECT_EQ(GemmTypes::of(DType::i8).c, DType::i32);
  EXPECT_EQ(GemmTypes::of(DType::e4m3).c, DType::bf16);
  EXPECT_EQ(GemmTypes::of(DType::f32, Compute::tf32x3).name(), "f32/3xtf32");
  GemmTypes bf = GemmTypes::of(DType::bf16);
  bf.c = DType::f32;
  EXPECT_EQ(bf.name(), "bf16->f32");
  for (const char* text : {"f32", "f32/tf32", "f32/3xtf32", "bf16->f32", "i8", "e4m3*e5m2",
                           "f16->f32", "f64", "e5m2->f32"})
    EXPECT_EQ(GemmTypes::parse(text).name(), text);
  EXPECT_THROW(GemmTypes::parse("f64/tf32"), InvalidArgument);  // tf32 takes f32 only
  EXPECT_THROW(GemmTypes::parse("i8->f32"), InvalidArgument);   // integer result in a float
  EXPECT_THROW(GemmTypes::parse("bf16->e4m3"), InvalidArgument);
  EXPECT_THROW(GemmTypes::parse("cf32"), InvalidArgument);
  EXPECT_THROW(GemmTypes::parse("->f32"), InvalidArgument);
  EXPECT_EQ(GemmTypes::of(DType::f32, Compute::tf32).input_roundoff(), 0x1p-11);
}

TEST(Roles, IntegerGemmRefusesFractionalScalars) {
  GemmDesc d{4, 4, 4, Op::N, Op::N, 0.5, 0.0, DType::i32};
  EXPECT_THROW(d.validate(), InvalidArgument);
  d.alpha = 3e9;  // outside int32
  EXPECT_THROW(d.validate(), InvalidArgument);
  d.alpha = -7;
  EXPECT_NO_THROW(d.validate());
}

TEST(Params, LabelsParseAndPrintByName) {
  ParamSpace s{
      {choice("isa", 0, {"auto", "generic", "avx2"}, true, ""), param("TS", 8, {8, 16}, 1, 64, "")},
      nullptr};
  const Params p = s.parse("isa=avx2,TS=16");
  EXPECT_EQ(p.at("isa"), 2);
  EXPECT_EQ(s.format(p), "TS=16 isa=avx2");
  EXPECT_THROW(s.parse("isa=sse"), InvalidArgument);
  EXPECT_THROW(s.parse("TS=abc"), InvalidArgument);
  EXPECT_NE(s.check({{"isa", 0}, {"TS", 0}}), "");  // below the range
  EXPECT_NE(s.check({{"isa", 9}, {"TS", 8}}), "");  // past the labels
  EXPECT_EQ(s.enumerate().size(), 6u);
}

TEST(Registry, EveryKernelIsWellFormed) {
  std::set<std::string> names;
  for (const GemmKernel* k : all_gemm_kernels()) {
    EXPECT_TRUE(names.insert(k->name).second) << "duplicate kernel " << k->name;
    EXPECT_FALSE(k->summary.empty()) << k->name;
    EXPECT_FALSE(k->types.empty()) << k->name;
    EXPECT_EQ(k->params.check(k->params.defaults()), "") << k->name;
    for (const auto& t : k->types) EXPECT_EQ(t.types.check(), "") << k->name;
  }
  for (const CovKernel* k : all_cov_kernels()) {
    EXPECT_TRUE(names.insert(k->name).second) << "duplicate kernel " << k->name;
    EXPECT_FALSE(k->sample_types.empty()) << k->name;
  }
  EXPECT_FALSE(all_gemm_kernels().empty());
}

}  // namespace
}  // namespace kafel
