// The host CPU as a kafel Device, and the SIMD level the CPU kernels may use.
// simd_level() is the run-time feature check behind micro-kernel dispatch.
#pragma once

#include "kafel/device.hpp"

namespace kafel::cpu {

enum class SimdLevel { Generic, Avx2, Avx512 };

SimdLevel simd_level();
const char* to_string(SimdLevel s);
Device cpu_device();

}  // namespace kafel::cpu
