// `kafel cov` end to end: a verified stream with JSON output, .npy output, raw files and stdin,
// and the bad inputs that must fail with a clear error and a non-zero exit code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kafel/cov.hpp"
#include "kafel/io.hpp"
#include "kafel/matrix.hpp"

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

// A float64 / complex128 .npy as the CLI writes it: descr, shape text and the doubles after the
// header (re, im interleaved for complex).
struct NpyDoubles {
  std::string header;
  std::vector<double> values;
};

NpyDoubles read_doubles(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_GE(bytes.size(), 10u);
  if (bytes.size() < 10) return {};
  const std::size_t len = std::uint8_t(bytes[8]) | (std::size_t(std::uint8_t(bytes[9])) << 8);
  NpyDoubles out{bytes.substr(10, len), {}};
  out.values.resize((bytes.size() - 10 - len) / 8);
  std::memcpy(out.values.data(), bytes.data() + 10 + len, out.values.size() * 8);
  return out;
}

// Complex samples in batches: every block verified, the JSON names type and batch, the output
// is complex128 batch x C x C and exactly Hermitian.
TEST(CovCli, ComplexBatchesVerifiedAndHermitian) {
  const std::string json = tmp("cbatch.json"), out = tmp("cbatch.npy");
  const Ran r = kafel(
      "--device cpu --type cf32 --channels 5 --samples 3001 --batch 3 --blocks 2 --signal "
      "offset --verify --json " +
      json + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j;
  std::ifstream(json) >> j;
  EXPECT_EQ(j["type"], "cf32");
  EXPECT_EQ(j["batch"], 3);
  EXPECT_EQ(j["verified_blocks"], 2);
  EXPECT_LE(j["rel_err"].get<double>(), 1e-6);
  const NpyDoubles c = read_doubles(out);
  EXPECT_NE(c.header.find("'descr': '<c16'"), std::string::npos) << c.header;
  EXPECT_NE(c.header.find("'shape': (3, 5, 5)"), std::string::npos) << c.header;
  ASSERT_EQ(c.values.size(), 3u * 5 * 5 * 2);
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 5; ++i)
      for (int k = 0; k < 5; ++k) {
        const std::size_t ik = 2 * std::size_t((b * 5 + i) * 5 + k);
        const std::size_t ki = 2 * std::size_t((b * 5 + k) * 5 + i);
        EXPECT_EQ(c.values[ik], c.values[ki]);
        EXPECT_EQ(c.values[ik + 1], -c.values[ki + 1]);
      }
  EXPECT_NEAR(c.values[0], 2.0, 0.3);  // offset signal: re and im each of variance 1
}

// --triangle packs the same numbers: lower triangle row by row, per batch.
TEST(CovCli, TrianglePacksTheLowerTriangle) {
  const std::string full = tmp("full.npy"), tri = tmp("tri.npy");
  const std::string args = "--device cpu --type ci8 --channels 4 --samples 999 --batch 2 --out ";
  ASSERT_EQ(kafel(args + full).code, 0);
  const Ran r = kafel(args + tri + " --triangle");
  ASSERT_EQ(r.code, 0) << r.err;
  const NpyDoubles f = read_doubles(full), t = read_doubles(tri);
  EXPECT_NE(t.header.find("'shape': (2, 10)"), std::string::npos) << t.header;
  ASSERT_EQ(f.values.size(), 2u * 16 * 2);
  ASSERT_EQ(t.values.size(), 2u * 10 * 2);
  std::size_t p = 0;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 4; ++i)
      for (int k = 0; k <= i; ++k, ++p) {
        const std::size_t ik = 2 * std::size_t((b * 4 + i) * 4 + k);
        EXPECT_EQ(t.values[2 * p], f.values[ik]);
        EXPECT_EQ(t.values[2 * p + 1], f.values[ik + 1]);
      }
}

