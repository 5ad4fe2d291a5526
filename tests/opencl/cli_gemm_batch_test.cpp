// `kafel gemm --batch` on the OpenCL device (PoCL here): random inputs and .npy stacks, every
// matrix of the --out stack checked against a direct product.
#include <gtest/gtest.h>

#include "cpu/cli_batch_util.hpp"
#include "opencl_device.hpp"

namespace kafel {
namespace {

using test::expect_batch_product;
using test::random_stack;
using test::run_kafel;
using test::ScratchDir;
using test::views_of;

TEST(OpenclCliGemmBatch, RandomAndNpyStacks) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  ScratchDir dir("cli");
  auto r = run_kafel(dir, "gemm --device " + dev.id + " --m 33 --n 17 --k 9 --batch 7");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("33x17x9 NN f32 batch 7"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on all 7 matrices"), std::string::npos) << r.out;

  const auto a = random_stack(3, 20, 12, 1), b = random_stack(1, 12, 10, 2);
  write_npy_stack(dir.file("a.npy"), views_of(a));
  write_npy(dir.file("b.npy"), b[0]);
  r = run_kafel(dir, "gemm --device " + dev.id + " --a a.npy --b b.npy --batch 3 --out c.npy");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  expect_batch_product(dir.file("c.npy"), 3, a, b);
}

}  // namespace
}  // namespace kafel
