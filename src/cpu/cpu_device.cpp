// Describes the host CPU as a kafel Device. Peak: the measured one (peak.hpp), else physical
// cores x FLOP/cycle of the widest FMA unit x the clock; `details` keeps both and the sources.
#include "cpu/cpu_device.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/registry.hpp"
#include "core/thread_pool.hpp"
#include "cpu/cpu_features.hpp"
#include "cpu/openblas.hpp"
#include "cpu/peak.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"

namespace kafel::cpu {
namespace {

std::uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? std::uint64_t(pages) * std::uint64_t(size) : 0;
}

std::string hex(int v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02x", v);
  return buf;
}

// "f32 X, f64 Y, bf16 Z GFLOP/s, i8 W GOP/s": the multiply-add rates of a measurement.
std::string rates_text(const PeakMeasurement& m) {
  std::string text = format_num("f32 %.1f", m.f32) + format_num(", f64 %.1f", m.f64);
  if (m.bf16 > 0) text += format_num(", bf16 %.1f", m.bf16);
  text += " GFLOP/s";
  if (m.bf16 > 0 && !cpu_bf16_dot_pays() && m.amx_bf16 <= 0)
    text += " (bf16: vdpbf16ps, unused: bf16 GEMMs run on the f32 FMA here)";
  if (m.i8 > 0) text += format_num(", i8 %.1f GOP/s", m.i8);
  if (m.amx_bf16 > 0)
    text += format_num("; AMX tiles: bf16 %.1f GFLOP/s", m.amx_bf16) +
            format_num(", i8 %.1f GOP/s (what bf16 and i8 GEMMs run on)", m.amx_i8);
  return text;
}

// The bf16 and i8 peaks of a measurement, each of the unit the default GEMM path runs on:
// AMX tiles where the CPU has them, else vdpbf16ps where it pays (bf16 on the f32 FMA
// otherwise: no separate peak) and the i8 dot-product instruction.
std::vector<std::pair<std::string, double>> tensor_rates(const PeakMeasurement& m) {
  std::vector<std::pair<std::string, double>> out;
  if (m.amx_bf16 > 0 && cpu_has_amx())
    out.emplace_back("bf16", m.amx_bf16);
  else if (m.bf16 > 0 && cpu_bf16_dot_pays())
    out.emplace_back("bf16", m.bf16);
  if (m.amx_i8 > 0 && cpu_has_amx())
    out.emplace_back("i8", m.amx_i8);
  else if (m.i8 > 0)
    out.emplace_back("i8", m.i8);
  return out;
}

// " (avx512, 2 threads, 0.22 s)": how a measurement ran.
std::string run_text(const PeakMeasurement& m) {
  return " (" + m.isa + ", " + std::to_string(m.threads) + " threads, " +
         format_num("%.2f s", m.seconds) + ")";
}

// The measured figures (peak.hpp) replace the nominal ones; a measurement that failed (or
// $KAFEL_CPU_PEAK=off) leaves the nominal estimate in place.
void add_measured_peak(Device& d) {
  PeakMeasurement m;
  try {
    m = machine_peak();
  } catch (const Error& e) {  // a bad $KAFEL_CPU_PEAK fails loudly in the listing, not silently
    d.details.emplace_back("measured peak", std::string("none: ") + e.what());
    return;
  }
  if (m.f32 <= 0 || m.f64 <= 0) {
    d.details.emplace_back("measured peak", "none: " + m.source);
    return;
  }
  d.peak_gflops_f32 = m.f32;
  d.peak_gflops_f64 = m.f64;
  for (const auto& [key, value] : tensor_rates(m)) d.tensor_peaks.emplace_back(key, value);
  if (m.read_gbs > 0) d.bandwidth_gbs = m.read_gbs;
  std::string text = rates_text(m);
  text += m.read_gbs > 0 ? format_num(", read %.1f GB/s", m.read_gbs)
                         : std::string(", read bandwidth not measured (machine too busy)");
  d.details.emplace_back("measured peak", text + run_text(m));
  d.details.emplace_back("measured peak source", m.source);
}

}  // namespace

