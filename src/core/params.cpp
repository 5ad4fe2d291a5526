// Kernel parameter spaces: ranges, defaults, overrides, validation and full enumeration for the
// tuner. Parameters are name=value integers so they print, parse and store the same everywhere.
#include "kafel/params.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "kafel/error.hpp"

namespace kafel {
namespace {

std::vector<std::string> items(const std::string& text) {
  std::string normalized = text;
  for (char& c : normalized)
    if (c == ',') c = ' ';
  std::istringstream in(normalized);
  std::vector<std::string> out;
  for (std::string item; in >> item;) out.push_back(item);
  return out;
}

std::pair<std::string, std::string> split_item(const std::string& item) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
    throw InvalidArgument("kernel parameter '" + item + "' is not NAME=VALUE");
  return {item.substr(0, eq), item.substr(eq + 1)};
}

// A whole decimal integer that fits in int64 (no 300-digit messages: the text is echoed as is).
bool to_int(const std::string& text, std::int64_t& v) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string range_text(const ParamDesc& d) {
  if (!d.labels.empty()) {
    std::string s;
    for (const auto& l : d.labels) s += (s.empty() ? "" : ", ") + l;
    return "one of " + s;
  }
  return std::to_string(d.min) + ".." + std::to_string(d.max);
}

}  // namespace

ParamDesc param(std::string name, std::int64_t def, std::vector<std::int64_t> candidates,
                std::int64_t min, std::int64_t max, std::string help) {
  return ParamDesc{std::move(name), def, std::move(candidates), std::move(help), min, max, {}};
}

ParamDesc choice(std::string name, std::int64_t def, std::vector<std::string> labels, bool tunable,
                 std::string help) {
  std::vector<std::int64_t> cands;
  if (tunable)
    for (std::size_t i = 0; i < labels.size(); ++i) cands.push_back(std::int64_t(i));
  const auto max = std::int64_t(labels.size()) - 1;
  return ParamDesc{std::move(name),  def, std::move(cands), std::move(help), 0, max,
                   std::move(labels)};
}

bool ParamSpace::has(const std::string& name) const {
  for (const auto& p : params)
    if (p.name == name) return true;
  return false;
}

const ParamDesc& ParamSpace::get(const std::string& name) const {
  for (const auto& p : params)
    if (p.name == name) return p;
  std::string known;
  for (const auto& d : params) known += (known.empty() ? "" : ", ") + d.name;
  throw InvalidArgument("unknown kernel parameter '" + name +
                        "' (this kernel has: " + (known.empty() ? "none" : known) + ")");
}

Params ParamSpace::defaults() const {
  Params out;
  for (const auto& p : params) out[p.name] = p.default_value;
  return out;
}

std::string ParamSpace::check(const Params& p) const {
  for (const auto& d : params) {
    const auto it = p.find(d.name);
    if (it == p.end()) return "parameter " + d.name + " has no value";
    if (it->second < d.min || it->second > d.max)
      return d.name + "=" + std::to_string(it->second) + " is outside " + range_text(d);
  }
  return constraint ? constraint(p) : std::string();
}

Params ParamSpace::resolve(const Params& overrides) const {
  Params out = defaults();
  for (const auto& [name, value] : overrides) out[get(name).name] = value;
  if (const std::string why = check(out); !why.empty())
    throw InvalidArgument("invalid kernel parameters " + format(out) + ": " + why);
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

std::string ParamSpace::format(const Params& p) const {
  std::string out;
  for (const auto& [name, value] : p) {
    std::string shown = std::to_string(value);
    for (const auto& d : params)
      if (d.name == name && !d.labels.empty() && value >= 0 &&
          value < std::int64_t(d.labels.size()))
        shown = d.labels[std::size_t(value)];
    out += (out.empty() ? "" : " ") + name + "=" + shown;
  }
  return out;
}

Params ParamSpace::parse(const std::string& text) const {
  Params out;
  for (const auto& item : items(text)) {
    const auto [name, value] = split_item(item);
    const ParamDesc& d = get(name);
    std::int64_t v = 0;
    if (!d.labels.empty()) {
      const auto it = std::find(d.labels.begin(), d.labels.end(), value);
      if (it != d.labels.end()) {
        out[name] = std::int64_t(it - d.labels.begin());
        continue;
      }
    }
    if (!to_int(value, v))
      throw InvalidArgument("kernel parameter " + name + ": '" + value + "' is not " +
                            (d.labels.empty() ? "an integer" : range_text(d)));
    out[name] = v;
  }
  return out;
}

std::string format_params(const Params& p) {
  return ParamSpace{}.format(p);
}

Params parse_params(const std::string& text) {
  Params out;
  for (const auto& item : items(text)) {
    const auto [name, value] = split_item(item);
    std::int64_t v = 0;
    if (!to_int(value, v))
      throw InvalidArgument("kernel parameter " + name + ": '" + value + "' is not an integer");
    out[name] = v;
  }
  return out;
}

}  // namespace kafel
