// The parameter search behind `kafel tune`: for each kernel x type x size, try candidates of
// the kernel's ParamSpace (exhaustive when small, random sampling then neighbour refinement
// when large), verify each against the reference, time the survivors, store the best.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "tune/database.hpp"

namespace kafel::tune {

struct TuneOptions {
  std::vector<std::string> kernels;       // empty: every tunable, non-baseline kernel of the device
  std::vector<std::int64_t> sizes{1024};  // cubes m = n = k
  std::vector<DType> types{DType::f32};
  double budget_s = 60;  // wall-clock for the whole run, split evenly between the tasks
  int repetitions = 3;   // timed runs per candidate (median)
  std::string db_path;   // "" = default_db_path()
  std::uint64_t seed = 1;
  // Progress lines (stderr in the CLI); may be empty.
  std::function<void(const std::string&)> progress;
};

struct TuneResult {
  std::string kernel;
  DType dtype = DType::f32;
  std::int64_t size = 0;
  Params best;
  double best_gflops = 0, default_gflops = 0;
  int tried = 0, failed = 0, space = 0;
  std::string note;  // why nothing was stored, when so
};

// Runs the search on `device` and writes every improvement to the database file.
std::vector<TuneResult> tune(const Device& device, const TuneOptions& opt);

}  // namespace kafel::tune
