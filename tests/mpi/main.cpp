// Entry point of the MPI suite (run under mpirun by CTest): MPI for the whole run, one
// communicator shared by the tests, failures of every rank printed with the rank's number.
// Exit code 77 (CTest: skipped) when the requested device is absent (the multigpu run on CPUs).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "dist_test_env.hpp"
#include "kafel/error.hpp"

namespace {

std::unique_ptr<kafel::dist::Communicator> g_comm;

// Ranks other than 0 print only their failed assertions, prefixed with the rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "rank %d: %s:%d: failure\n%s\n", rank_,
                 r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
  }

 private:
  int rank_;
};

}  // namespace

const kafel::dist::Communicator& test_comm() {
  return *g_comm;
}

int main(int argc, char** argv) {
  kafel::dist::Session session;
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  kafel::dist::CommOptions opt;
  opt.timeout_s = 120;  // a rank that stops makes the others abort instead of hanging
  try {
    g_comm = std::make_unique<kafel::dist::Communicator>(MPI_COMM_WORLD, opt);
  } catch (const kafel::Unsupported& e) {
    if (rank == 0) std::printf("skipped: %s\n", e.what());
    return 77;
  }
  if (rank == 0)
    std::printf("kafel::dist tests: %d ranks on %s, transport %s\n", g_comm->size(),
                g_comm->device().id.c_str(), g_comm->transport().c_str());
  const int status = RUN_ALL_TESTS();
  g_comm.reset();
  return status;
}
