// Entry point of the `kafel` tool: the subcommand table, parsing, and the error policy
// (any kafel::Error -> one "kafel: error: ..." line on stderr and exit 1; usage errors exit 2).
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "kafel/error.hpp"
#include "kafel/version.hpp"

namespace {

using namespace kafel::cli;

// One line per subcommand.
const Command kCommands[] = {
    {"devices", "List every device of every backend with its peak figures", setup_devices},
    {"gen", "Write a random GEMM test problem (matmul.dat or .npy)", setup_gen},
    {"gemm", "Run one GEMM, time it and verify it", setup_gemm},
    {"bench", "Benchmark kernels x sizes x types (x parameters), verified first", setup_bench},
    {"tune", "Search kernel parameters on a device and store the best in the tuning database",
     setup_tune},
    {"cov", "Covariance of a block or a stream: latency, deadlines, 1e-6 check (--bench)",
     setup_cov},
};

// Error messages must stay on one line, whatever the runtime put in them.
std::string one_line(std::string s) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return s;
}

int fail(const std::exception& e) {
  std::cerr << "kafel: error: " << one_line(e.what()) << '\n';
  return kExitError;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kafel: fast, verified GEMM and covariance on CPUs, OpenCL devices and NVIDIA GPUs"};
  app.set_version_flag("--version", std::string("kafel ") + KAFEL_VERSION);
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, Run>> runs;
  for (const Command& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    runs.emplace_back(sub, c.setup(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  try {
    for (auto& [sub, run] : runs) {
      if (sub->parsed()) return run();
    }
  } catch (const kafel::Error& e) {
    return fail(e);
  } catch (const std::exception& e) {
    return fail(e);
  }
  return kExitError;
}
