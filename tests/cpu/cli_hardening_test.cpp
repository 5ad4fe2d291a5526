// Issue 15's classes against the real `kafel` binary (exit code + one-line message): parameters,
// outputs, concurrent tuners, integers, sizes, silent substitutions, consistency, honest figures.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_util.hpp"
#include "core/cov_stream.hpp"
#include "kafel/bench.hpp"
#include "kafel/device.hpp"
#include "kafel/io.hpp"
#include "kafel/kernels.hpp"

namespace kafel {
namespace {

using test::CliResult;
using test::expect_refused;
using test::read_bytes;
using test::run_kafel;
using test::ScratchDir;
using test::write_bytes;

Matrix filled(DType t, std::int64_t rows, std::int64_t cols, double v) {
  Matrix m(t, rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) m.set(i, j, v);
  return m;
}

bool leftover_temporaries(const ScratchDir& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) return true;
  return false;
}

// ---- 1. parameters: every range, from every source, before any build or launch ------------

// A value just outside each parameter's range, on every kernel of the CPU, through --param:
// refused by the range check (a hang or crash would hit the timeout or show as a signal).
TEST(Hardening, ParameterOutsideItsRangeOnEveryRung) {
  ScratchDir dir("hard");
  const Device cpu = select_device("cpu");
  int checked = 0;
  for (const auto& k : gemm_kernels(cpu)) {
    for (const auto& p : k.params.params) {
      for (std::int64_t v : {p.min - 1, p.max + 1}) {
        SCOPED_TRACE(k.name + " " + p.name + "=" + std::to_string(v));
        const std::string arg = "--param " + p.name + "=" + std::to_string(v);
        expect_refused(
            run_kafel(dir, "gemm --device cpu --m 16 --kernel " + k.name + " " + arg, "", 60),
            "outside");
        expect_refused(run_kafel(dir,
                                 "bench --device cpu --sizes 16 --warmup 0 --reps 1 --kernels " +
                                     k.name + " " + arg,
                                 "", 60),
                       "outside");
        ++checked;
      }
    }
  }
  for (const auto& k : cov_kernels(cpu)) {
    for (const auto& p : k.params.params) {
      SCOPED_TRACE(k.name + " " + p.name);
      const std::string arg = "--param " + p.name + "=" + std::to_string(p.min - 1);
      expect_refused(
          run_kafel(dir, "cov --device cpu --samples 100 --kernel " + k.name + " " + arg, "", 60),
          "outside");
      ++checked;
    }
  }
  EXPECT_GT(checked, 4);
}

// A tuning-database entry outside the kernel's ranges never reaches a launch; a valid one does.
TEST(Hardening, TuningDatabaseEntriesAreCheckedAgainstTheRanges) {
  ScratchDir dir("hard");
  const Device cpu = select_device("cpu");
  auto db = [&](std::int64_t mc) {
    nlohmann::json e = {{"device", cpu.name},     {"driver", cpu.driver},
                        {"vendor", cpu.vendor},   {"kernel", "cpu.packed"},
                        {"dtype", "f32"},         {"size_class", "small"},
                        {"params", {{"MC", mc}}}, {"gflops", 1.0},
                        {"default_gflops", 1.0},  {"shape", "64x64x64 NN f32"}};
    return nlohmann::json{{"format", "kafel-tuning-1"}, {"entries", {e}}}.dump();
  };
  write_bytes(dir.file("bad.json"), db(-7));
  write_bytes(dir.file("good.json"), db(480));
  const CliResult bad = run_kafel(dir, "gemm --device cpu --m 64 --kernel cpu.packed",
                                  "KAFEL_TUNE_DB=" + dir.file("bad.json"));
  ASSERT_EQ(bad.rc, 0) << bad.err;
  EXPECT_EQ(bad.out.find("tuned"), std::string::npos) << bad.out;
  EXPECT_EQ(bad.out.find("MC=-7"), std::string::npos) << bad.out;
  const CliResult good = run_kafel(dir, "gemm --device cpu --m 64 --kernel cpu.packed",
                                   "KAFEL_TUNE_DB=" + dir.file("good.json"));
  ASSERT_EQ(good.rc, 0) << good.err;
  EXPECT_NE(good.out.find("MC=480"), std::string::npos) << good.out;
  EXPECT_NE(good.out.find("tuned"), std::string::npos) << good.out;
}

TEST(Hardening, ZeroAndNegativeCountsAreErrorsNotCrashes) {
  ScratchDir dir("hard");
  const std::pair<const char*, const char*> cases[] = {
      {"cov --device cpu --bench --reps 0 --samples 1000", "--reps must be between 1"},
      {"cov --device cpu --bench --warmup -1 --samples 1000", "--warmup must be between 0"},
      {"cov --device cpu --depth 0", "--depth must be between 1"},
      {"cov --device cpu --depth 65", "--depth must be between 1 and 64"},
      {"cov --device cpu --blocks 0", "--blocks must be >= 1"},
      {"cov --device cpu --blocks -2", "--blocks must be between -1"},
      {"cov --device cpu --channels 0", "--channels must be between 1"},
      {"cov --device cpu --samples -5", "--samples must be between 1"},
      {"cov --device cpu --ddof -1", "--ddof must be between 0"},
      {"bench --device cpu --reps 0", "--reps must be between 1"},
      {"bench --device cpu --warmup -3", "--warmup must be between 0"},
      {"tune --device cpu --reps 0", "--reps must be between 1"},
      {"gen 3 -4 5 -o x.dat", "K must be between 1"},
  };
  for (const auto& [args, needle] : cases) {
    SCOPED_TRACE(args);
    expect_refused(run_kafel(dir, args), needle);
  }
}

// ---- 2. output files ---------------------------------------------------------------------

TEST(Hardening, OutputPathsAreCheckedBeforeTheWork) {
  ScratchDir dir("hard");
  const std::pair<const char*, const char*> cases[] = {
      {"bench --device cpu --sizes 64 --json nodir/r.json", "does not exist"},
      {"bench --device cpu --sizes 64 --csv .", "is a directory"},
      {"gemm --device cpu --m 64 --out nodir/c.npy", "does not exist"},
      {"cov --device cpu --samples 1000 --json nodir/s.json", "does not exist"},
      {"cov --device cpu --bench --samples 1000 --json nodir/s.json", "does not exist"},
      {"tune --device cpu --kernels cpu.cached_column --sizes 32 --budget 1 --db .",
       "is a directory"},
      {"gen 4 4 4 -o nodir/m.dat", "does not exist"},
      {"devices --json nodir/d.json", "does not exist"},
  };
  for (const auto& [args, needle] : cases) {
    SCOPED_TRACE(args);
    const CliResult r = run_kafel(dir, args);
    expect_refused(r, needle);  // one line: no progress, no benchmark ran first
  }
}

TEST(Hardening, WritingOverAnInputIsRefused) {
  ScratchDir dir("hard");
  ASSERT_EQ(run_kafel(dir, "gen 8 8 8 -o m.dat").rc, 0);
  ASSERT_EQ(run_kafel(dir, "gen 8 8 8 -o p.npy").rc, 0);
  const std::string before = read_bytes(dir.file("m.dat")), a = read_bytes(dir.file("p_a.npy"));
  expect_refused(run_kafel(dir, "gemm --device cpu --input m.dat --out m.dat"), "over the input");
  expect_refused(run_kafel(dir, "gemm --device cpu --input m.dat --json ./m.dat"),
                 "over the input");
  expect_refused(run_kafel(dir, "gemm --device cpu --a p_a.npy --b p_b.npy --out p_a.npy"),
                 "over the input");
  expect_refused(run_kafel(dir, "gemm --device cpu --m 8 --out c.npy --json c.npy"),
                 "name the same file");
  write_bytes(dir.file("x.f32"), std::string(64, '\0'));
  expect_refused(run_kafel(dir, "cov --device cpu --channels 2 --input x.f32 --out x.f32"),
                 "over the input");
  EXPECT_EQ(read_bytes(dir.file("m.dat")), before);
  EXPECT_EQ(read_bytes(dir.file("p_a.npy")), a);
}

// A result that fails verification writes no result file (and leaves an old one as it was).
TEST(Hardening, NoResultFileWhenVerificationFails) {
  ScratchDir dir("hard");
  ASSERT_EQ(run_kafel(dir, "gen 6 5 4 -o m.dat").rc, 0);
  std::string bytes = read_bytes(dir.file("m.dat"));
  const float wrong = 1e3f;
  std::memcpy(bytes.data() + bytes.size() - 4, &wrong, 4);  // the stored C is now wrong
  write_bytes(dir.file("bad.dat"), bytes);
  write_bytes(dir.file("old.json"), "keep me");
  const CliResult r =
      run_kafel(dir, "gemm --device cpu --input bad.dat --out c.npy --json old.json");
  EXPECT_EQ(r.rc, 3) << r.err;
  EXPECT_NE(r.err.find("differs from the stored C"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("c.npy")));
  EXPECT_EQ(read_bytes(dir.file("old.json")), "keep me");
  EXPECT_FALSE(leftover_temporaries(dir));
}

// A full device: the write fails with the system's reason, nothing is left behind.
TEST(Hardening, FullDiskFailsCleanly) {
  ScratchDir dir("hard");
  expect_refused(run_kafel(dir, "gemm --device cpu --m 64 --out /dev/full"), "No space left");
  const CliResult bench = run_kafel(dir,
                                    "bench --device cpu --sizes 16 --kernels cpu.naive --warmup 0 "
                                    "--reps 1 --json /dev/full");
  EXPECT_EQ(bench.rc, 1) << bench.err;
  EXPECT_NE(bench.err.find("kafel: error: cannot write '/dev/full': No space left"),
            std::string::npos)
      << bench.err;
  // A 64 KB tmpfs (in a user namespace, where the system allows it): the pre-existing file
  // survives a write that does not fit, and no temporary is left.
  const std::string mnt = dir.file("small");
  std::filesystem::create_directories(mnt);
  const std::string script =
      "mount -t tmpfs -o size=64k tmpfs '" + mnt + "' && echo keep > '" + mnt + "/c.npy' && cd '" +
      mnt +
      "' && '" KAFEL_CLI_PATH
      "' gemm --device cpu --m 200 --out c.npy >/dev/null 2>err.txt; echo rc=\\$? "
      ">rc.txt; cat c.npy err.txt rc.txt; ls -a";
  const std::string cmd =
      "unshare -rm sh -c \"" + script + "\" > '" + dir.file("full.txt") + "' 2>&1";
  if (std::system(cmd.c_str()) != 0 ||
      read_bytes(dir.file("full.txt")).find("rc=") == std::string::npos)
    GTEST_SKIP() << "no user-namespace tmpfs here (/dev/full checked above): "
                 << read_bytes(dir.file("full.txt"));
  const std::string got = read_bytes(dir.file("full.txt"));
  EXPECT_EQ(got.rfind("keep\n", 0), 0u) << got;
  EXPECT_NE(got.find("No space left"), std::string::npos) << got;
  EXPECT_NE(got.find("rc=1"), std::string::npos) << got;
  EXPECT_EQ(got.find(".tmp."), std::string::npos) << got;
}

// ---- 3. concurrent use -------------------------------------------------------------------

// Tuners started together on one database, each storing a different entry (one kernel, four
// element types) at about the same moment: without the lock, read-merge-write would lose some.
TEST(Hardening, ConcurrentTunersOnOneDatabaseKeepEveryEntry) {
  ScratchDir dir("hard");
  const std::string db = dir.file("shared.json");
  const std::vector<std::string> types = {"f32", "f64", "i32", "f16"};
  std::string cmd = "cd '" + dir.path().string() + "' && (";
  for (const auto& t : types)
    cmd += "timeout 120 '" KAFEL_CLI_PATH
           "' tune --device cpu --kernels cpu.cached_column "
           "--sizes 32 --budget 1 --types " +
           t + " --db '" + db + "' >" + t + ".txt 2>&1 & ";
  cmd += "wait)";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto doc = nlohmann::json::parse(read_bytes(db));
  std::vector<std::string> stored;
  for (const auto& e : doc["entries"]) stored.push_back(e["dtype"].get<std::string>());
  for (const auto& t : types)
    EXPECT_NE(std::find(stored.begin(), stored.end(), t), stored.end())
        << t << " lost: " << read_bytes(dir.file(t + ".txt"));
  EXPECT_FALSE(leftover_temporaries(dir));
}

// ---- 4. integer semantics ----------------------------------------------------------------

TEST(Hardening, IntegerScalarsOverflowAndNarrowingInputs) {
  ScratchDir dir("hard");
  expect_refused(run_kafel(dir, "gemm --device cpu --m 8 --type i32 --alpha 0.5"),
                 "--alpha 0.5: integer GEMM (i32) takes whole numbers");
  expect_refused(run_kafel(dir, "gemm --device cpu --m 8 --type i8 --beta 2.5"), "--beta 2.5");
  write_npy(dir.file("ibig.npy"), filled(DType::i32, 4, 4, 100000));
  expect_refused(run_kafel(dir, "gemm --device cpu --a ibig.npy --b ibig.npy"), "may overflow");
  const CliResult wrap = run_kafel(dir, "gemm --device cpu --a ibig.npy --b ibig.npy --allow-wrap");
  EXPECT_EQ(wrap.rc, 0) << wrap.err;
  EXPECT_NE(wrap.err.find("warning"), std::string::npos) << wrap.err;
  EXPECT_NE(wrap.err.find("wrap modulo 2^32"), std::string::npos) << wrap.err;
  Matrix mil = filled(DType::f64, 2, 2, 1.0), half = filled(DType::f64, 2, 2, 1.0),
         big = filled(DType::f32, 2, 2, 1.0);
  mil.set(1, 0, 1e6);
  half.set(0, 1, 0.5);
  big.set(1, 1, 300);
  write_npy(dir.file("mil.npy"), mil);
  write_npy(dir.file("half.npy"), half);
  write_npy(dir.file("big.npy"), big);
  write_npy(dir.file("ones.npy"), filled(DType::f64, 2, 2, 1.0));
  expect_refused(run_kafel(dir, "gemm --device cpu --a mil.npy --b ones.npy --type f16"),
                 "cannot convert A (1, 0) = 1000000 to f16: it overflows f16");
  expect_refused(run_kafel(dir, "gemm --device cpu --a ones.npy --b half.npy --type i32"),
                 "cannot convert B (0, 1) = 0.5 to i32: it is not an integer");
  expect_refused(run_kafel(dir, "gemm --device cpu --a big.npy --b big.npy --type i8"),
                 "cannot convert A (1, 1) = 300 to i8: it is outside the range of i8");
  const CliResult help = run_kafel(dir, "gemm --help");
  EXPECT_NE(help.out.find("--allow-wrap"), std::string::npos);
  EXPECT_NE(help.out.find("modulo 2^32"), std::string::npos);
}

// ---- 5. sizes checked before allocating ------------------------------------------------------

TEST(Hardening, HugeCovarianceIsRefusedBeforeAllocating) {
  ScratchDir dir("hard");
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused(run_kafel(dir, "cov --device cpu --channels 100000 --samples 100000000", "", 60),
                 "needs");
  expect_refused(
      run_kafel(dir, "cov --device cpu --bench --channels 1000 --samples 10000000000", "", 60),
      "needs");
  expect_refused(
      run_kafel(dir, "cov --device cpu --channels 10 --samples 1000000000 --depth 64", "", 60),
      "needs");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 30) << "the refusal must come before any allocation";
}

