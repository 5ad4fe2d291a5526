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
  // The valid range, checked for every source of parameters (--param, sweeps, the tuning
  // database) before anything is built or launched.
  std::int64_t min = 0, max = 0;
  // Names of the values 0, 1, 2 ... for enumerated parameters (e.g. an ISA choice): they are
  // printed and parsed instead of the numbers. Empty for numeric parameters.
  std::vector<std::string> labels;
};

// A parameter whose values are min..max (inclusive).
ParamDesc param(std::string name, std::int64_t def, std::vector<std::int64_t> candidates,
                std::int64_t min, std::int64_t max, std::string help);
// An enumerated parameter: values 0 .. labels.size()-1, shown by label.
ParamDesc choice(std::string name, std::int64_t def, std::vector<std::string> labels, bool tunable,
                 std::string help);

struct ParamSpace {
  std::vector<ParamDesc> params;
  // Beyond each parameter's range: "" when the combination is valid, else why not
  // (e.g. "TS*TS exceeds 1024").
  std::function<std::string(const Params&)> constraint;

  bool empty() const { return params.empty(); }
  bool has(const std::string& name) const;
  const ParamDesc& get(const std::string& name) const;  // throws InvalidArgument
  Params defaults() const;
  // Defaults overlaid with `overrides`; throws InvalidArgument on an unknown name, a value
  // outside its range or a combination the constraint rejects.
  Params resolve(const Params& overrides) const;
  // "" when valid (every value in range, constraint satisfied), else the reason.
  std::string check(const Params& p) const;
  // Every valid combination of the candidates (the full search space).
  std::vector<Params> enumerate() const;
  // "TS=16 isa=avx2": values of enumerated parameters by label.
  std::string format(const Params& p) const;
  // Parses "TS=16,isa=avx2" (commas or spaces) with labels allowed; throws InvalidArgument.
  Params parse(const std::string& text) const;
};

// "TS=16 WPT=8" (empty string for no parameters), numbers only.
std::string format_params(const Params& p);
// Parses "TS=16,WPT=8" (commas or spaces), numbers only; throws InvalidArgument.
Params parse_params(const std::string& text);

}  // namespace kafel
