// Facts about NVIDIA GPUs by compute capability that need no GPU to compute: the capabilities
// kafel's kernels look for and the dense peak rates of the matrix units (tested without a GPU).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kafel/types.hpp"

namespace kafel::cuda {

// Capabilities of a GPU of compute capability sm_version (major * 10 + minor): fp64 always,
// fp16 from 5.3 on, Cap::mma_sm80 from 8.0 on, Cap::wgmma_sm90a on 9.0 exactly when this build
// carries sm_90a code (`sm90a_compiled`).
Caps cuda_caps(int sm_version, bool sm90a_compiled);

// Dense peak rates of the tensor cores (GFLOP/s, GOP/s for "i8") by compute mode — "tf32",
// "f16", "bf16", "fp8", "i8", "f64" — as SMs x clock x the architecture's rate per SM and
// cycle. Empty for architectures whose rates are not in the table (see cuda_device.cpp).
std::vector<std::pair<std::string, double>> tensor_peaks_for(int sm_version, int sms,
                                                             double clock_mhz);

// FP64 SIMT rate relative to FP32: 1/2 on the x.0 data-centre parts, less on the others.
double f64_ratio(int sm_version);

}  // namespace kafel::cuda
