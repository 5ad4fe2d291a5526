// Running the real `kafel` binary from a test: in a scratch directory, with extra environment,
// under a timeout (a hang fails the test instead of CI), stdout and stderr captured apart.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "io_test_util.hpp"

namespace kafel::test {

struct CliResult {
  int rc = -1;  // exit code; 124 when the timeout killed it, 128 + signal for a crash
  std::string out, err;
};

// `env` is prepended as shell assignments ("KAFEL_NUM_THREADS=abc"); KAFEL_DEVICE is cleared
// unless `env` sets it.
inline CliResult run_kafel(const ScratchDir& dir, const std::string& args,
                           const std::string& env = "", int timeout_s = 120) {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const std::string cmd = "cd '" + dir.path().string() + "' && KAFEL_DEVICE= " + env + " timeout " +
                          std::to_string(timeout_s) + " '" KAFEL_CLI_PATH "' " + args + " >'" +
                          out + "' 2>'" + err + "' </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_bytes(out);
  r.err = read_bytes(err);
  return r;
}

// Exactly one stderr line "kafel: error: ..." containing `needle`, a non-zero exit that is not
// a timeout or a crash, and a readable message (no number of more than 20 digits).
inline void expect_refused(const CliResult& r, const std::string& needle) {
  EXPECT_TRUE(r.rc == 1 || r.rc == 2 || r.rc == 3) << "rc " << r.rc << ": " << r.err;
  EXPECT_EQ(r.err.rfind("kafel: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "wanted '" << needle << "' in: " << r.err;
  int digits = 0, longest = 0;
  for (char c : r.err) {
    digits = (c >= '0' && c <= '9') ? digits + 1 : 0;
    longest = std::max(longest, digits);
  }
  EXPECT_LE(longest, 20) << r.err;
  EXPECT_LT(r.err.size(), 400u) << r.err;
}

}  // namespace kafel::test
