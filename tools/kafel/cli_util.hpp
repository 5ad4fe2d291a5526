// Helpers shared by the subcommands: list, size and element-role parsing, option range checks,
// parameter sweeps, and the output-path checks every command runs before its work starts.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kafel/bench.hpp"
#include "kafel/device.hpp"
#include "kafel/kernels.hpp"
#include "kafel/params.hpp"
#include "kafel/types.hpp"

namespace kafel::cli {

// Splits "a,b,c" (empty items and spaces dropped).
std::vector<std::string> split_list(const std::string& text, char sep = ',');
bool ends_with(const std::string& s, const std::string& suffix);
// A whole decimal integer or throws InvalidArgument naming `what`.
std::int64_t parse_int(const std::string& text, const std::string& what);
// "256,1024" (cubes) and "MxNxK" items; every size between 1 and 2^31-1.
std::vector<GemmSize> parse_sizes(const std::string& text);

// Element roles from --type / --types items ("f32", "bf16->f32", "f32/tf32", "i8"), each with
// `compute` applied when it is not empty (the roles' compute must then agree or be natural).
std::vector<GemmTypes> parse_roles(const std::string& list, const std::string& compute,
                                   const char* option);

// Option checks: InvalidArgument "--reps must be between 1 and 1000000 (got 0)".
void require_range(std::int64_t v, std::int64_t lo, std::int64_t hi, const char* option);
// A finite number in [lo, hi] (or (lo, hi] when lo_open); NaN and infinities are refused.
void require_number(double v, double lo, double hi, const char* option, bool lo_open = false);

// Options parsed strictly instead of CLI11's conversions (which read "010" as octal, wrap "-1"
// into an unsigned seed and clamp overflowing numbers silently): integers are whole decimal
// numbers, numbers finite; each value is range-checked as it is parsed, the message naming
// the option and the range (an InvalidArgument, reported as a usage error).
CLI::Option* int_option(CLI::App& app, const std::string& names, std::int64_t& target,
                        std::int64_t lo, std::int64_t hi, const std::string& help);
CLI::Option* int_option(CLI::App& app, const std::string& names, int& target, std::int64_t lo,
                        std::int64_t hi, const std::string& help);
CLI::Option* seed_option(CLI::App& app, std::uint64_t& target, const std::string& help);
CLI::Option* number_option(CLI::App& app, const std::string& names, double& target, double lo,
                           double hi, bool lo_open, const std::string& help);
// The largest count an option takes (reps, blocks, ...).
inline constexpr std::int64_t kMaxCount = 1000000;

// Sweeps from "NAME=v1,v2" items; an item may continue with further names:
// "TS=8,16,WPT=4,8" sweeps TS over {8,16} and WPT over {4,8}.
using Sweep = std::map<std::string, std::vector<std::int64_t>>;
void add_sweep(Sweep& sweep, const std::string& item);
// Every combination of the sweep's values for the parameters `kernel` has, each checked
// against its ParamSpace (ranges and constraint) before anything runs: InvalidArgument names
// the first bad combination.
std::vector<Params> combinations(const Sweep& sweep, const GemmKernelInfo& kernel);

// The baseline kernel whose name ends with `which` ("openblas" -> cpu.openblas).
std::string pick_baseline(const Device& device, const std::string& which);

// The output files of a command, checked before its work starts: each writable
// (check_writable), none named twice, none the same file as one of `inputs` (refused: the
// input would be lost). Empty names are skipped.
void check_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                   const std::vector<std::string>& inputs);

// "kafel: warning: ..." on stderr.
void warn(const std::string& text);

// `s` with every control character (newlines of a runtime's message) turned into a space:
// error messages stay on one line.
std::string one_line(std::string s);

}  // namespace kafel::cli