// ---- 6. no silent substitutions ------------------------------------------------------------

TEST(Hardening, InvalidValuesAreErrorsNamingTheOptionAndRange) {
  ScratchDir dir("hard");
  const std::pair<const char*, const char*> cases[] = {
      {"gemm --device cpu --m 8 --threads -1", "--threads must be between 0 and 1024 (got -1)"},
      {"gemm --device cpu --m 8 --n 0", "--n must be between 1 and 2147483647 (got 0)"},
      {"gemm --device cpu --m 8 --seed -1", "--seed must be between 0"},
      {"gemm --device cpu --m 99999999999999999999999999999", "fits in 64 bits"},
      {"gemm --device cpu --m 8 --alpha nan", "--alpha must be a finite number"},
      {"gemm --device cpu --m 8 --beta 1e400", "--beta must be a finite number"},
      {"gemm --device cpu --m 0x10", "--m value '0x10' (expected an integer)"},
      {"cov --device cpu --rate nan", "--rate must be a finite number"},
      {"cov --device cpu --rate inf --deadline-ms 0", "must be a finite number"},
      {"cov --device cpu --deadline-ms 0", "--deadline-ms must be a finite number above 0"},
      {"cov --device cpu --deadline-ms nan", "--deadline-ms"},
      {"cov --device cpu --seed -3", "--seed must be between 0"},
      {"tune --device cpu --budget nan", "--budget must be a finite number above 0"},
      {"tune --device cpu --budget -1", "--budget"},
      {"bench --device cpu --threads -2", "--threads must be between 0"},
      {"frobnicate", "unknown subcommand 'frobnicate'"},
      {"gemm --device cpu --input .", "is a directory"},
      {"gemm --device cpu --a . --b .", "is a directory"},
      {"cov --device cpu --channels 2 --input .", "is a directory"},
      {"cov --device cpu --bench --input x.f32", "--input has no effect with --bench"},
      {"cov --device cpu --reps 3", "--reps goes with --bench"},
  };
  for (const auto& [args, needle] : cases) {
    SCOPED_TRACE(args);
    expect_refused(run_kafel(dir, args), needle);
  }
  for (const char* cmd :
       {"gemm --device cpu --m 8", "cov --device cpu --samples 100", "bench --device cpu --sizes 8",
        "tune --device cpu --budget 1 --db t.json"}) {
    SCOPED_TRACE(cmd);
    expect_refused(run_kafel(dir, cmd, "KAFEL_NUM_THREADS=abc"), "KAFEL_NUM_THREADS='abc'");
  }
}

