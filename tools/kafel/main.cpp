// Entry point of the `kafel` tool: the subcommand table, parsing, and the error policy
// (any error -> one "kafel: error: ..." line on stderr; exit 1, usage errors exit 2).
#include <cstring>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli_util.hpp"
#include "commands.hpp"
#include "kafel/error.hpp"
#include "kafel/version.hpp"

namespace {

using namespace kafel::cli;

// One line per subcommand.
const Command kCommands[] = {
    {"devices", "List every device of every backend: capabilities, peak figures, kernels",
     setup_devices},
    {"gen", "Write a random GEMM test problem (matmul.dat or .npy)", setup_gen},
    {"gemm", "Run one GEMM, time it and verify it", setup_gemm},
    {"bench", "Benchmark kernels x sizes x types (x parameters), verified first", setup_bench},
    {"tune", "Search kernel parameters on a device and store the best in the tuning database",
     setup_tune},
    {"cov", "Covariance of a block or a stream: latency, deadlines, 1e-6 check (--bench)",
     setup_cov},
#ifdef KAFEL_WITH_MPI
    {"dist", "Distributed GEMM and covariance over MPI ranks (run under mpirun)", setup_dist},
#endif
};

int fail(const std::string& what, int code) {
  std::cerr << "kafel: error: " << one_line(what) << '\n';
  return code;
}

// argv[1] when it is neither an option nor a known subcommand.
const char* unknown_subcommand(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return nullptr;
  for (const Command& c : kCommands)
    if (std::strcmp(argv[1], c.name) == 0) return nullptr;
  return argv[1];
}

std::string command_names() {
  std::string s;
  for (const Command& c : kCommands) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kafel: fast, verified GEMM and covariance on CPUs, OpenCL devices and NVIDIA GPUs"};
  app.set_version_flag("--version", std::string("kafel ") + KAFEL_VERSION);
  app.require_subcommand(1);
  if (const char* name = unknown_subcommand(argc, argv))
    return fail("unknown subcommand '" + std::string(name) + "' (commands: " + command_names() +
                    "; see kafel --help)",
                kExitUsage);
  std::vector<std::pair<CLI::App*, Run>> runs;
  for (const Command& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    runs.emplace_back(sub, c.setup(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(std::string(e.what()) + " (see --help)", kExitUsage);
  } catch (const std::exception& e) {  // an option value refused while parsing
    return fail(e.what(), kExitUsage);
  }
  try {
    for (auto& [sub, run] : runs) {
      if (sub->parsed()) return run();
    }
  } catch (const std::exception& e) {
    return fail(e.what(), kExitError);
  }
  return kExitError;
}
