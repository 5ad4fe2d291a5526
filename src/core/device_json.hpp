// A Device as JSON, written the same way by `kafel devices --json` and by the benchmark
// reports (bench JSON's "device"), so scripts read one format.
#pragma once

#include <nlohmann/json.hpp>

#include "kafel/device.hpp"

namespace kafel {

// Every field of the Device, `details` as an object (key order kept).
nlohmann::ordered_json device_json(const Device& d);

}  // namespace kafel