Device cpu_device() {
  Device d;
  d.id = "cpu";
  d.backend = "cpu";
  d.name = cpuinfo_field("model name");
  if (d.name.empty()) d.name = "host CPU";
  d.vendor = cpuinfo_field("vendor_id");
  d.driver = "native";
  d.compute_units = hardware_threads();
  const CpuClock& clock = cpu_clock();
  d.clock_mhz = clock.mhz;
  d.global_memory = physical_memory();
  const CacheSizes& cache = cache_sizes();
  d.local_memory = static_cast<std::uint64_t>(cache.l1d);
  d.cache_bytes = static_cast<std::uint64_t>(cache.l3 ? cache.l3 : cache.l2);
  // Nominal: physical cores (SMT siblings share the FMA pipes) x FLOP/cycle x clock. Kept in
  // `details`; the peak fields hold the measured figures whenever there are some.
  const Isa isa = cpu_isa();
  const double f32_per_cycle = nominal_f32_flops_per_cycle();
  const int cores = physical_cores();
  const double nominal_f32 = cores * f32_per_cycle * clock.mhz / 1000.0;
  d.peak_gflops_f32 = nominal_f32;
  d.peak_gflops_f64 = nominal_f32 / 2.0;
  if (isa_supported(Isa::avx2)) d.caps |= Cap::avx2;
  if (isa_supported(Isa::avx512)) d.caps |= Cap::avx512;
  if (cpu_has_avx512_bf16()) d.caps |= Cap::avx512_bf16;
  if (cpu_has_avx512_vnni()) d.caps |= Cap::avx512_vnni;
  if (cpu_has_amx()) d.caps |= Cap::amx;
  std::string simd(to_string(isa));
  try {
    if (default_isa() != isa)
      simd += " (kernels use " + std::string(to_string(default_isa())) + ")";
  } catch (const InvalidArgument& e) {  // a bad $KAFEL_CPU_ISA fails the kernels, not the listing
    simd += std::string(" ($KAFEL_CPU_ISA: ") + e.what() + ")";
  }
  const CpuIdent& id = cpu_ident();
  d.details = {
      {"simd", simd},
      {"cpuid", id.vendor + " family " + hex(id.family) + " model " + hex(id.model) + " (" +
                    std::string(to_string(cpu_uarch())) + ")"},
      {"l1d", std::to_string(cache.l1d)},
      {"l2", std::to_string(cache.l2)},
      {"l3", std::to_string(cache.l3)},
      {"clock source", clock.source},
      {"nominal peak",
       clock.mhz > 0 ? std::to_string(cores) + " cores x " + format_num("%.0f", f32_per_cycle) +
                           " f32 FLOP/cycle x " + format_num("%.0f MHz", clock.mhz) + " = " +
                           format_num("%.1f GFLOP/s f32", nominal_f32) + " (f64: half)"
                     : "unknown (no clock)"}};
  add_measured_peak(d);
  if (const OpenblasCore& blas = openblas_core(); !blas.text.empty())
    d.details.emplace_back("openblas",
                           blas.text + (blas.warning.empty() ? "" : "; " + blas.warning));
  return d;
}

namespace {

void set_tensor_peak(Device& d, const std::string& key, double value) {
  for (auto& [name, v] : d.tensor_peaks)
    if (name == key) {
      v = value;
      return;
    }
  d.tensor_peaks.emplace_back(key, value);
}

// kafel::probe_peak for the CPU: the multiply-add loops of `kafel devices`, run now.
bool probe_cpu_peak(Device& d) {
  const PeakMeasurement m = measure_compute_peak();
  if (m.f32 <= 0 || m.f64 <= 0) return false;
  d.peak_gflops_f32 = m.f32;
  d.peak_gflops_f64 = m.f64;
  for (const auto& [key, value] : tensor_rates(m)) set_tensor_peak(d, key, value);
  d.details.emplace_back("peak probed", rates_text(m) + run_text(m));
  return true;
}

const Register registered{
    Backend{"cpu", 0, [] { return std::vector<Device>{cpu_device()}; }, probe_cpu_peak}};
}  // namespace

}  // namespace kafel::cpu
