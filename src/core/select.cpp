// The one decision of how a GEMM runs: which kernel (named, or the best-ranked that can run it
// here) and which parameters (user > tuning database > kernel heuristic > defaults).
#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/backend.hpp"
#include "core/tuning_db.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"

namespace kafel {
namespace {

bool database_off() {
  const char* env = std::getenv("KAFEL_TUNE_DB");
  return env && std::string(env) == "off";
}

// The tuning database's entry for this kernel, device, roles and size class, if it is still
// valid for the kernel (parameters it no longer has are dropped; a combination outside the
// space is ignored, so a stale or hand-edited database can never reach a launch).
Params tuned_params(const GemmKernel& k, const Device& device, const GemmDesc& desc,
                    const Params& base, std::string& source) {
  if (k.params.empty() || database_off()) return {};
  const std::string cls = size_class(desc);
  auto match = active_database().find(device, k.name, desc.types, cls);
  std::string origin = "tuned";
  if (!match.entry) {
    match = shipped_database().find(device, k.name, desc.types, cls);
    origin = "shipped";
  }
  if (!match.entry) return {};
  // An entry without parameters records that the kernel's own choice measured fastest there.
  if (match.entry->params.empty()) {
    source = origin + ": " + match.key + ", the kernel's own choice";
    return {};
  }
  Params tuned;
  for (const auto& [name, v] : match.entry->params)
    if (k.params.has(name)) tuned[name] = v;
  Params candidate = base;
  for (const auto& [name, v] : tuned) candidate[name] = v;
  if (!k.params.check(candidate).empty()) return {};
  source = origin + ": " + match.key;
  return tuned;
}

struct Resolved {
  Params params;
  std::string source;
};

Resolved resolve_params(const GemmKernel& k, const Device& device, const GemmDesc& desc,
                        const Params& overrides) {
  bool from_heuristic = false;
  Resolved r{heuristic_params(k, device, desc, &from_heuristic), "default"};
  if (from_heuristic) r.source = "heuristic";
  std::string tuned_from;
  for (const auto& [name, v] : tuned_params(k, device, desc, r.params, tuned_from))
    r.params[name] = v;
  if (!tuned_from.empty()) r.source = tuned_from;
  for (const auto& [name, v] : overrides) r.params[k.params.get(name).name] = v;
  if (!overrides.empty()) r.source = r.source == "default" ? "user" : r.source + " + user";
  return r;
}

}  // namespace

Params heuristic_params(const GemmKernel& k, const Device& device, const GemmDesc& desc,
                        bool* from_heuristic) {
  Params p = k.params.defaults();
  const Params h = k.heuristic ? k.heuristic(device, desc) : Params{};
  for (const auto& [name, v] : h) p[k.params.get(name).name] = v;
  if (from_heuristic) *from_heuristic = !h.empty();
  return p;
}

std::string GemmChoice::config() const {
  return params.empty() ? "(" + source + ")" : format_params(params) + " (" + source + ")";
}

GemmChoice choose_params_for(const GemmKernel& k, const Device& device, const GemmDesc& desc,
                             const Params& overrides) {
  desc.validate();
  Resolved r = resolve_params(k, device, desc, overrides);
  if (const std::string why = k.params.check(r.params); !why.empty())
    throw InvalidArgument("invalid kernel parameters " + k.params.format(r.params) + " for " +
                          k.name + ": " + why);
  if (const std::string why = k.can_run(device, desc, r.params); !why.empty())
    throw Unsupported(why + " (" + desc.shape() + " on " + device.id + ")");
  return {k.name, r.params, r.source};
}

GemmChoice choose_gemm(const Device& device, const GemmDesc& desc, const std::string& kernel,
                       const Params& overrides) {
  desc.validate();
  if (!kernel.empty())
    return choose_params_for(find_gemm_kernel(device, kernel), device, desc, overrides);
  // Candidates by preference; the first whose chosen parameters can run wins. A user override
  // applies to every candidate that has those parameters.
  std::vector<const GemmKernel*> ranked;
  for (const auto& k : kernels_for(device))
    if (!k.baseline && k.preference_for(device, desc) > 0) ranked.push_back(&k);
  std::stable_sort(ranked.begin(), ranked.end(), [&](const GemmKernel* a, const GemmKernel* b) {
    return a->preference_for(device, desc) > b->preference_for(device, desc);
  });
  std::string reasons;
  for (const GemmKernel* k : ranked) {
    Params own;
    for (const auto& [name, v] : overrides)
      if (k->params.has(name)) own[name] = v;
    if (!k->runs(desc.types, device).empty()) continue;  // not this kernel's roles: say nothing
    Resolved r = resolve_params(*k, device, desc, own);
    const std::string why = k->can_run(device, desc, r.params);
    if (why.empty()) return {k->name, r.params, r.source};
    reasons += (reasons.empty() ? "" : "; ") + why;
  }
  throw Unsupported(
      "no kernel of " + device.id + " can run " + desc.shape() +
      (reasons.empty() ? " (no kernel implements these element types here)" : ": " + reasons));
}

}  // namespace kafel
