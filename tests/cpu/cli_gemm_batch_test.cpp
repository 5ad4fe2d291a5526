// `kafel gemm --batch`: random and .npy-stack inputs on the CPU, every matrix of the --out stack
// checked against a direct product, and each way a batch can be given wrongly refused in a line.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_batch_util.hpp"

namespace kafel {
namespace {

using test::expect_batch_product;
using test::expect_refused;
using test::random_stack;
using test::read_bytes;
using test::run_kafel;
using test::ScratchDir;
using test::views_of;

TEST(CliGemmBatch, RandomInputsVerifyEveryMatrix) {
  ScratchDir dir("cli");
  const auto r = run_kafel(
      dir, "gemm --device cpu --m 9 --n 7 --k 5 --batch 6 --out c.npy --json g.json --seed 3");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("9x7x5 NN f32 batch 6"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on all 6 matrices, worst matrix "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  const auto doc = nlohmann::json::parse(read_bytes(dir.file("g.json")));
  EXPECT_EQ(doc["records"][0]["batch"], 6);
  EXPECT_TRUE(doc["records"][0]["verified"].get<bool>());
  NpyHeader h;
  const std::vector<Matrix> c = read_npy_stack(dir.file("c.npy"), &h);
  EXPECT_EQ(h.shape, (std::vector<std::int64_t>{6, 9, 7}));
  // Matrix 0 of the batch is the problem the same seed gives without --batch; the others differ.
  ASSERT_EQ(run_kafel(dir, "gemm --device cpu --m 9 --n 7 --k 5 --out one.npy --seed 3").rc, 0);
  const Matrix one = read_npy(dir.file("one.npy"));
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 7; ++j) EXPECT_NEAR(c[0].get(i, j), one.get(i, j), 1e-5);
  EXPECT_NE(c[1].get(0, 0), c[0].get(0, 0));
}

TEST(CliGemmBatch, NpyStacksGiveEveryProduct) {
  ScratchDir dir("cli");
  const auto a = random_stack(5, 8, 6, 1), b = random_stack(5, 6, 4, 2);
  const auto b_one = random_stack(1, 6, 4, 3);
  write_npy_stack(dir.file("a.npy"), views_of(a));
  write_npy_stack(dir.file("b.npy"), views_of(b));
  write_npy(dir.file("b1.npy"), b_one[0]);
  for (const char* extra : {"", " --layout col --trans-a", " --kernel cpu.naive --trans-b"}) {
    SCOPED_TRACE(extra);
    const auto r = run_kafel(
        dir, std::string("gemm --device cpu --a a.npy --b b.npy --batch 5 --out c.npy") + extra);
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("8x4x6 "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("batch 5"), std::string::npos) << r.out;
    expect_batch_product(dir.file("c.npy"), 5, a, b);
  }
  // A 2-D B serves every matrix; alpha applies to each.
  auto r = run_kafel(dir, "gemm --device cpu --a a.npy --b b1.npy --batch 5 --alpha 2 --out d.npy");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("B serves every matrix"), std::string::npos) << r.out;
  expect_batch_product(dir.file("d.npy"), 5, a, b_one, 2.0);
  // The product written is the --c-ref of the same problem with alpha (C = alpha * C_ref);
  // another batch's product is not (exit 3).
  ASSERT_EQ(run_kafel(dir, "gemm --device cpu --a a.npy --b b1.npy --batch 5 --out e.npy").rc, 0);
  r = run_kafel(dir, "gemm --device cpu --a a.npy --b b1.npy --batch 5 --alpha 2 --c-ref c.npy");
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  r = run_kafel(dir, "gemm --device cpu --a a.npy --b b1.npy --batch 5 --alpha 2 --c-ref e.npy");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("reference C"), std::string::npos) << r.out;
}

TEST(CliGemmBatch, BadBatchesAreRefusedInOneLine) {
  ScratchDir dir("cli");
  write_npy_stack(dir.file("a5.npy"), views_of(random_stack(5, 8, 6, 1)));
  write_npy_stack(dir.file("b5.npy"), views_of(random_stack(5, 6, 4, 2)));
  write_npy_stack(dir.file("b4.npy"), views_of(random_stack(4, 6, 4, 2)));
  write_npy_stack(dir.file("b5k7.npy"), views_of(random_stack(5, 7, 4, 2)));
  const auto a = random_stack(1, 8, 6, 1), b = random_stack(1, 6, 4, 2);
  write_npy(dir.file("a.npy"), a[0]);
  write_npy(dir.file("b.npy"), b[0]);
  write_npy(dir.file("c.npy"), Matrix(DType::f32, 8, 4));
  ASSERT_EQ(run_kafel(dir, "gen 4 4 4 -o m.dat").rc, 0);
  const std::pair<const char*, const char*> cases[] = {
      {"--m 8 --batch 0", "--batch must be between 1 and"},
      {"--m 8 --batch -3", "--batch"},
      {"--a a5.npy --b b5.npy", "3-D array (5x8x6), a stack of 5 matrices: pass --batch 5"},
      {"--a a5.npy --b b5.npy --batch 4", "A ('a5.npy') holds 5 matrices (5x8x6) but --batch is 4"},
      {"--a a5.npy --b b4.npy --batch 5", "B ('b4.npy') holds 4 matrices (4x6x4) but --batch is 5"},
      {"--a a5.npy --b b5k7.npy --batch 5", "A's columns must equal B's rows"},
      {"--a a.npy --b b.npy --batch 3", "A and B are single matrices"},
      {"--a a5.npy --b b5.npy --batch 5 --c-ref c.npy", "must be a 3-D stack of 5 matrices"},
      {"--input m.dat --batch 2", "--batch takes --a/--b .npy stacks"},
  };
  for (const auto& [args, needle] : cases) {
    SCOPED_TRACE(args);
    expect_refused(run_kafel(dir, std::string("gemm --device cpu --out o.npy ") + args), needle);
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("o.npy")));
}

}  // namespace
}  // namespace kafel
