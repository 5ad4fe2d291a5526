// The CLBlast comparison baseline (built when CLBlast was found: KAFEL_HAVE_CLBLAST).
// Registered as ocl.clblast with baseline = true, so `--vs clblast` selects it.
#pragma once

#include <memory>

#include "core/backend.hpp"

namespace kafel::ocl {

bool have_clblast();
std::unique_ptr<GemmPlan> make_clblast(const Device& d, const GemmDesc& g, const Params& p);

}  // namespace kafel::ocl
