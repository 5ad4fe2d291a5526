// The host CPU as a kafel Device: its name, cores, clock, caches and peak estimate, all taken
// from cpu_features (the one place that detects them).
#pragma once

#include "kafel/device.hpp"

namespace kafel::cpu {

Device cpu_device();

}  // namespace kafel::cpu
