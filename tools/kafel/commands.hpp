// The subcommand table's types: each cmd_<name>.cpp declares its options and returns its run.
// To add a subcommand: write cmd_<name>.cpp with setup_<name>, declare it here, add one line to
// kCommands in main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kafel::cli {

// Exit codes shared by every subcommand.
constexpr int kExitOk = 0;
constexpr int kExitError = 1;         // any kafel::Error or other exception
constexpr int kExitUsage = 2;         // command-line parse error, unknown subcommand
constexpr int kExitVerifyFailed = 3;  // a result did not pass verification

// What a subcommand does once the command line is parsed; returns the exit code.
using Run = std::function<int()>;
// Adds the subcommand's options to `sub`, bound to state that the returned Run owns.
using Setup = Run (*)(CLI::App& sub);

struct Command {
  const char* name;
  const char* summary;
  Setup setup;
};

Run setup_devices(CLI::App& sub);
Run setup_gen(CLI::App& sub);
Run setup_gemm(CLI::App& sub);
Run setup_bench(CLI::App& sub);
Run setup_tune(CLI::App& sub);
Run setup_cov(CLI::App& sub);

}  // namespace kafel::cli
