// Helpers shared by the subcommands: list and size parsing, kernel and parameter selection.
// Every bad input becomes an InvalidArgument that says what was expected.
#include "cli_util.hpp"

#include <charconv>
#include <fstream>

#include "kafel/error.hpp"

namespace kafel::cli {

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text + sep) {
    if (c != sep) {
      if (c != ' ') item += c;
      continue;
    }
    if (!item.empty()) out.push_back(item);
    item.clear();
  }
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::int64_t parse_int(const std::string& text, const std::string& what) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    throw InvalidArgument("bad " + what + " '" + text + "' (expected an integer)");
  }
  return v;
}

std::vector<Size3> parse_sizes(const std::string& text) {
  std::vector<Size3> out;
  for (const auto& item : split_list(text)) {
    auto parts = split_list(item, 'x');
    if (parts.size() != 1 && parts.size() != 3) {
      throw InvalidArgument("bad size '" + item + "' (expected N or MxNxK)");
    }
    std::int64_t v[3];
    for (std::size_t i = 0; i < 3; ++i) v[i] = parse_int(parts[parts.size() == 1 ? 0 : i], "size");
    if (v[0] <= 0 || v[1] <= 0 || v[2] <= 0) {
      throw InvalidArgument("size '" + item + "' must be positive");
    }
    out.push_back({v[0], v[1], v[2]});
  }
  if (out.empty()) throw InvalidArgument("no sizes given");
  return out;
}

std::vector<DType> parse_types(const std::string& text) {
  std::vector<DType> out;
  for (const auto& item : split_list(text)) out.push_back(parse_dtype(item));
  if (out.empty()) throw InvalidArgument("no types given");
  return out;
}

void add_sweep(Sweep& sweep, const std::string& item) {
  std::string name;
  for (const auto& tok : split_list(item)) {
    auto eq = tok.find('=');
    std::string value = tok;
    if (eq != std::string::npos) {
      name = tok.substr(0, eq);
      value = tok.substr(eq + 1);
      if (name.empty()) throw InvalidArgument("bad parameter '" + item + "' (expected NAME=v1,v2)");
      sweep[name].clear();
    } else if (name.empty()) {
      throw InvalidArgument("bad parameter '" + item + "' (expected NAME=v1,v2)");
    }
    sweep[name].push_back(parse_int(value, "value of parameter " + name));
  }
}

std::vector<Params> combinations(const Sweep& sweep, const GemmKernel& kernel) {
  std::vector<Params> out{Params{}};
  for (const auto& [name, values] : sweep) {
    if (!kernel.params.has(name)) continue;
    std::vector<Params> next;
    for (const auto& p : out) {
      for (auto v : values) {
        Params q = p;
        q[name] = v;
        next.push_back(q);
      }
    }
    out = std::move(next);
  }
  return out;
}

namespace {
std::string type_list(const GemmKernel& k) {
  std::string s;
  for (DType t : k.types) s += (s.empty() ? "" : ", ") + std::string(to_string(t));
  return s;
}
}  // namespace

const GemmKernel& pick_kernel(const Device& device, const std::string& name, DType type) {
  std::string chosen = name.empty() ? backend_of(device).default_gemm_kernel(device, type) : name;
  const GemmKernel& k = find_gemm_kernel(device, chosen);
  if (!k.supports(type)) {
    throw InvalidArgument("kernel " + k.name + " does not support " + std::string(to_string(type)) +
                          " (it supports " + type_list(k) + ")");
  }
  return k;
}

const GemmKernel& pick_baseline(const Device& device, const std::string& which) {
  std::string known;
  for (const auto& k : kernels_for(device)) {
    if (!k.baseline) continue;
    if (k.name == which || ends_with(k.name, "." + which)) return k;
    known += (known.empty() ? "" : ", ") + k.name;
  }
  throw InvalidArgument(
      "baseline '" + which + "' is not available for " + device.id + " (" +
      (known.empty() ? "this build has no baseline for it" : "available: " + known) + ")");
}

void write_json_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text << '\n';
  f.close();
  if (f.fail()) throw IoError("cannot write '" + path + "'");
}

}  // namespace kafel::cli
