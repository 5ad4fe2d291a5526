// The measured peak of this CPU: multiply-add rates (f32, f64, bf16, i8, AMX) on one thread per
// core and the read bandwidth of all cores, measured once per machine and cached on disk.
#pragma once

#include <string>

namespace kafel::cpu {

struct PeakMeasurement {
  double f32 = 0, f64 = 0;  // GFLOP/s of the widest FMA the kernels use; 0 = not measured
  double bf16 = 0;          // GFLOP/s of vdpbf16ps (AVX512_BF16 only)
  double i8 = 0;            // GOP/s of the i8 micro-kernel's instruction (vpdpbusd, vpmaddwd)
  double amx_bf16 = 0;      // GFLOP/s of tdpbf16ps on AMX tiles (cpu_has_amx() only)
  double amx_i8 = 0;        // GOP/s of tdpbssd on AMX tiles
  double read_gbs = 0;      // GB/s reading a buffer 4x the last-level cache; 0 = unmeasured
  int threads = 0;          // one per physical core
  std::string isa;          // the ISA the loops ran ("avx2", "avx512")
  double seconds = 0;       // how long the measurement took
  std::string source;       // "measured now", "cache FILE (measured DATE)" or why none
};

// Measures now, without the cache, in about `budget_s` seconds of wall time in total (the
// FMA loops share 40 % of it, the read passes 20 %, the rest is for touching their buffer;
// that first touch stops at max(0.7 s, 2 x budget), and the bandwidth is then 0: unmeasured).
PeakMeasurement measure_peak(double budget_s = 0.3);
// The multiply-add rates alone (no read passes), measured now in about `budget_s`: what
// `kafel bench` compares its run with (probe_peak in kafel/device.hpp).
PeakMeasurement measure_compute_peak(double budget_s = 0.5);

// "AMD EPYC|2 cores|avx2": what a cached measurement is valid for.
std::string machine_key();
// The cache file: cpu_peak.json beside the tuning database (default_db_path()).
std::string peak_cache_path();

// This machine's figures, read once per process: from the cache when it holds machine_key(),
// else measured and written there (write_file_atomic; an unwritable cache only costs the
// measurement next time). $KAFEL_CPU_PEAK: "measure" measures again (a figure in the cache
// only grows: a peak is an upper bound and a busy machine reads low),
// "off" measures nothing (all zero: the nominal estimate stays in use).
const PeakMeasurement& machine_peak();

}  // namespace kafel::cpu