// Channels come from the .npy's shape when --channels is not given, in either layout.
TEST(CovCli, ChannelsFromTheNpyShape) {
  kafel::Matrix planar(kafel::DType::f32, 7, 500), inter(kafel::DType::f32, 500, 7);
  for (std::int64_t c = 0; c < 7; ++c)
    for (std::int64_t n = 0; n < 500; ++n) {
      planar.set(c, n, float((c + 1) * ((n * 37 + c) % 11)));
      inter.set(n, c, float((c + 1) * ((n * 37 + c) % 11)));
    }
  const std::string p = tmp("planar.npy"), i = tmp("inter.npy"), json = tmp("npy.json");
  kafel::write_npy(p, planar.view());
  kafel::write_npy(i, inter.view());
  for (const std::string& args : {"--input " + p, "--input " + i + " --layout interleaved"}) {
    const Ran r = kafel("--device cpu --verify --json " + json + " " + args);
    ASSERT_EQ(r.code, 0) << args << ": " << r.err;
    nlohmann::json j;
    std::ifstream(json) >> j;
    EXPECT_EQ(j["channels"], 7) << args;
    EXPECT_EQ(j["samples"], 500) << args;
  }
  const Ran wrong = kafel("--device cpu --channels 10 --input " + p);
  EXPECT_NE(wrong.code, 0);
  EXPECT_NE(wrong.err.find("7 channels"), std::string::npos) << wrong.err;
}

// --bench takes every sample type and batches; the JSON carries the compute floor and the bound.
TEST(CovCli, BenchComplexBatches) {
  const std::string json = tmp("cbench.json");
  const Ran r = kafel(
      "--device cpu --bench --type cf32 --channels 17 --samples 4001 --batch 2 --reps 1 "
      "--warmup 0 --signal offset --json " +
      json);
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j;
  std::ifstream(json) >> j;
  EXPECT_EQ(j["type"], "cf32");
  EXPECT_EQ(j["batch"], 2);
  int ok = 0;
  for (const auto& k : j["kernels"]) {
    EXPECT_NE(k["status"], "failed") << k.dump();
    if (k["status"] != "ok") continue;
    ++ok;
    EXPECT_LE(k["rel_err"].get<double>(), 1e-6) << k.dump();
    EXPECT_TRUE(k.contains("compute_floor_ms")) << k.dump();
    EXPECT_TRUE(k["bound"] == "memory" || k["bound"] == "compute") << k.dump();
  }
  EXPECT_GE(ok, 2);
}

TEST(CovCli, BadSampleTypes) {
  Ran r = kafel("--device cpu --type f64 --samples 100");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("not a covariance sample type"), std::string::npos) << r.err;
  r = kafel("--device cpu --type bogus --samples 100");
  EXPECT_NE(r.code, 0);
  const std::string raw = tmp("typed.f32");
  write_floats(raw, {1, 2, 3, 4, 5, 6, 7, 8});
  r = kafel("--device cpu --batch 2 --channels 2 --input " + raw);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--input holds one covariance per block"), std::string::npos) << r.err;
  r = kafel("--device cpu --batch 0 --samples 100");
  EXPECT_NE(r.code, 0);
}