TEST(Hardening, OpeningAFifoNeverBlocks) {
  ScratchDir dir("hard");
  ASSERT_EQ(::mkfifo(dir.file("pipe").c_str(), 0600), 0);
  expect_refused(run_kafel(dir, "gemm --device cpu --input pipe", "", 20), "is a FIFO");
  expect_refused(run_kafel(dir, "gemm --device cpu --a pipe --b pipe", "", 20), "is a FIFO");
  // A raw sample stream may come from a FIFO: opened at once, it waits for its writer's data
  // (which starts later here) and streams it.
  const std::string cmd =
      "cd '" + dir.path().string() +
      "' && ( (sleep 1; head -c 64 /dev/zero) > pipe &) && timeout 20 '" KAFEL_CLI_PATH
      "' cov --device cpu --channels 2 --samples 4 --blocks -1 --input pipe "
      ">fifo.txt 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << read_bytes(dir.file("fifo.txt"));
  EXPECT_NE(read_bytes(dir.file("fifo.txt")).find("2 blocks"), std::string::npos)
      << read_bytes(dir.file("fifo.txt"));
  // A writer that closes without writing is an empty stream, not a hang.
  const std::string empty = "cd '" + dir.path().string() +
                            "' && ( (sleep 1; true) > pipe &) && timeout 20 '" KAFEL_CLI_PATH
                            "' cov --device cpu --channels 2 --samples 4 --blocks -1 --input pipe "
                            ">empty.txt 2>&1";
  EXPECT_NE(std::system(empty.c_str()), 0);
  EXPECT_NE(read_bytes(dir.file("empty.txt")).find("no block of 4 samples"), std::string::npos)
      << read_bytes(dir.file("empty.txt"));
}

