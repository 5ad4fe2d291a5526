// Chooses the parameters a kernel runs with: defaults, then tuned values, then user overrides.
// The tuning database lookup plugs in here, so every caller gets tuned values automatically.
#include <cstdlib>
#include <string>

#include "core/backend.hpp"
#include "tune/database.hpp"

namespace kafel {

Params choose_params(const GemmKernel& kernel, const Device& device, const GemmDesc& desc,
                     const Params& overrides, std::string* source) {
  if (kernel.params.empty()) {
    if (source) *source = "default";
    return kernel.params.resolve(overrides);
  }
  Params base;
  std::string from = "default";
  // $KAFEL_TUNE_DB=off ignores the database (reproducing default-parameter runs).
  const char* env = std::getenv("KAFEL_TUNE_DB");
  if (!(env && std::string(env) == "off")) {
    const std::string cls = tune::size_class(desc);
    auto match = tune::active_database().find(device, kernel.name, desc.dtype, cls);
    std::string origin = "tuned";
    if (!match.entry) {
      match = tune::shipped_database().find(device, kernel.name, desc.dtype, cls);
      origin = "shipped";
    }
    if (match.entry) {
      Params tuned = match.entry->params;
      // Parameters the kernel no longer has are dropped; an invalid combination is ignored.
      for (auto it = tuned.begin(); it != tuned.end();)
        it = kernel.params.has(it->first) ? std::next(it) : tuned.erase(it);
      Params candidate = kernel.params.defaults();
      for (const auto& [k, v] : tuned) candidate[k] = v;
      if (kernel.params.check(candidate).empty()) {
        base = tuned;
        from = origin + ": " + match.key;
      }
    }
  }
  Params merged = base;
  for (const auto& [k, v] : overrides) merged[k] = v;
  Params p = kernel.params.resolve(merged);
  if (!overrides.empty()) from = from == "default" ? "user" : from + " + user";
  if (source) *source = from;
  return p;
}

}  // namespace kafel
