// cpu.packed called from several user threads at once: every call must stay correct while
// the pool is owned by one of them (the others run on their own thread, see thread_pool.hpp).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "common/problems.hpp"
#include "core/backend.hpp"

namespace kafel {
namespace {

TEST(PackedThreads, ConcurrentCallersGetCorrectResults) {
  const Device cpu = select_device("cpu");
  constexpr int kCallers = 3;
  std::vector<test::Problem> problems;
  for (int i = 0; i < kCallers; ++i) {
    GemmDesc d{150 + 7 * i, 130 + 3 * i, 90, Op::N, i % 2 ? Op::T : Op::N, 1.0, 0.5, DType::f32};
    test::ProblemOptions opt;
    opt.seed = 1000 + i;
    problems.push_back(test::make_problem(d, opt));
  }
  std::vector<VerifyResult> results(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i)
    callers.emplace_back([&, i] {
      for (int rep = 0; rep < 5; ++rep) {
        test::Problem& p = problems[i];
        p.c = p.c0.clone();
        results[i] = test::run_and_verify(cpu, "cpu.packed", p, {{"threads", 2}});
        if (!results[i].passed) return;
      }
    });
  for (auto& t : callers) t.join();
  for (int i = 0; i < kCallers; ++i) EXPECT_TRUE(results[i].passed) << results[i].message;
}

}  // namespace
}  // namespace kafel
