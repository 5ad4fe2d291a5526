// Helpers shared by the subcommands: parsing, option range checks, sweeps checked against the
// kernels' parameter spaces, and the output checks. Every bad input is one InvalidArgument line.
#include "cli_util.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>

#include "kafel/error.hpp"
#include "kafel/io.hpp"

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
    // The text is echoed as given, shortened: no 300-digit messages.
    const std::string shown = text.size() > 16 ? text.substr(0, 16) + "..." : text;
    throw InvalidArgument("bad " + what + " '" + shown + "' (expected an integer" +
                          (ec == std::errc::result_out_of_range ? " that fits in 64 bits)" : ")"));
  }
  return v;
}

std::vector<GemmSize> parse_sizes(const std::string& text) {
  constexpr std::int64_t kMax = 2147483647;
  std::vector<GemmSize> out;
  for (const auto& item : split_list(text)) {
    auto parts = split_list(item, 'x');
    if (parts.size() != 1 && parts.size() != 3) {
      throw InvalidArgument("bad size '" + item + "' (expected N or MxNxK)");
    }
    std::int64_t v[3];
    for (std::size_t i = 0; i < 3; ++i) v[i] = parse_int(parts[parts.size() == 1 ? 0 : i], "size");
    for (auto x : v)
      if (x <= 0 || x > kMax)
        throw InvalidArgument("size '" + item + "' must be positive and at most 2147483647");
    out.push_back({v[0], v[1], v[2]});
  }
  if (out.empty()) throw InvalidArgument("no sizes given");
  return out;
}

std::vector<GemmTypes> parse_roles(const std::string& list, const std::string& compute,
                                   const char* option) {
  std::vector<GemmTypes> out;
  for (const auto& item : split_list(list)) {
    GemmTypes t = GemmTypes::parse(item);
    if (!compute.empty()) {
      const Compute c = parse_compute(compute);
      const bool explicit_mode = item.find('/') != std::string::npos;
      if (explicit_mode && t.compute != c)
        throw InvalidArgument(std::string(option) + " '" + item + "' names compute " +
                              std::string(to_string(t.compute)) + " but --compute is " +
                              std::string(to_string(c)));
      t.compute = c;
      if (const std::string why = t.check(); !why.empty())
        throw InvalidArgument(std::string(option) + " '" + item + "' with --compute " + compute +
                              ": " + why);
    }
    out.push_back(t);
  }
  if (out.empty()) throw InvalidArgument(std::string("no element types given to ") + option);
  return out;
}

void require_range(std::int64_t v, std::int64_t lo, std::int64_t hi, const char* option) {
  if (v < lo || v > hi)
    throw InvalidArgument(std::string(option) + " must be between " + std::to_string(lo) + " and " +
                          std::to_string(hi) + " (got " + std::to_string(v) + ")");
}

void require_number(double v, double lo, double hi, const char* option, bool lo_open) {
  const bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
  if (!ok)
    throw InvalidArgument(std::string(option) + " must be a finite number " +
                          (lo_open ? "above " : "from ") + format_num("%g", lo) +
                          (lo_open ? " and at most " : " to ") + format_num("%g", hi) + " (got " +
                          format_num("%g", v) + ")");
}

namespace {

// "--reps" from "--reps,-r".
std::string option_label(const std::string& names) {
  for (const auto& n : split_list(names))
    if (n.rfind("--", 0) == 0) return n;
  const auto first = split_list(names);
  return first.empty() ? names : first.front();
}

double parse_number(const std::string& text, const std::string& option) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (text.empty() || end != begin + text.size()) {
    const std::string shown = text.size() > 16 ? text.substr(0, 16) + "..." : text;
    throw InvalidArgument(option + ": '" + shown + "' is not a number");
  }
  return v;
}

template <class T>
CLI::Option* add_int(CLI::App& app, const std::string& names, T& target, std::int64_t lo,
                     std::int64_t hi, const std::string& help) {
  const std::string label = option_label(names);
  auto* opt = app.add_option_function<std::string>(
      names,
      [&target, label, lo, hi](const std::string& text) {
        const std::int64_t v = parse_int(text, label + " value");
        require_range(v, lo, hi, label.c_str());
        target = static_cast<T>(v);
      },
      help);
  return opt->default_str(std::to_string(target));
}

}  // namespace

CLI::Option* int_option(CLI::App& app, const std::string& names, std::int64_t& target,
                        std::int64_t lo, std::int64_t hi, const std::string& help) {
  return add_int(app, names, target, lo, hi, help);
}

CLI::Option* int_option(CLI::App& app, const std::string& names, int& target, std::int64_t lo,
                        std::int64_t hi, const std::string& help) {
  return add_int(app, names, target, lo, hi, help);
}

CLI::Option* seed_option(CLI::App& app, std::uint64_t& target, const std::string& help) {
  return add_int(app, "--seed", target, 0, std::numeric_limits<std::int64_t>::max(), help);
}

CLI::Option* number_option(CLI::App& app, const std::string& names, double& target, double lo,
                           double hi, bool lo_open, const std::string& help) {
  const std::string label = option_label(names);
  auto* opt = app.add_option_function<std::string>(
      names,
      [&target, label, lo, hi, lo_open](const std::string& text) {
        const double v = parse_number(text, label);
        require_number(v, lo, hi, label.c_str(), lo_open);
        target = v;
      },
      help);
  return opt->default_str(format_num("%g", target));
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

std::vector<Params> combinations(const Sweep& sweep, const GemmKernelInfo& kernel) {
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
  // Ranges first, for every value of the sweep, before a single kernel runs: a zero tile or
  // chunk must never reach a build or a launch. (The constraint between parameters is checked
  // per combination by choose_gemm, with the heuristic's and the tuned values filled in.)
  for (const auto& [name, values] : sweep) {
    if (!kernel.params.has(name)) continue;
    const ParamDesc& d = kernel.params.get(name);
    for (auto v : values)
      if (v < d.min || v > d.max)
        throw InvalidArgument("parameter " + name + "=" + std::to_string(v) + " is outside " +
                              std::to_string(d.min) + ".." + std::to_string(d.max) + " for " +
                              kernel.name);
  }
  return out;
}

std::string pick_baseline(const Device& device, const std::string& which) {
  std::string known;
  for (const auto& k : gemm_kernels(device)) {
    if (!k.baseline) continue;
    if (k.name == which || ends_with(k.name, "." + which)) return k.name;
    known += (known.empty() ? "" : ", ") + k.name;
  }
  throw InvalidArgument(
      "baseline '" + which + "' is not available for " + device.id + " (" +
      (known.empty() ? "this build has no baseline for it" : "available: " + known) + ")");
}

namespace {

namespace fs = std::filesystem;

// Same file: by inode when both exist, else by normalised absolute path.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::absolute(a, ec).lexically_normal() == fs::absolute(b, ec).lexically_normal();
}

}  // namespace

void check_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                   const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    if (path.empty()) continue;
    for (const auto& in : inputs)
      if (!in.empty() && in != "-" && same_file(path, in))
        throw InvalidArgument("refusing to write " + option + " '" + path +
                              "' over the input file '" + in + "'");
    for (std::size_t j = 0; j < i; ++j)
      if (!outputs[j].second.empty() && same_file(path, outputs[j].second))
        throw InvalidArgument(option + " and " + outputs[j].first + " name the same file '" + path +
                              "'");
    check_writable(path);
  }
}

void warn(const std::string& text) {
  std::cerr << "kafel: warning: " << text << '\n';
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return s;
}

}  // namespace kafel::cli
