// Kernel parameter spaces: defaults, overrides, validation and full enumeration for the tuner.
// Parameters are plain name=value integers so they print, parse and store the same everywhere.
#include "kafel/params.hpp"

#include <sstream>

#include "kafel/error.hpp"

namespace kafel {

bool ParamSpace::has(const std::string& name) const {
  for (const auto& p : params)
    if (p.name == name) return true;
  return false;
}

Params ParamSpace::defaults() const {
  Params out;
  for (const auto& p : params) out[p.name] = p.default_value;
  return out;
}

std::string ParamSpace::check(const Params& p) const {
  return constraint ? constraint(p) : std::string();
}

Params ParamSpace::resolve(const Params& overrides) const {
  Params out = defaults();
  for (const auto& [name, value] : overrides) {
    if (!has(name)) {
      std::string known;
      for (const auto& d : params) known += (known.empty() ? "" : ", ") + d.name;
      throw InvalidArgument("unknown kernel parameter '" + name +
                            "' (this kernel has: " + (known.empty() ? "none" : known) + ")");
    }
    out[name] = value;
  }
  if (const std::string why = check(out); !why.empty())
    throw InvalidArgument("invalid kernel parameters " + format_params(out) + ": " + why);
  return out;
}

std::vector<Params> ParamSpace::enumerate() const {
  std::vector<Params> all{defaults()};
  for (const auto& d : params) {
    if (d.candidates.empty()) continue;
    std::vector<Params> next;
    for (const auto& base : all)
      for (auto v : d.candidates) {
        Params p = base;
        p[d.name] = v;
        next.push_back(std::move(p));
      }
    all = std::move(next);
  }
  std::vector<Params> valid;
  for (auto& p : all)
    if (check(p).empty()) valid.push_back(std::move(p));
  return valid;
}

std::string format_params(const Params& p) {
  std::string out;
  for (const auto& [name, value] : p)
    out += (out.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return out;
}

Params parse_params(const std::string& text) {
  Params out;
  std::string item;
  std::string normalized = text;
  for (char& c : normalized)
    if (c == ',') c = ' ';
  std::istringstream in(normalized);
  while (in >> item) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw InvalidArgument("kernel parameter '" + item + "' is not NAME=VALUE");
    const std::string name = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    try {
      std::size_t used = 0;
      const long long v = std::stoll(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
      out[name] = v;
    } catch (const std::exception&) {
      throw InvalidArgument("kernel parameter " + name + ": '" + value + "' is not an integer");
    }
  }
  return out;
}

}  // namespace kafel
