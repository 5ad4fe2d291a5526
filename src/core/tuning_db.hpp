// The tuning database: best parameters per device + driver, kernel, element type and size
// class, stored as JSON (name = value pairs) with a fallback chain for lookups.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/gemm.hpp"
#include "kafel/params.hpp"

namespace kafel {

// The class of a problem for the tuning database. Shape classes first: "long-k" (k >= 8 max(m, n)
// and k >= 4096: few output tiles, the work lies along k), "skinny" (min(m, n) <= 128,
// max(m, n) >= 16 min(m, n), k >= 1024), "short-k" (min(m, n) >= 1024, k <= 2048 and
// k <= min(m, n) / 4: a wide output over a short k, where writing C weighs on each tile);
// otherwise by the geometric mean of m, n, k: "small" (<= 384), "medium" (<= 1536) or "large".
// A batch (batch > 1) prefixes "batched-" to the class of one matrix.
std::string size_class(const GemmDesc& d);
// Whether a class is a shape class (long-k, skinny, short-k, any batched-*): entries of those
// classes are used for their own class only (Database::find's fallback skips them).
bool shape_class(const std::string& size_class);

struct Entry {
  std::string device, driver, vendor;  // who measured it
  std::string kernel, dtype, size_class;
  Params params;      // empty: the kernel's own choice (heuristic or defaults) measured fastest
  double gflops = 0;  // measured with these parameters
  double default_gflops = 0;  // measured with the kernel's own choice, same run
  std::string shape;          // the problem it was measured on
};

// $KAFEL_TUNE_DB, else $XDG_DATA_HOME/kafel/tuning.json, else ~/.local/share/kafel/tuning.json.
std::string default_db_path();

// Runs fn() holding an exclusive lock on `path`.lock (flock), so concurrent tuners merge their
// entries instead of losing them. Throws IoError when the lock file cannot be created.
void with_db_lock(const std::string& path, const std::function<void()>& fn);

class Database {
 public:
  // Reads `path`; a missing file is an empty database, a malformed one throws IoError.
  static Database load(const std::string& path);
  // Parses JSON text; `origin` names it in error messages.
  static Database parse(const std::string& text, const std::string& origin);
  // Writes atomically (temporary file + rename); throws IoError.
  void save(const std::string& path) const;

  // Replaces the entry with the same device, driver, kernel, dtype and size class.
  void put(const Entry& e);
  const std::vector<Entry>& entries() const { return entries_; }

  struct Match {
    const Entry* entry = nullptr;
    std::string key;  // which rule matched, e.g. "NVIDIA H100|580.65|ocl.reg|f32|large"
  };
  // Fallback chain, same size class first then any other of small / medium / large (never from
  // or to a shape class): device + driver, device name, vendor. Nothing found -> entry ==
  // nullptr.
  Match find(const Device& device, const std::string& kernel, const GemmTypes& t,
             const std::string& size_class) const;

 private:
  std::vector<Entry> entries_;
};

// The entries measured by the kafel developers (data/tuning.json, compiled in), consulted after
// the user's database so a fresh install starts from known-good parameters on known devices.
const Database& shipped_database();
// The text of data/tuning.json (generated at build time).
const char* shipped_tuning_json();

// The database choose_params consults: default_db_path(), read once per process and path.
const Database& active_database();
// Forgets the cached database (after a tune run wrote it, or in tests).
void reload_active_database();

}  // namespace kafel
