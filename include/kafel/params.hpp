// Named integer parameters of a kernel variant and the description of their search space.
// One ParamSpace per kernel feeds its -D defines / template arguments, the tuner and the CLI.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kafel {

// name -> value, e.g. {"TS", 16}, {"WPT", 8}. Ordered so printed names are stable.
using Params = std::map<std::string, std::int64_t>;

struct ParamDesc {
  std::string name;
  std::int64_t default_value = 0;
  std::vector<std::int64_t> candidates;  // values the tuner may try; empty = fixed
  std::string help;
};

struct ParamSpace {
  std::vector<ParamDesc> params;
  // Returns "" when the combination is valid, else why not (e.g. "TS*TS exceeds 1024").
  std::function<std::string(const Params&)> constraint;

  bool empty() const { return params.empty(); }
  bool has(const std::string& name) const;
  Params defaults() const;
  // Defaults overlaid with `overrides`; throws InvalidArgument on an unknown name or a value
  // that violates the constraint.
  Params resolve(const Params& overrides) const;
  // "" when valid, else the reason.
  std::string check(const Params& p) const;
  // Every valid combination of the candidates (the full search space).
  std::vector<Params> enumerate() const;
};

// "TS=16 WPT=8" (empty string for no parameters).
std::string format_params(const Params& p);
// Parses "TS=16,WPT=8" (commas or spaces); throws InvalidArgument.
Params parse_params(const std::string& text);

}  // namespace kafel
