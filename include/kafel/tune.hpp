// The parameter search behind `kafel tune`: for each kernel x element roles x size, try
// candidates of the kernel's ParamSpace (from the kernel's own choice: neighbours, random
// samples, neighbours of the best) through the benchmark harness (verified, then timed), and
// store the best when re-timing confirms it beats the kernel's own choice.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/gemm.hpp"
#include "kafel/params.hpp"
#include "kafel/types.hpp"

namespace kafel {

struct TuneOptions {
  std::vector<std::string> kernels;  // empty: every tunable, non-baseline kernel of the device
  std::vector<GemmSize> sizes{{1024, 1024, 1024}};  // each tuned for its size class
  std::vector<GemmTypes> types{GemmTypes::of(DType::f32)};
  double budget_s = 60;  // wall-clock for the whole run, split evenly between the tasks
  int repetitions = 3;   // timed runs per candidate (median)
  std::string db_path;   // "" = default_tuning_db_path()
  std::uint64_t seed = 1;
  // Progress lines (stderr in the CLI); may be empty.
  std::function<void(const std::string&)> progress;
};

struct TuneResult {
  std::string kernel;
  GemmTypes types;
  GemmSize size;
  Params best;
  double best_gflops = 0, default_gflops = 0;
  int tried = 0, failed = 0, space = 0;
  // No candidate beat the kernel's own choice (its heuristic or defaults) by 1 % when both were
  // re-timed: the stored entry has no parameters, so the heuristic stays in charge of the class.
  bool kept_start = false;
  std::string note;  // why nothing was stored, when so
};

// Runs the search on `device` and writes every improvement to the database file (under a lock,
// merged with what other processes wrote meanwhile).
std::vector<TuneResult> tune(const Device& device, const TuneOptions& opt);

// $KAFEL_TUNE_DB, else $XDG_DATA_HOME/kafel/tuning.json, else ~/.local/share/kafel/tuning.json.
std::string default_tuning_db_path();

}  // namespace kafel
