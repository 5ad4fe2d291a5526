// `kafel cov` end to end: a verified stream with JSON output, .npy output, raw files and stdin,
// and the bad inputs that must fail with a clear error and a non-zero exit code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kafel/io.hpp"

namespace {

struct Ran {
  int code;
  std::string err;
};

// One name per process: ctest runs each test in its own process, several at once.
std::string tmp(const std::string& name) {
  return testing::TempDir() + "kafel_cov_cli_" + std::to_string(getpid()) + "_" + name;
}

Ran kafel(const std::string& args, const std::string& stdin_file = "") {
  const std::string err = tmp("stderr.txt");
  std::string cmd = std::string(KAFEL_CLI_PATH) + " cov " + args + " > /dev/null 2> " + err;
  if (!stdin_file.empty()) cmd += " < " + stdin_file;
  const int rc = std::system(cmd.c_str());
  std::ifstream f(err);
  std::stringstream ss;
  ss << f.rdbuf();
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, ss.str()};
}

void write_floats(const std::string& path, const std::vector<float>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * 4));
}

TEST(CovCli, StreamWithJsonAndOut) {
  const std::string json = tmp("s.json"), out = tmp("c.npy");
  const Ran r = kafel(
      "--device cpu --channels 3 --samples 1001 --blocks 4 --signal offset "
      "--layout interleaved --verify --json " +
      json + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j;
  std::ifstream(json) >> j;
  for (const char* key : {"device", "channels", "samples", "median_ms", "p99_ms", "max_ms",
                          "blocks_per_s", "missed", "rel_err"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["blocks"], 4);
  EXPECT_EQ(j["verified_blocks"], 4);
  EXPECT_LE(j["rel_err"].get<double>(), 1e-6);
  const kafel::Matrix c = kafel::read_npy(out);
  EXPECT_EQ(c.rows(), 3);
  EXPECT_EQ(c.cols(), 3);
  EXPECT_NEAR(c.get(0, 0), 1.0, 0.2);  // offset signal: std 1
}

TEST(CovCli, RawFileAndStdin) {
  const std::string raw = tmp("x.f32");
  write_floats(raw, {1, 2, 3, 4, 2, 4, 6, 9, 1, 2, 3, 4, 2, 4, 6, 9});  // two planar 2x4 blocks
  EXPECT_EQ(kafel("--device cpu --channels 2 --samples 4 --blocks -1 --input " + raw).code, 0);
  const std::string json = tmp("stdin.json");
  const Ran r = kafel(
      "--device cpu --channels 2 --samples 4 --blocks -1 --verify --input - --json " + json, raw);
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j;
  std::ifstream(json) >> j;
  EXPECT_EQ(j["blocks"], 2);
  // Whole file as one block when --samples is not given: 2 channels x 8 samples.
  EXPECT_EQ(kafel("--device cpu --channels 2 --input " + raw).code, 0);
}

TEST(CovCli, NanWarns) {
  const std::string raw = tmp("nan.f32");
  write_floats(raw, {1, 2, std::nanf(""), 4, 2, 4, 6, 9});
  const Ran r = kafel("--device cpu --channels 2 --input " + raw);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("NaN"), std::string::npos) << r.err;
}

// --bench runs every kernel through bench_cov: verified first, then timed; JSON per kernel.
TEST(CovCli, BenchEveryKernel) {
  const std::string json = tmp("bench.json");
  const Ran r = kafel(
      "--device cpu --bench --channels 5 --samples 20011 --reps 2 --warmup 1 "
      "--signal offset --json " +
      json);
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j;
  std::ifstream(json) >> j;
  ASSERT_GE(j["kernels"].size(), 3u);
  for (const auto& k : j["kernels"]) {
    EXPECT_EQ(k["status"], "ok") << k.dump();
    EXPECT_TRUE(k["verified"].get<bool>()) << k.dump();
    EXPECT_LE(k["rel_err"].get<double>(), 1e-6);
    EXPECT_EQ(k["reps"], 2);
  }
  // --param applies to the kernel named (or the default one), checked against its ranges.
  EXPECT_EQ(kafel("--device cpu --bench --samples 1000 --reps 1 --kernel cpu.syrk --param "
                  "CHUNK=64")
                .code,
            0);
  const Ran bad = kafel("--device cpu --bench --samples 1000 --kernel cpu.syrk --param CHUNK=0");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("CHUNK=0 is outside 1.."), std::string::npos) << bad.err;
}

TEST(CovCli, BadInput) {
  const std::string odd = tmp("odd.f32"), empty = tmp("empty.f32");
  write_floats(odd, {1, 2, 3, 4, 5, 6, 7});
  write_floats(empty, {});
  Ran r = kafel("--device cpu --channels 2 --input " + odd);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("2-channel"), std::string::npos) << r.err;
  r = kafel("--device cpu --channels 2 --input " + empty);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("empty"), std::string::npos) << r.err;
  r = kafel("--device cpu --channels 2 --samples 1");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("ddof"), std::string::npos) << r.err;
  r = kafel("--device cpu --layout diagonal --samples 100");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("layout"), std::string::npos) << r.err;
  EXPECT_NE(kafel("--device cpu --signal sawtooth --samples 100").code, 0);
  EXPECT_NE(kafel("--device cpu --samples 100 --input /nonexistent/x.f32").code, 0);
}

}  // namespace
