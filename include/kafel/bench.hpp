// The one verify-then-time harness (bench, tune, tests and `kafel gemm` use it), the records it
// produces, their writers (JSON, CSV, terminal tables) and the number formatting of reports.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/gemm.hpp"
#include "kafel/params.hpp"

namespace kafel {

struct BenchOptions {
  int warmup = 10;
  int reps = 20;
  // Warm-up stops early once it has taken this long: more would only cost time.
  double warmup_budget_ms = 1000;
  std::uint64_t seed = 1;
  VerifyOptions verify;
  // Rotate between copies of the operands when they fit in ~2x the device cache, so repeated
  // runs do not all find them warm.
  bool rotate = true;
  Params overrides;  // kernel parameter overrides (resolved through choose_gemm)
  // Operands drawn as small integers (exact in every type): the check is then exact too.
  bool integer_values = false;
};

// One measured (kernel, parameters, problem). Times in milliseconds; 0 when not measured.
struct BenchRecord {
  std::string kernel;
  std::string config;         // "TS=16 WPT=8 (tuned)" or "(no parameters)"
  Params params;              // the parameters used
  std::string params_source;  // "defaults", "tuned", "overrides", ... from choose_params
  bool baseline = false;      // a comparison library, not one of ours
  std::string device;         // device id, e.g. "cpu", "cuda:0"
  std::string device_name;
  std::string type;  // the element roles' name: "f32", "bf16->f32", "f32/tf32" ...
  std::string a_type, b_type, c_type, compute;  // the roles one by one
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;  // matrices of that shape (GFLOP/s count them all)
  std::string op;          // "NN", "NT", ...
  double median_ms = 0, best_ms = 0;
  double spread = 0;  // (p90 - p10) / median of the timed runs: how steady the machine was
  double gflops = 0, best_gflops = 0;  // from median and best
  double peak_pct = 0;  // median GFLOP/s as % of the device's peak for the roles (0: unknown)
  double total_ms = 0;  // load + run + fetch, steady clock
  int slots = 1, warmup = 0, reps = 0;
  bool verified = false;
  std::string verify_method;
  double max_abs_err = 0, rel_err = 0;
  std::string timer;
  std::string status;  // "ok", "skipped" (Unsupported / invalid parameters) or "failed"
  std::string error;   // "" when ok; "skipped: <reason>" or the failure message

  bool ok() const { return status == "ok"; }
  bool failed() const { return status == "failed"; }
};

// Benchmarks one kernel ("" = the one choose_gemm picks) on one problem with random operands:
// one run, verified against the float64 reference, then warm-up and timed runs. A batch
// (desc.batch > 1) is stored strided, matrix after matrix, and every matrix is verified. Never
// throws for a kernel's failure: Unsupported and invalid parameters become status "skipped", any
// other error or a failed verification status "failed" (no timing is reported for an
// unverified result). Throws InvalidArgument for an unknown kernel name or a bad descriptor.
BenchRecord bench_gemm(const Device& device, const std::string& kernel, const GemmDesc& desc,
                       const BenchOptions& opt = {});

// One verified run on the caller's operands (any layouts, roles from desc): C is set to C0
// (or poisoned when beta == 0, so unwritten elements fail), the GEMM runs through gemm(), the
// result is verified. What every test of a kernel checks.
struct CheckedRun {
  GemmReport report;
  VerifyResult verify;
};
CheckedRun run_verified(const Device& device, const GemmDesc& desc, const MatrixView& A,
                        const MatrixView& B, const MatrixView& C0, const MatrixView& C,
                        const GemmOptions& opt = {});
// The same for a batch (gemm_batched, verify_gemm_batch): one view per matrix in each list,
// desc.batch of them; C0 may be empty when beta == 0.
CheckedRun run_verified_batch(const Device& device, const GemmDesc& desc,
                              const std::vector<MatrixView>& A, const std::vector<MatrixView>& B,
                              const std::vector<MatrixView>& C0, const std::vector<MatrixView>& C,
                              const GemmOptions& opt = {});

// How many operand copies to rotate through for a working set of `bytes` (1 = no rotation).
int rotation_slots(double bytes, std::uint64_t cache_bytes);

// "[3/12] cpu.naive 512x512x512 f32 ..." (no newline).
std::string progress_line(int index, int total, const std::string& kernel, const GemmDesc& desc,
                          const Params& params = {});

// Writes {"kafel_version", "device": {...}, "records": [...]} (device may be null: nullptr)
// atomically (write_file_atomic).
void write_bench_json(const std::string& path, const std::vector<BenchRecord>& records,
                      const Device* device);
void write_bench_csv(const std::string& path, const std::vector<BenchRecord>& records);
std::string bench_json_text(const std::vector<BenchRecord>& records, const Device* device);

// Aligned table. For each name in `baselines` (e.g. "cpu.openblas") a "vs <name>" column holds
// our GFLOP/s / the baseline's at the same size and type.
void print_bench_table(std::ostream& os, const std::vector<BenchRecord>& records,
                       const std::vector<std::string>& baselines = {});

// The lecture's launch-configuration table: GFLOP/s with rows = row_param values and
// columns = col_param values, one table per kernel, type and size that has both parameters.
void print_param_grid(std::ostream& os, const std::vector<BenchRecord>& records,
                      const std::string& row_param, const std::string& col_param);

// ---- report formatting -----------------------------------------------------------------------

// printf-style formatting of one number ("%.3g", "%.1f GFLOP/s") without iostream state.
std::string format_num(const char* format, double v);
// "512 B", "1.5 GB": binary units, one decimal above bytes.
std::string human_bytes(double bytes);
// The median of a sample (the mean of the two middle values when the count is even); 0 for an
// empty one.
double median(std::vector<double> v);
// The q-quantile by nearest rank (q = 0.5: the lower middle value, q = 0.99: p99); 0 for an
// empty sample.
double quantile(std::vector<double> v, double q);

}  // namespace kafel