// --window/--hop: every window's estimate from the segments' moments, across blocks; --forget
// and --fb on the estimates. The last estimate against a direct recomputation from the windows.
TEST(CovCli, WindowsForgettingAndForwardBackward) {
  constexpr std::int64_t kC = 3, kN = 1200, kWindow = 300, kHop = 100;
  kafel::Matrix x(kafel::DType::f32, kC, kN);
  for (std::int64_t c = 0; c < kC; ++c)
    for (std::int64_t n = 0; n < kN; ++n)
      x.set(c, n, 5.0 + std::sin(0.37 * double(n * (c + 1)) + double(c)) + 0.01 * double(n % 7));
  const std::string in = tmp("win.npy"), out = tmp("win_out.npy"), json = tmp("win.json");
  kafel::write_npy(in, x.view());
  const Ran r = kafel("--device cpu --input " + in +
                      " --samples 400 --blocks -1 --window 300 --hop 100 --forget 0.5 --fb "
                      "--verify --json " +
                      json + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j;
  std::ifstream(json) >> j;
  EXPECT_EQ(j["estimates"], (kN - kWindow) / kHop + 1);
  EXPECT_EQ(j["segment"], 100);
  // Direct: each window's sample covariance, R <- 0.5 R + 0.5 W, then (R + J R J) / 2.
  std::vector<double> state;
  for (std::int64_t s0 = 0; s0 + kWindow <= kN; s0 += kHop) {
    const kafel::SamplesView w{static_cast<const float*>(x.data()) + s0, kC, kWindow,
                               kafel::SampleLayout::Planar, kN};
    const kafel::CovResult ref = kafel::reference_covariance(w, 1);
    if (state.empty()) {
      state = ref.cov;
    } else {
      for (std::size_t k = 0; k < state.size(); ++k) state[k] = 0.5 * state[k] + 0.5 * ref.cov[k];
    }
  }
  const kafel::Matrix got = kafel::read_npy(out);
  ASSERT_EQ(got.rows(), kC);
  for (std::int64_t i = 0; i < kC; ++i)
    for (std::int64_t k = 0; k < kC; ++k) {
      const double want =
          (state[std::size_t(i * kC + k)] + state[std::size_t((kC - 1 - i) * kC + kC - 1 - k)]) / 2;
      EXPECT_NEAR(got.get(i, k), want, 1e-6) << i << "," << k;
    }
}

TEST(CovCli, BadWindows) {
  Ran r = kafel("--device cpu --samples 450 --window 300 --hop 100");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("not a multiple of the window segment"), std::string::npos) << r.err;
  r = kafel("--device cpu --samples 400 --window 300 --hop 400");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("exceeds the window"), std::string::npos) << r.err;
  r = kafel("--device cpu --samples 400 --window 300 --forget 1");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("[0, 1)"), std::string::npos) << r.err;
  r = kafel("--device cpu --bench --samples 400 --window 100");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--window has no effect with --bench"), std::string::npos) << r.err;
  r = kafel("--device cpu --samples 300 --blocks 1 --window 600 --hop 300");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no window completed"), std::string::npos) << r.err;
}

// ---- complex inputs ---------------------------------------------------------------------------

using Complex = std::complex<double>;

// The sample covariance recomputed directly in complex128: R = (X - mean)(X - mean)^H / (N - 1).
std::vector<Complex> direct_cov(const std::vector<std::vector<Complex>>& x) {
  const std::size_t c = x.size(), n = x[0].size();
  std::vector<Complex> mean(c), r(c * c);
  for (std::size_t i = 0; i < c; ++i) {
    for (const Complex& v : x[i]) mean[i] += v;
    mean[i] /= double(n);
  }
  for (std::size_t i = 0; i < c; ++i)
    for (std::size_t k = 0; k < c; ++k) {
      Complex acc = 0;
      for (std::size_t t = 0; t < n; ++t) acc += (x[i][t] - mean[i]) * std::conj(x[k][t] - mean[k]);
      r[i * c + k] = acc / double(n - 1);
    }
  return r;
}

// Relative Frobenius distance of a complex128 --out file from `want`.
double rel_frobenius(const std::string& out, const std::vector<Complex>& want) {
  const NpyDoubles got = read_doubles(out);
  EXPECT_NE(got.header.find("'descr': '<c16'"), std::string::npos) << got.header;
  EXPECT_EQ(got.values.size(), 2 * want.size());
  if (got.values.size() != 2 * want.size()) return 1.0;
  double diff = 0, norm = 0;
  for (std::size_t k = 0; k < want.size(); ++k) {
    diff += std::norm(Complex(got.values[2 * k], got.values[2 * k + 1]) - want[k]);
    norm += std::norm(want[k]);
  }
  return std::sqrt(diff / norm);
}

// C channels x N complex samples around a large common offset (the hard case for accuracy).
std::vector<std::vector<Complex>> complex_signal(std::size_t c, std::size_t n) {
  std::vector<std::vector<Complex>> x(c, std::vector<Complex>(n));
  for (std::size_t i = 0; i < c; ++i)
    for (std::size_t t = 0; t < n; ++t)
      x[i][t] = Complex(100.0 + std::sin(0.3 * double(t * (i + 1))) + double(i),
                        -50.0 + std::cos(0.7 * double(t) + double(i)) * double(i + 1));
  return x;
}

