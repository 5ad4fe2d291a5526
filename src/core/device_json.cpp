// The JSON form of a Device (see device_json.hpp); one definition so `kafel devices --json`
// and the bench reports cannot drift apart.
#include "core/device_json.hpp"

namespace kafel {

using Json = nlohmann::ordered_json;

Json device_json(const Device& d) {
  Json details = Json::object();
  for (const auto& [key, value] : d.details) details[key] = value;
  return Json{{"id", d.id},
              {"backend", d.backend},
              {"name", d.name},
              {"vendor", d.vendor},
              {"driver", d.driver},
              {"is_gpu", d.is_gpu},
              {"compute_units", d.compute_units},
              {"clock_mhz", d.clock_mhz},
              {"global_memory", d.global_memory},
              {"local_memory", d.local_memory},
              {"cache_bytes", d.cache_bytes},
              {"peak_gflops_f32", d.peak_gflops_f32},
              {"peak_gflops_f64", d.peak_gflops_f64},
              {"bandwidth_gbs", d.bandwidth_gbs},
              {"details", details}};
}

}  // namespace kafel
