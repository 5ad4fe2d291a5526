// The JSON tuning database (see database.hpp): reading, writing, and the fallback chain
// device + driver -> device name -> vendor, in the same size class first.
#include "core/tuning_db.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json to_json(const Entry& e) {
  json p = json::object();
  for (const auto& [k, v] : e.params) p[k] = v;
  return {{"device", e.device}, {"driver", e.driver}, {"vendor", e.vendor},
          {"kernel", e.kernel}, {"dtype", e.dtype},   {"size_class", e.size_class},
          {"params", p},        {"gflops", e.gflops}, {"default_gflops", e.default_gflops},
          {"shape", e.shape}};
}

Entry from_json(const json& j) {
  Entry e;
  e.device = j.at("device").get<std::string>();
  e.driver = j.value("driver", "");
  e.vendor = j.value("vendor", "");
  e.kernel = j.at("kernel").get<std::string>();
  e.dtype = j.at("dtype").get<std::string>();
  e.size_class = j.at("size_class").get<std::string>();
  for (const auto& [k, v] : j.at("params").items()) e.params[k] = v.get<std::int64_t>();
  e.gflops = j.value("gflops", 0.0);
  e.default_gflops = j.value("default_gflops", 0.0);
  e.shape = j.value("shape", "");
  return e;
}

std::mutex& active_mutex() {
  static std::mutex m;
  return m;
}
std::unique_ptr<Database>& active_slot() {
  static std::unique_ptr<Database> db;
  return db;
}

}  // namespace

std::string size_class(const GemmDesc& d) {
  const std::string prefix = d.batch > 1 ? "batched-" : "";
  const std::int64_t lo = std::min(d.m, d.n), hi = std::max(d.m, d.n);
  if (d.k >= 8 * hi && d.k >= 4096) return prefix + "long-k";
  if (lo <= 128 && hi >= 16 * lo && d.k >= 1024) return prefix + "skinny";
  if (lo >= 1024 && d.k <= 2048 && 4 * d.k <= lo) return prefix + "short-k";
  const double g = std::cbrt(double(d.m) * double(d.n) * double(d.k));
  return prefix + (g <= 384 ? "small" : g <= 1536 ? "medium" : "large");
}

bool shape_class(const std::string& cls) {
  return cls != "small" && cls != "medium" && cls != "large";
}

std::string default_db_path() {
  // KAFEL_TUNE_DB=off means "ignore the database" (choose_params), not a file named "off".
  if (const char* p = std::getenv("KAFEL_TUNE_DB"); p && *p && std::string(p) != "off") return p;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x)
    return std::string(x) + "/kafel/tuning.json";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.local/share/kafel/tuning.json";
  return "kafel-tuning.json";
}

void with_db_lock(const std::string& path, const std::function<void()>& fn) {
  std::error_code ec;
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string lock = path + ".lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("cannot create the lock file " + lock + ": " + std::strerror(errno));
  while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  try {
    fn();
  } catch (...) {
    ::flock(fd, LOCK_UN);
    ::close(fd);
    throw;
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
}

Database Database::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Database{};
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

Database Database::parse(const std::string& text, const std::string& origin) {
  Database db;
  try {
    json j = json::parse(text);
    for (const auto& e : j.at("entries")) db.entries_.push_back(from_json(e));
  } catch (const json::exception& e) {
    throw IoError("tuning database " + origin + " is malformed: " + e.what());
  }
  return db;
}

const Database& shipped_database() {
  static const Database db = Database::parse(shipped_tuning_json(), "data/tuning.json (built in)");
  return db;
}

void Database::save(const std::string& path) const {
  json j = {{"format", "kafel-tuning-1"}, {"entries", json::array()}};
  for (const auto& e : entries_) j["entries"].push_back(to_json(e));
  std::error_code ec;
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path(), ec);
  write_file_atomic(path, j.dump(2) + "\n");
}

void Database::put(const Entry& e) {
  for (auto& old : entries_)
    if (old.device == e.device && old.driver == e.driver && old.kernel == e.kernel &&
        old.dtype == e.dtype && old.size_class == e.size_class) {
      old = e;
      return;
    }
  entries_.push_back(e);
}

Database::Match Database::find(const Device& device, const std::string& kernel, const GemmTypes& t,
                               const std::string& cls) const {
  const std::string type = t.name();
  struct Rule {
    const char* what;
    bool (*match)(const Entry&, const Device&);
  };
  static const Rule rules[] = {
      {"device+driver",
       [](const Entry& e, const Device& d) { return e.device == d.name && e.driver == d.driver; }},
      {"device", [](const Entry& e, const Device& d) { return e.device == d.name; }},
      {"vendor",
       [](const Entry& e, const Device& d) { return !e.vendor.empty() && e.vendor == d.vendor; }},
  };
  for (bool same_class : {true, false})
    for (const auto& rule : rules)
      for (const auto& e : entries_) {
        if (e.kernel != kernel || e.dtype != type) continue;
        if (same_class && e.size_class != cls) continue;
        // Parameters tuned for a shape class (a split count, a skinny tile) say nothing about
        // other shapes, nor the reverse: they are found in their own class only.
        if (!same_class && (shape_class(cls) || shape_class(e.size_class))) continue;
        if (!rule.match(e, device)) continue;
        std::string who = std::string(rule.what) == "vendor" ? "vendor " + e.vendor : e.device;
        if (std::string(rule.what) == "device+driver") who += " / " + e.driver;
        return {&e, who + " | " + e.kernel + " " + e.dtype + " " + e.size_class};
      }
  return {};
}

const Database& active_database() {
  std::lock_guard lock(active_mutex());
  if (!active_slot()) {
    // A malformed user database must not break every GEMM: warn once and run without it.
    try {
      active_slot() = std::make_unique<Database>(Database::load(default_db_path()));
    } catch (const IoError& e) {
      std::cerr << "kafel: warning: " << e.what() << "; using the shipped tuning only\n";
      active_slot() = std::make_unique<Database>();
    }
  }
  return *active_slot();
}

void reload_active_database() {
  std::lock_guard lock(active_mutex());
  active_slot().reset();
}

}  // namespace kafel