// The signal as a .npy of `type` (cf32 or cf64), planar C x N or interleaved N x C.
void write_complex_npy(const std::string& path, const std::vector<std::vector<Complex>>& x,
                       kafel::DType type, bool interleaved) {
  const std::int64_t c = std::int64_t(x.size()), n = std::int64_t(x[0].size());
  kafel::Matrix m(type, interleaved ? n : c, interleaved ? c : n);
  for (std::int64_t i = 0; i < c; ++i)
    for (std::int64_t t = 0; t < n; ++t) {
      void* p = interleaved ? m.view().address(t, i) : m.view().address(i, t);
      if (type == kafel::DType::c64) {
        static_cast<float*>(p)[0] = float(x[i][t].real());
        static_cast<float*>(p)[1] = float(x[i][t].imag());
      } else {
        static_cast<double*>(p)[0] = x[i][t].real();
        static_cast<double*>(p)[1] = x[i][t].imag();
      }
    }
  kafel::write_npy(path, m.view());
}

// The signal rounded to complex64, as the kernel sees it, for the direct recomputation.
std::vector<std::vector<Complex>> rounded(std::vector<std::vector<Complex>> x) {
  for (auto& row : x)
    for (Complex& v : row) v = Complex(float(v.real()), float(v.imag()));
  return x;
}

// <c8 and <c16 .npy inputs, planar and interleaved: the type is inferred (cf32; <c16 rounded and
// said so in the source), and the covariance matches a direct complex128 recomputation.
TEST(CovCli, ComplexNpyAgainstADirectRecomputation) {
  const auto x = complex_signal(5, 2003);
  const std::vector<Complex> want = direct_cov(rounded(x));
  const std::string out = tmp("cnpy_out.npy"), json = tmp("cnpy.json");
  for (kafel::DType t : {kafel::DType::c64, kafel::DType::c128})
    for (bool interleaved : {false, true}) {
      const std::string in = tmp(std::string("cnpy_") + std::string(kafel::to_string(t)) +
                                 (interleaved ? "_i" : "_p") + ".npy");
      write_complex_npy(in, x, t, interleaved);
      const std::string args = "--device cpu --input " + in +
                               (interleaved ? " --layout interleaved" : "") + " --json " + json +
                               " --out " + out;
      const Ran r = kafel(args);
      ASSERT_EQ(r.code, 0) << args << ": " << r.err;
      nlohmann::json j;
      std::ifstream(json) >> j;
      EXPECT_EQ(j["type"], "cf32") << args;
      EXPECT_EQ(j["channels"], 5) << args;
      EXPECT_EQ(j["samples"], 2003) << args;
      EXPECT_EQ(j["source"].get<std::string>().find("converted to cf32") != std::string::npos,
                t == kafel::DType::c128)
          << j["source"];
      EXPECT_LE(rel_frobenius(out, want), 1e-6) << args;
    }
  // --type cf32 agrees with the file; blocks of a complex .npy stream one after the other.
  const std::string in = tmp("cnpy_cf32_p.npy");
  const Ran r = kafel("--device cpu --type cf32 --samples 1000 --blocks -1 --verify --input " + in +
                      " --json " + json);
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j;
  std::ifstream(json) >> j;
  EXPECT_EQ(j["blocks"], 2);
  EXPECT_EQ(j["verified_blocks"], 2);
}