// ---- 7. consistency ------------------------------------------------------------------------

TEST(Hardening, CovHonoursKafelDevice) {
  ScratchDir dir("hard");
  expect_refused(run_kafel(dir, "cov --samples 1000", "KAFEL_DEVICE=nosuchdevice"),
                 "unknown device 'nosuchdevice'");
  const CliResult ok = run_kafel(dir, "cov --samples 1000", "KAFEL_DEVICE=cpu");
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.out.find("on cpu"), std::string::npos) << ok.out;
}

TEST(Hardening, BenchWithEverythingSkippedFails) {
  ScratchDir dir("hard");
  const CliResult r = run_kafel(dir,
                                "bench --device cpu --kernels cpu.naive --types e4m3*e5m2 "
                                "--sizes 8 --json r.json");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("kafel: error: every case was skipped"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.json")));
}

// Products that overflow the storage type: never "nan ... PASS", an overflow error instead.
TEST(Hardening, GemmNeverPassesNonFiniteResults) {
  ScratchDir dir("hard");
  write_npy(dir.file("big32.npy"), filled(DType::f32, 4, 4, 1e20));
  write_npy(dir.file("big64.npy"), filled(DType::f64, 4, 4, 1e155));
  for (const char* f : {"big32.npy", "big64.npy"}) {
    SCOPED_TRACE(f);
    const CliResult r =
        run_kafel(dir, std::string("gemm --device cpu --out c.npy --a ") + f + " --b " + f);
    EXPECT_EQ(r.rc, 3) << r.out << r.err;
    EXPECT_EQ(r.out.find("nan"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("overflows"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("c.npy")));
  }
}

// ---- 8. honest figures -------------------------------------------------------------------

TEST(Hardening, PeakShareNeverExceedsOneHundredPercent) {
  EXPECT_DOUBLE_EQ(peak_share(50, 200), 25.0);
  EXPECT_EQ(peak_share(244, 100), 0.0);
  EXPECT_EQ(peak_share(10, 0), 0.0);
  EXPECT_EQ(peak_share_text(244, 100), "-");
  BenchRecord r;
  r.kernel = "cpu.fake";
  r.type = "f32";
  r.status = "ok";
  r.gflops = r.best_gflops = 300;
  r.peak_gflops = 123;  // a share of 243.9 % must not be printed
  r.peak_pct = peak_share(r.gflops, r.peak_gflops);
  std::ostringstream os;
  print_bench_table(os, {r});
  EXPECT_EQ(r.peak_pct, 0.0);
  EXPECT_EQ(os.str().find("243.9"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("exceeds the device's peak estimate"), std::string::npos) << os.str();
  // Real records: whatever the machine, the share stays within 0..100.
  ScratchDir dir("hard");
  const CliResult b = run_kafel(dir,
                                "bench --device cpu --kernels all --sizes 64 --warmup 1 --reps 2 "
                                "--json r.json");
  ASSERT_EQ(b.rc, 0) << b.err;
  // The parsed document lives as long as the loop (a temporary's subobject would not).
  const auto doc = nlohmann::json::parse(read_bytes(dir.file("r.json")));
  for (const auto& rec : doc["records"]) {
    EXPECT_GE(rec["peak_pct"].get<double>(), 0.0);
    EXPECT_LE(rec["peak_pct"].get<double>(), 100.0) << rec.dump();
  }
}

// A plan that is slow once (lazy set-up: a program build, a pool, first-touch pages): that
// time is start-up, reported apart, and no block's latency carries it.
class SlowFirstRunPlan : public CovPlan {
 public:
  void load(const CovArgs& args, int) override { args_ = args; }
  double run(int) override {
    if (!warm_) std::this_thread::sleep_for(std::chrono::milliseconds(600));
    warm_ = true;
    reference_moments(args_, result_);
    return 0;
  }
  void fetch(CovMoments& out) override { out = result_; }
  std::string timer() const override { return "steady-clock"; }

 private:
  bool warm_ = false;
  CovArgs args_;
  CovMoments result_;
};

TEST(Hardening, StreamWarmsUpBeforeTheFirstDeadline) {
  const CovDesc d{3, 1000, SampleLayout::Planar, 1};
  SlowFirstRunPlan plan;
  CovBlockSource src;
  src.fill = [](std::int64_t b, float* buf) {
    for (int i = 0; i < 3000; ++i) buf[i] = float((i * 7 + b) % 13);
    return b < 5;
  };
  CovStreamOptions so;
  so.rate = 50;
  so.deadline_ms = 300;
  const CovStreamStats st = run_cov_stream(plan, d, src, -1, so, {});
  EXPECT_EQ(st.blocks, 5);
  EXPECT_GE(st.startup_ms, 600);
  EXPECT_EQ(st.missed, 0);
  EXPECT_LT(st.max_ms, 300);
  // The CLI reports start-up on its own line and in the JSON.
  ScratchDir dir("hard");
  const CliResult r = run_kafel(dir, "cov --device cpu --samples 20000 --blocks 3 --json s.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("start-up "), std::string::npos) << r.out;
  const auto doc = nlohmann::json::parse(read_bytes(dir.file("s.json")));
  EXPECT_GT(doc["startup_ms"].get<double>(), 0);
  // One latency per block (the stream timeline of bench/plot.py draws them), none above the max.
  ASSERT_EQ(doc["latency_ms"].size(), 3u);
  for (const auto& v : doc["latency_ms"]) EXPECT_LE(v.get<double>(), doc["max_ms"].get<double>());
}

}  // namespace
}  // namespace kafel
