// The `kafel` tool end to end, run as a process in a scratch directory: gen -> gemm, bench
// JSON, and bad input (corrupted files, unknown names) giving one error line and exit != 0.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "io_test_util.hpp"
#include "kafel/device.hpp"
#include "kafel/kernels.hpp"

namespace kafel {
namespace {

using test::read_bytes;
using test::ScratchDir;
using test::write_bytes;

struct Result {
  int rc = -1;
  std::string out, err;
};

// Runs `kafel <args>` inside `dir`, capturing stdout and stderr separately.
Result kafel(const ScratchDir& dir, const std::string& args) {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  std::string cmd = "cd '" + dir.path().string() + "' && KAFEL_DEVICE= '" KAFEL_CLI_PATH "' " +
                    args + " >'" + out + "' 2>'" + err + "'";
  int status = std::system(cmd.c_str());
  Result r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  r.out = read_bytes(out);
  r.err = read_bytes(err);
  return r;
}

// Exactly one stderr line, "kafel: error: ...", and a non-zero exit.
void expect_one_line_error(const Result& r, const std::string& needle = "") {
  EXPECT_NE(r.rc, 0);
  EXPECT_EQ(r.err.rfind("kafel: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

// The number printed after "<label> " on the line that starts with `line` (-1 if none).
// Plain string search: std::regex makes GCC 12 warn inside libstdc++ in sanitizer builds.
double number_after(const std::string& text, const std::string& line, const std::string& label) {
  std::size_t at = text.rfind(line, 0) == 0 ? 0 : text.find("\n" + line);
  if (at == std::string::npos) return -1;
  if (at > 0) ++at;  // skip the newline
  const std::size_t end = text.find('\n', at);
  const std::string row = text.substr(at, end == std::string::npos ? end : end - at);
  const auto pos = row.find(label + " ");
  if (pos == std::string::npos) return -1;
  try {
    return std::stod(row.substr(pos + label.size() + 1));
  } catch (const std::exception&) {
    return -1;
  }
}

TEST(Cli, GenThenGemmVerifiesTheLectureProblem) {
  ScratchDir dir("cli");
  Result g = kafel(dir, "gen 300 200 100 -o m.dat");
  ASSERT_EQ(g.rc, 0) << g.err;
  EXPECT_EQ(read_bytes(dir.file("m.dat")).size(), 12u + 4u * (300 * 200 + 200 * 100 + 300 * 100));
  Result r = kafel(dir, "gemm --input m.dat --device cpu");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  double err = number_after(r.out, "verification", "max abs err");
  EXPECT_GE(err, 0) << r.out;
  EXPECT_LT(err, 1e-4) << r.out;
  double stored = number_after(r.out, "stored C", "max abs err");
  EXPECT_GE(stored, 0) << r.out;
  EXPECT_LT(stored, 1e-4) << r.out;
  EXPECT_NE(r.out.find("kernel time"), std::string::npos);
  EXPECT_NE(r.out.find("total time"), std::string::npos);
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos);
}

TEST(Cli, GemmOptionsAndTypesOnAFile) {
  ScratchDir dir("cli");
  ASSERT_EQ(kafel(dir, "gen 31 17 23 -o m.dat --seed 5").rc, 0);
  for (const char* extra :
       {"--kernel cpu.naive --layout col --trans-a --trans-b",
        "--kernel cpu.cached_column --threads 2 --alpha 2 --beta 0.5", "--type f64", "--type f16",
        "--type 'bf16->f32'", "--type f16 --compute f32", "--json g.json"}) {
    SCOPED_TRACE(extra);
    Result r = kafel(dir, std::string("gemm --input m.dat --device cpu ") + extra);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
  }
  auto doc = nlohmann::json::parse(read_bytes(dir.file("g.json")));
  EXPECT_TRUE(doc["records"][0]["verified"].get<bool>());
  // Random normal floats are not integers: converting them to i32 is refused, by element.
  expect_one_line_error(kafel(dir, "gemm --input m.dat --device cpu --type i32"),
                        "cannot convert A (0, 0)");
}

TEST(Cli, GemmWithNpyFilesAndRandomInputs) {
  ScratchDir dir("cli");
  ASSERT_EQ(kafel(dir, "gen 20 30 40 -o p.npy --type f64").rc, 0);
  Result r = kafel(dir, "gemm --a p_a.npy --b p_b.npy --c-ref p_c.npy --out c.npy --device cpu");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("reference C"), std::string::npos) << r.out;
  EXPECT_GT(read_bytes(dir.file("c.npy")).size(), 20u * 40u * 8u);
  Result m = kafel(dir, "gemm --m 33 --n 17 --k 9 --type f32 --device cpu");
  EXPECT_EQ(m.rc, 0) << m.out << m.err;
}

TEST(Cli, MismatchedShapesAreRejected) {
  ScratchDir dir("cli");
  ASSERT_EQ(kafel(dir, "gen 4 5 6 -o p.npy").rc, 0);
  expect_one_line_error(kafel(dir, "gemm --a p_a.npy --b p_a.npy --device cpu"),
                        "columns must equal B's rows");
  expect_one_line_error(kafel(dir, "gemm --a p_a.npy --b p_b.npy --c-ref p_a.npy --device cpu"),
                        "--c-ref");
}

TEST(Cli, CorruptedAndTruncatedFilesFailWithOneLine) {
  ScratchDir dir("cli");
  ASSERT_EQ(kafel(dir, "gen 8 8 8 -o m.dat").rc, 0);
  std::string bytes = read_bytes(dir.file("m.dat"));
  write_bytes(dir.file("short.dat"), bytes.substr(0, bytes.size() - 5));
  expect_one_line_error(kafel(dir, "gemm --input short.dat --device cpu"), "truncated");
  std::string bad = bytes;
  bad[0] = '\xff';  // m becomes negative... or huge: either way the header is wrong
  bad[3] = '\x7f';
  write_bytes(dir.file("bad.dat"), bad);
  expect_one_line_error(kafel(dir, "gemm --input bad.dat --device cpu"), "bad.dat");
  expect_one_line_error(kafel(dir, "gemm --input missing.dat --device cpu"), "cannot open");
  std::string nan = bytes;
  const float q = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(nan.data() + 12 + 4 * 9, &q, 4);  // A(1, 1)
  write_bytes(dir.file("nan.dat"), nan);
  expect_one_line_error(kafel(dir, "gemm --input nan.dat --device cpu"), "A holds NaN at (1, 1)");
  write_bytes(dir.file("x.npy"), "not numpy");
  expect_one_line_error(kafel(dir, "gemm --a x.npy --b x.npy --device cpu"), "x.npy");
}

TEST(Cli, UnknownNamesAndBadSizesFail) {
  ScratchDir dir("cli");
  expect_one_line_error(kafel(dir, "gemm --m 8 --device nosuchdevice"), "nosuchdevice");
  expect_one_line_error(kafel(dir, "gemm --m 8 --device cpu --kernel cpu.nosuch"), "cpu.nosuch");
  expect_one_line_error(kafel(dir, "gemm --m 8 --device cpu --type q7"), "q7");
  expect_one_line_error(kafel(dir, "gemm --m 8 --device cpu --param NOPE=3"), "NOPE");
  expect_one_line_error(kafel(dir, "gen 0 3 3 -o z.dat"), "M must be between 1 and 2147483647");
  expect_one_line_error(kafel(dir, "gen 100000 100000 100000 -o z.dat"), "memory");
  expect_one_line_error(kafel(dir, "bench --device cpu --kernels cpu.nosuch --sizes 8"),
                        "cpu.nosuch");
  expect_one_line_error(kafel(dir, "bench --device cpu --sizes 8 --vs nosuchblas"), "nosuchblas");
  expect_one_line_error(kafel(dir, "bench --device cpu --sizes 8x0x3"), "positive");
  EXPECT_EQ(kafel(dir, "gemm --nosuchoption").rc, 2);
  EXPECT_NE(kafel(dir, "").rc, 0);
}

TEST(Cli, BenchWritesJsonWithTheFields) {
  ScratchDir dir("cli");
  Result r = kafel(dir,
                   "bench --device cpu --kernels all --sizes 32,48 --warmup 1 --reps 2 "
                   "--json r.json --csv r.csv");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("[1/"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
  auto doc = nlohmann::json::parse(read_bytes(dir.file("r.json")));
  ASSERT_GE(doc["records"].size(), 4u);
  for (const auto& rec : doc["records"]) {
    for (const char* key :
         {"kernel", "device", "type", "a_type", "b_type", "c_type", "compute", "m", "n", "k",
          "median_ms", "best_ms", "gflops", "peak_gflops", "peak_pct", "verified", "max_abs_err"}) {
      EXPECT_TRUE(rec.contains(key)) << key;
    }
    EXPECT_TRUE(rec["verified"].get<bool>()) << rec.dump();
    EXPECT_FALSE(rec["baseline"].get<bool>());
    EXPECT_GT(rec["gflops"].get<double>(), 0);
  }
}

// --type takes roles, --types a list, --compute a mode; records carry the roles one by one.
TEST(Cli, BenchAndGemmTakeElementRoles) {
  ScratchDir dir("cli");
  Result r = kafel(dir,
                   "bench --device cpu --kernels cpu.naive --sizes 24 --warmup 0 --reps 1 "
                   "--types f32,i8 --type 'bf16->f32' --json r.json");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  auto doc = nlohmann::json::parse(read_bytes(dir.file("r.json")));
  ASSERT_EQ(doc["records"].size(), 3u);
  const auto& i8 = doc["records"][1];
  EXPECT_EQ(i8["a_type"], "i8");
  EXPECT_EQ(i8["c_type"], "i32");
  EXPECT_EQ(i8["compute"], "i32");
  const auto& bf = doc["records"][2];
  EXPECT_EQ(bf["type"], "bf16->f32");
  EXPECT_EQ(bf["a_type"], "bf16");
  EXPECT_EQ(bf["c_type"], "f32");
  EXPECT_EQ(bf["compute"], "f32");
  Result g = kafel(dir, "gemm --device cpu --m 40 --type i8 --compute i32 --json g.json");
  ASSERT_EQ(g.rc, 0) << g.out << g.err;
  auto rec = nlohmann::json::parse(read_bytes(dir.file("g.json")))["records"][0];
  EXPECT_EQ(rec["compute"], "i32");
  EXPECT_EQ(rec["c_type"], "i32");
  // The CPU has no tensor-core modes: a clear refusal naming the roles.
  expect_one_line_error(kafel(dir, "gemm --device cpu --m 8 --type f32 --compute 3xtf32"),
                        "no kernel of cpu can run 8x8x8 NN f32/3xtf32");
  expect_one_line_error(kafel(dir, "gemm --device cpu --m 8 --type f32/tf32 --compute f32"),
                        "names compute tf32 but --compute is f32");
  expect_one_line_error(kafel(dir, "gemm --device cpu --m 8 --type i32 --compute tf32"),
                        "with --compute tf32");
}

// --batch: strided batches of each size, every matrix verified, GFLOP/s over the whole batch.
TEST(Cli, BenchRunsBatches) {
  ScratchDir dir("cli");
  Result r = kafel(dir,
                   "bench --device cpu --kernels cpu.naive,cpu.packed --sizes 16,8x12x20 "
                   "--batch 37 --warmup 0 --reps 1 --json r.json");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  auto doc = nlohmann::json::parse(read_bytes(dir.file("r.json")));
  ASSERT_EQ(doc["records"].size(), 4u);
  for (const auto& rec : doc["records"]) {
    EXPECT_EQ(rec["batch"], 37) << rec.dump();
    EXPECT_TRUE(rec["verified"].get<bool>()) << rec.dump();
  }
  EXPECT_NE(r.out.find("b37"), std::string::npos) << r.out;
  expect_one_line_error(kafel(dir, "bench --device cpu --sizes 8 --batch 0"), "--batch");
}

// --kernels default: per size, the kernel and parameters gemm() would use (cpu.small for small
// problems, docs/cpu.md), verified and timed like any other.
TEST(Cli, BenchTheDefaultChoice) {
  ScratchDir dir("cli");
  Result r = kafel(dir,
                   "bench --device cpu --kernels default --sizes 32,200 --warmup 0 --reps 1 "
                   "--json r.json");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  auto doc = nlohmann::json::parse(read_bytes(dir.file("r.json")));
  ASSERT_EQ(doc["records"].size(), 2u);
  EXPECT_EQ(doc["records"][0]["kernel"], "cpu.small");
  EXPECT_NE(doc["records"][1]["kernel"], "cpu.small");
  for (const auto& rec : doc["records"]) EXPECT_TRUE(rec["verified"].get<bool>()) << rec.dump();
}

TEST(Cli, BenchSweepsAParameter) {
  ScratchDir dir("cli");
  Result r = kafel(dir,
                   "bench --device cpu --kernels cpu.cached_column --sizes 16 --warmup 0 "
                   "--reps 1 --param threads=1,2 --json s.json");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  auto doc = nlohmann::json::parse(read_bytes(dir.file("s.json")));
  ASSERT_EQ(doc["records"].size(), 2u);
  EXPECT_EQ(doc["records"][1]["params"]["threads"], 2);
  expect_one_line_error(
      kafel(dir, "bench --device cpu --kernels cpu.naive --sizes 16 --param nosuch=1"), "nosuch");
}

// A baseline's caveat on this machine (OpenBLAS running kernels for an older ISA than the CPU's)
// is printed as a warning by `bench --vs`, and only then; the run itself still succeeds.
TEST(Cli, BenchWarnsOfABaselinesCaveat) {
  const Device cpu = select_device("cpu");
  bool have_openblas = false;
  for (const auto& k : gemm_kernels(cpu)) have_openblas |= k.name == "cpu.openblas";
  if (!have_openblas) GTEST_SKIP() << "built without OpenBLAS";
  const std::string caveat = gemm_kernel(cpu, "cpu.openblas").caveat;
  ScratchDir dir("cli");
  Result r = kafel(dir,
                   "bench --device cpu --kernels cpu.naive --sizes 16 --warmup 0 --reps 1 "
                   "--vs openblas");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  if (caveat.empty())
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  else
    EXPECT_NE(r.err.find("kafel: warning: " + caveat + "\n"), std::string::npos) << r.err;
}

TEST(Cli, HelpAndVersion) {
  ScratchDir dir("cli");
  Result v = kafel(dir, "--version");
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out.rfind("kafel ", 0), 0u) << v.out;
  for (const char* sub : {"", "devices ", "gen ", "gemm ", "bench ", "tune ", "cov "}) {
    SCOPED_TRACE(sub);
    Result h = kafel(dir, std::string(sub) + "--help");
    EXPECT_EQ(h.rc, 0);
    EXPECT_NE(h.out.find("--help"), std::string::npos) << h.out;
  }
  Result d = kafel(dir, "devices --json d.json");
  EXPECT_EQ(d.rc, 0) << d.err;
  EXPECT_NE(d.out.find("capabilities"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("cov kernels"), std::string::npos) << d.out;
  auto doc = nlohmann::json::parse(read_bytes(dir.file("d.json")));
  EXPECT_EQ(doc[0]["id"], "cpu");
  for (const char* key : {"capabilities", "tensor_peaks", "kernels", "cov_kernels"})
    EXPECT_TRUE(doc[0].contains(key)) << key;
}

// The CPU's peak says where its clock came from, and KAFEL_CPU_ISA shows and applies to the
// covariance as well as the GEMM (a bad value fails the kernels, not the device listing).
TEST(Cli, DevicesShowClockSourceAndForcedIsa) {
  ScratchDir dir("cli");
  Result d = kafel(dir, "devices --json d.json");
  ASSERT_EQ(d.rc, 0) << d.err;
  EXPECT_NE(d.out.find("clock source"), std::string::npos) << d.out;
  auto doc = nlohmann::json::parse(read_bytes(dir.file("d.json")));
  EXPECT_TRUE(doc[0]["details"].contains("clock source"));
  setenv("KAFEL_CPU_ISA", "generic", 1);
  Result g = kafel(dir, "devices");
  Result c = kafel(dir, "cov --device cpu --channels 10 --samples 70000 --blocks 2");
  setenv("KAFEL_CPU_ISA", "sse9", 1);
  Result bad_devices = kafel(dir, "devices");
  Result bad_cov = kafel(dir, "cov --device cpu --channels 3 --samples 1000 --blocks 1");
  unsetenv("KAFEL_CPU_ISA");
  EXPECT_EQ(g.rc, 0) << g.err;
  if (d.out.find("simd            generic") == std::string::npos) {
    EXPECT_NE(g.out.find("(kernels use generic)"), std::string::npos) << g.out;
  }
  EXPECT_EQ(c.rc, 0) << c.err;
  EXPECT_EQ(bad_devices.rc, 0) << bad_devices.err;
  EXPECT_NE(bad_devices.out.find("sse9"), std::string::npos) << bad_devices.out;
  expect_one_line_error(bad_cov, "sse9");
}

}  // namespace
}  // namespace kafel
