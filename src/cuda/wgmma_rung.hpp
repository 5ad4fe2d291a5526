// What the Hopper (wgmma) rungs' registrations share: their element roles, parameters, the
// launcher that hands a plan's operands to wgmma_sm90a.cu, and the limits every configuration
// is checked against before a plan is made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "cuda/wgmma.hpp"

namespace kafel::cuda {

// Roles of the wgmma kernels, each needing Cap::wgmma_sm90a: bf16 and f16 with C in the input
// type or f32 (any layout: wgmma reads transposed 16-bit tiles), and with `k_major_types` also
// f32/tf32 (C f32), e4m3 and e5m2 (C bf16 or f32) and i8 (C i32), which wgmma reads K-major
// only: their plans relay A and B out k-contiguous once in load() (OperandForm::k_major).
std::vector<TypeSupport> wgmma_types(bool k_major_types);

// The kernel's options for `params` (names in wgmma_params()); missing names take defaults.
sm90::Options wgmma_options(const Params& params, int kernel);

// Parameters of the warp-specialised kernel, with their ranges and tuner candidates.
ParamSpace wgmma_params();

// Split-K ranges for `units` output units of the warp-specialised kernel on `device`: as many
// as fill its SMs once, each of at least `least_k_tiles` k-tiles, at most 128, their partial
// sums (`slice_bytes` each) within 1/8 of the device's memory. Below 2: no split helps.
std::int64_t fill_splits(const Device& device, std::int64_t units, std::int64_t k_tiles,
                         std::int64_t least_k_tiles, std::size_t slice_bytes);

// A GemmKernel running sm90 `kernel` (0: one CTA per tile, 1: warp-specialised) with the
// options wgmma_options(params, kernel); can_implement checks dimensions, the compiled
// configurations and the device's shared memory per block.
GemmKernel wgmma_kernel(std::string name, std::string summary, int rung, ParamSpace params,
                        int kernel, bool k_major_types);

}  // namespace kafel::cuda
