// The one verify-then-time harness (bench, tune, tests and `kafel gemm` use it), the records it
// produces, their writers (JSON, CSV, terminal tables) and the number formatting of reports.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "kafel/cov.hpp"
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
  // The device's peak estimate for the roles (0: unknown) and the median as a share of it; the
  // share is 0 (shown "-") when unknown or when the estimate is below the measurement, so no
  // report ever shows more than 100 %.
  double peak_gflops = 0;
  double peak_pct = 0;
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

// ---- covariance -------------------------------------------------------------------------------

struct CovBenchOptions {
  int warmup = 2;  // untimed runs after the verified one (stops early after warmup_budget_ms)
  int reps = 20;   // timed runs, each after one run of the read floor
  double warmup_budget_ms = 1000;
  // A kernel whose verified run takes longer than slow_ms gets slow_reps timed runs (the
  // serial rungs would otherwise take minutes).
  double slow_ms = 300;
  int slow_reps = 2;
  int e2e_reps = 10;        // end-to-end runs from pinned memory, where the plan streams
  double tolerance = 1e-6;  // relative Frobenius error against the float64 reference
  std::int64_t ddof = 1;    // divisor N - ddof
  bool rotate = true;       // rotate sample copies when they fit in ~2x the device cache
  Params overrides;         // kernel parameter overrides (resolved through choose_cov)
  // The float64 reference of the samples when the caller has it already (benchmarking several
  // kernels on one block); computed when null.
  const CovResult* reference = nullptr;
};

// One measured covariance kernel on one block. Times in milliseconds; 0 when not measured.
struct CovBenchRecord {
  std::string kernel;
  std::string config;  // "BLOCK=1024 ... (user)" or "(default)"
  Params params;
  std::string params_source;
  bool baseline = false;  // a vendor library: its error is reported, not enforced
  std::string device, device_name;
  std::int64_t channels = 0, samples = 0, ddof = 1, batch = 1;
  std::string layout;
  std::string type = "f32";  // sample type
  double flops = 0;          // CovDesc::flops() of the block (every batch)
  double median_ms = 0, best_ms = 0;
  double spread = 0;         // (p90 - p10) / median of the timed runs
  double floor_ms = 0;       // median of one plain read pass over the block on the device
  double copy_floor_ms = 0;  // one bare host->device copy of the block from pinned memory
  double e2e_ms = 0;         // copy in + kernel + result back, from pinned memory (streams)
  double gbs = 0;            // min_bytes / median
  double gflops = 0;         // flops / median
  // The compute floor: flops / the device's peak (SIMT f32; 0 when unknown), and which floor
  // binds: "memory" (the read floor is the larger) or "compute".
  double compute_floor_ms = 0;
  std::string bound;
  int slots = 1, warmup = 0, reps = 0;
  bool verified = false;
  double rel_err = 0, e2e_rel_err = 0;
  std::string timer;
  std::string status;  // "ok", "skipped" (Unsupported, too large) or "failed"
  std::string error;

  bool ok() const { return status == "ok"; }
  bool failed() const { return status == "failed"; }
};

// The covariance verify-then-time harness (`kafel cov --bench`, tests): one run verified
// against the float64 reference first (rel_err <= tolerance; a failure of one of our kernels
// is status "failed" with no timing), then warm-up and timed runs alternating with the read
// floor, median / best / spread, then end to end from pinned memory where the plan has a
// stream (verified too). `kernel` "" = the one choose_cov picks. Never throws for a kernel's
// failure; throws InvalidArgument for bad options, unknown names or a bad sample view.
CovBenchRecord bench_cov(const Device& device, const std::string& kernel,
                         const SamplesView& samples, const CovBenchOptions& opt = {});

// Checks the environment variables that change how kernels run ($KAFEL_NUM_THREADS), so a bad
// value fails before any work, naming the variable and its valid range: InvalidArgument.
void check_environment();

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

// A measured rate as % of a peak estimate: 0 (unknown) when the peak is unknown or below the
// measurement (an estimate that is wrong for this machine), so no report shows over 100 %.
double peak_share(double measured, double peak);
// "37.5 %" or "-" (peak_share 0).
std::string peak_share_text(double measured, double peak);

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
