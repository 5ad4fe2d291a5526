// `kafel devices`: every device of every backend compiled in, with its capabilities, peak
// figures (SIMT and matrix units) and kernels. --json writes the library's device_json.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "commands.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"
#include "kafel/kernels.hpp"

namespace kafel::cli {

namespace {

using Json = nlohmann::ordered_json;

template <class List>
std::string names_of(const List& kernels) {
  std::string s;
  for (const auto& k : kernels) s += (s.empty() ? "" : ", ") + k.name;
  return s.empty() ? "none" : s;
}

// The library's device JSON (the same object bench reports carry) plus the kernels.
Json device_with_kernels(const Device& d) {
  Json j = Json::parse(device_json(d));
  Json gemm = Json::array(), cov = Json::array();
  for (const auto& k : gemm_kernels(d)) gemm.push_back(k.name);
  for (const auto& k : cov_kernels(d)) cov.push_back(k.name);
  j["kernels"] = gemm;
  j["cov_kernels"] = cov;
  return j;
}

std::string tensor_peaks(const Device& d) {
  std::string s;
  for (const auto& [mode, gflops] : d.tensor_peaks)
    s += (s.empty() ? "" : ", ") + mode + " " + format_num("%.0f", gflops);
  return s;
}

void print_device(const Device& d) {
  auto line = [](const std::string& key, const std::string& value) {
    std::cout << "  " << key << std::string(key.size() < 16 ? 16 - key.size() : 1, ' ') << value
              << '\n';
  };
  std::cout << d.id << "  " << d.name << (d.vendor.empty() ? "" : " (" + d.vendor + ")") << '\n';
  if (!d.driver.empty()) line("driver", d.driver);
  line("compute units", std::to_string(d.compute_units));
  line("clock", format_num("%.0f MHz", d.clock_mhz));
  line("memory", human_bytes(double(d.global_memory)));
  line("local memory", human_bytes(double(d.local_memory)));
  if (d.cache_bytes) line("cache", human_bytes(double(d.cache_bytes)));
  line("capabilities", d.caps.empty() ? "none beyond the backend" : d.caps.names());
  line("peak f32", format_num("%.1f GFLOP/s", d.peak_gflops_f32) + " (estimate)");
  line("peak f64", format_num("%.1f GFLOP/s", d.peak_gflops_f64) + " (estimate)");
  if (!d.tensor_peaks.empty()) line("tensor peaks", tensor_peaks(d) + " GFLOP/s or GOP/s");
  if (d.bandwidth_gbs > 0) line("bandwidth", format_num("%.1f GB/s", d.bandwidth_gbs));
  for (const auto& [key, value] : d.details) line(key, value);
  line("gemm kernels", names_of(gemm_kernels(d)));
  line("cov kernels", names_of(cov_kernels(d)));
}

struct DevicesCli {
  std::string json;
  bool best = false;
};

int run_devices(const DevicesCli& opt) {
  check_outputs({{"--json", opt.json}}, {});
  if (opt.best) {  // for scripts: just the id of the fastest device present
    std::cout << best_device().id << '\n';
    return kExitOk;
  }
  auto devices = list_devices();
  Json all = Json::array();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (i) std::cout << '\n';
    print_device(devices[i]);
    all.push_back(device_with_kernels(devices[i]));
  }
  if (!opt.json.empty()) write_file_atomic(opt.json, all.dump(2) + "\n");
  return kExitOk;
}

}  // namespace

Run setup_devices(CLI::App& sub) {
  auto opt = std::make_shared<DevicesCli>();
  sub.footer(
      "Peaks are estimates (units x lanes x 2 x clock); tensor peaks are the matrix units' rates\n"
      "by compute mode where the device has them.");
  sub.add_option("--json", opt->json, "Also write the devices as JSON to this file");
  sub.add_flag("--best", opt->best,
               "Print only the id of the fastest device (CUDA GPU, else OpenCL GPU, else cpu)");
  return [opt] { return run_devices(*opt); };
}

}  // namespace kafel::cli