// Raw interleaved (re, im) files of cf32, ci8 and ci16 samples (ci8 / ci16 have no NumPy type),
// from a file and from stdin, against the direct recomputation (integer samples: exact inputs).
TEST(CovCli, ComplexRawFiles) {
  constexpr std::size_t kC = 3, kN = 777;
  std::vector<std::vector<Complex>> x(kC, std::vector<Complex>(kN));
  std::vector<float> f32;
  std::vector<std::int8_t> i8;
  std::vector<std::int16_t> i16;
  for (std::size_t i = 0; i < kC; ++i)
    for (std::size_t t = 0; t < kN; ++t) {
      const int re = int((t * 37 + i * 11) % 255) - 127, im = int((t * 53 + i * 7) % 201) - 100;
      x[i][t] = Complex(re, im);
      f32.insert(f32.end(), {float(re), float(im)});
      i8.insert(i8.end(), {std::int8_t(re), std::int8_t(im)});
      i16.insert(i16.end(), {std::int16_t(re * 200), std::int16_t(im * 200)});
    }
  const std::vector<Complex> want = direct_cov(x);
  const std::string out = tmp("craw_out.npy");
  auto put = [](const std::string& path, const void* data, std::size_t bytes) {
    std::ofstream(path, std::ios::binary)
        .write(static_cast<const char*>(data), std::streamsize(bytes));
  };
  const std::string cf = tmp("x.cf32"), c8 = tmp("x.ci8"), c16 = tmp("x.ci16");
  put(cf, f32.data(), f32.size() * 4);
  put(c8, i8.data(), i8.size());
  put(c16, i16.data(), i16.size() * 2);
  // cf32 accumulates in f32 (kafel's 1e-6 contract); integer samples accumulate exactly.
  for (const auto& [args, tolerance] : {std::pair{"--type cf32 --input " + cf, 1e-6},
                                        std::pair{"--type ci8 --input " + c8, 1e-12}}) {
    const Ran r = kafel("--device cpu --channels 3 --out " + out + " " + args);
    ASSERT_EQ(r.code, 0) << args << ": " << r.err;
    EXPECT_LE(rel_frobenius(out, want), tolerance) << args;
  }
  Ran r = kafel("--device cpu --channels 3 --type ci16 --input " + c16 + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<Complex> scaled = want;
  for (Complex& v : scaled) v *= 200.0 * 200.0;
  EXPECT_LE(rel_frobenius(out, scaled), 1e-12);
  r = kafel("--device cpu --channels 3 --samples 777 --type cf32 --input - --out " + out, cf);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LE(rel_frobenius(out, want), 1e-6);
}

// Complex inputs that do not match what the command line says are refused, naming the problem.
TEST(CovCli, BadComplexInputs) {
  const std::string odd = tmp("odd.cf32"), c8 = tmp("bad_c8.npy"), f4 = tmp("bad_f4.npy");
  write_floats(odd, {1, 2, 3, 4, 5, 6, 7});
  write_complex_npy(c8, complex_signal(2, 50), kafel::DType::c64, false);
  kafel::Matrix real(kafel::DType::f32, 2, 50);
  kafel::write_npy(f4, real.view());
  struct Case {
    std::string args, needle;
  };
  const std::vector<Case> cases = {
      {"--type cf32 --channels 1 --input " + odd, "7 float32 values, an odd count"},
      {"--type cf32 --channels 2 --samples 4 --blocks -1 --input - ", "an odd count"},
      {"--type ci8 --channels 3 --input " + odd, "3-channel ci8"},
      {"--channels 3 --input " + c8, "holds 2 channels"},
      {"--type f32 --input " + c8, "would drop the imaginary parts"},
      {"--type cf32 --input " + f4, "would read neighbouring samples as (re, im) pairs"},
      {"--type ci8 --input " + c8, "NumPy has no complex int8/int16"},
      {"--window 60 --input " + c8, "--window 60 exceeds the 50 samples per channel"},
  };
  for (const Case& c : cases) {
    const Ran r = kafel("--device cpu " + c.args, odd);
    EXPECT_EQ(r.code, 1) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.args << ": " << r.err;
  }
  // complex128 beyond float32's range cannot be rounded to cf32.
  const std::string huge = tmp("huge_c16.npy");
  kafel::Matrix h(kafel::DType::c128, 1, 4);
  static_cast<double*>(h.data())[3] = 1e300;
  kafel::write_npy(huge, h.view());
  const Ran r = kafel("--device cpu --input " + huge);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("(0, 1) = 1e+300 (im) to cf32: it overflows"), std::string::npos) << r.err;
}

}  // namespace
