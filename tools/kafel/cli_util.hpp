// Helpers shared by the subcommands: list and size parsing, kernel and parameter selection.
// Errors are kafel::InvalidArgument so main prints them as one line. Number and size formatting
// (format_num, human_bytes) come from core/report_util.hpp, shared with the library.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/report_util.hpp"
#include "kafel/device.hpp"
#include "kafel/params.hpp"
#include "kafel/types.hpp"

namespace kafel::cli {

struct Size3 {
  std::int64_t m, n, k;
};

// Splits "a,b,c" (empty items dropped).
std::vector<std::string> split_list(const std::string& text, char sep = ',');
bool ends_with(const std::string& s, const std::string& suffix);
// A whole decimal integer or throws InvalidArgument naming `what`.
std::int64_t parse_int(const std::string& text, const std::string& what);
// "256,1024" (cubes) and "MxNxK" items; every size positive.
std::vector<Size3> parse_sizes(const std::string& text);
std::vector<DType> parse_types(const std::string& text);

// Sweeps from "NAME=v1,v2" items; an item may continue with further names:
// "TS=8,16,WPT=4,8" sweeps TS over {8,16} and WPT over {4,8}.
using Sweep = std::map<std::string, std::vector<std::int64_t>>;
void add_sweep(Sweep& sweep, const std::string& item);
// Every combination of the sweep's values for the parameters `kernel` has.
std::vector<Params> combinations(const Sweep& sweep, const GemmKernel& kernel);

// The kernel named, or the backend's default for the type when `name` is empty; checks that it
// supports the type.
const GemmKernel& pick_kernel(const Device& device, const std::string& name, DType type);
// Baseline kernels whose name ends with `which` ("openblas" -> cpu.openblas); throws when none.
const GemmKernel& pick_baseline(const Device& device, const std::string& which);

// Writes `text` and a newline to `path`; throws IoError when the file cannot be written fully.
void write_json_file(const std::string& path, const std::string& text);

}  // namespace kafel::cli
