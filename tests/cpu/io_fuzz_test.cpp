// A bounded, seeded fuzz test of the readers (matmul.dat, .npy, raw samples, sample stream): each
// mutated file reads consistently or is refused with IoError/InvalidArgument/OutOfMemory, no crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "io_test_util.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel {
namespace {

using test::read_bytes;
using test::ScratchDir;
using test::write_bytes;

// Tokens of the formats' own syntax: mutations built from them reach deep into the parsers.
const char* const kTokens[] = {"(",
                               ")",
                               ",",
                               "'",
                               "\"",
                               "{",
                               "}",
                               ":",
                               " ",
                               "0",
                               "1",
                               "9",
                               "-",
                               "L",
                               "<f4",
                               "<f8",
                               "<i4",
                               "<f2",
                               "|i1",
                               ">f4",
                               "|O",
                               "True",
                               "False",
                               "'shape'",
                               "'descr'",
                               "'fortran_order'",
                               "99999999999999999999",
                               "\n",
                               "\x93NUMPY",
                               "\xff\xff\xff\x7f",
                               "\x00\x00\x00\x80"};

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  std::string mutate(std::string s) {
    const int rounds = 1 + int(rng_() % 3);
    for (int r = 0; r < rounds; ++r) s = once(std::move(s));
    return s;
  }

 private:
  std::size_t pos(const std::string& s) { return s.empty() ? 0 : rng_() % (s.size() + 1); }
  // Header bytes are where the interesting decisions are: bias positions towards them.
  std::size_t header_pos(const std::string& s) {
    return rng_() % 2 ? pos(s) : std::min<std::size_t>(s.size(), rng_() % 128);
  }

  std::string once(std::string s) {
    switch (rng_() % 7) {
      case 0:  // flip some bytes
        for (int i = 0, n = 1 + int(rng_() % 8); i < n && !s.empty(); ++i)
          s[header_pos(s) % s.size()] = char(rng_());
        return s;
      case 1:  // truncate
        return s.substr(0, pos(s));
      case 2:  // append
        return s + random_bytes(1 + rng_() % 64);
      case 3: {  // insert a token
        const std::string t = kTokens[rng_() % (sizeof kTokens / sizeof *kTokens)];
        return s.insert(header_pos(s), t);
      }
      case 4: {  // overwrite with a token
        const std::string t = kTokens[rng_() % (sizeof kTokens / sizeof *kTokens)];
        const std::size_t p = header_pos(s);
        return s.replace(p, std::min(t.size(), s.size() - p), t);
      }
      case 5: {  // an int32 field (matmul.dat sizes, .npy v2 header length) set to an edge
        const std::int32_t edges[] = {0, -1, 1, 2, 3, 7, 65535, 1 << 20, INT32_MAX, INT32_MIN};
        const std::int32_t v = edges[rng_() % 10];
        const std::size_t p = (rng_() % 4) * 4;
        if (p + 4 <= s.size()) std::memcpy(s.data() + p, &v, 4);
        return s;
      }
      default: {  // duplicate a chunk
        const std::size_t a = pos(s), len = std::min<std::size_t>(s.size() - a, rng_() % 32);
        return s.insert(pos(s), s.substr(a, len));
      }
    }
  }

  std::string random_bytes(std::size_t n) {
    std::string out(n, '\0');
    for (auto& c : out) c = char(rng_());
    return out;
  }

  std::mt19937_64 rng_;
};

// Runs `read` and accepts success or the documented errors; counts both.
struct Outcome {
  int read = 0, refused = 0;
};

void try_read(const std::function<void()>& read, Outcome& o, const std::string& what) {
  try {
    read();
    ++o.read;
  } catch (const IoError&) {
    ++o.refused;
  } catch (const InvalidArgument&) {
    ++o.refused;
  } catch (const OutOfMemory&) {
    ++o.refused;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": unexpected " << typeid(e).name() << ": " << e.what();
  }
}

void check_matmul(const std::string& f, std::uint64_t size) {
  const MatmulData d = read_matmul_dat(f);
  const std::uint64_t elems =
      std::uint64_t(d.a.rows() * d.a.cols() + d.b.rows() * d.b.cols() + d.c.rows() * d.c.cols());
  ASSERT_EQ(12 + 4 * elems, size);
  ASSERT_EQ(d.a.cols(), d.b.rows());
  ASSERT_EQ(d.c.rows(), d.a.rows());
  ASSERT_EQ(d.c.cols(), d.b.cols());
}

// A file that reads must describe itself exactly, and survive a write / read round trip.
void check_npy(const std::string& f, const std::string& again, std::uint64_t size) {
  NpyHeader h;
  const Matrix m = read_npy(f, &h);
  ASSERT_EQ(h.data_offset + std::uint64_t(m.rows() * m.cols()) * dtype_size(m.dtype()), size);
  write_npy(again, m);
  const Matrix r = read_npy(again);
  ASSERT_EQ(r.rows(), m.rows());
  ASSERT_EQ(r.cols(), m.cols());
  ASSERT_EQ(r.dtype(), m.dtype());
  ASSERT_EQ(std::memcmp(r.data(), m.data(), r.bytes()), 0);
}

void check_raw(const std::string& f, std::uint64_t size, std::int64_t channels, SampleLayout l) {
  const Matrix m = read_raw_samples(f, channels, l);
  ASSERT_EQ(std::uint64_t(m.rows() * m.cols()) * 4, size);
  ASSERT_EQ(raw_sample_frames(f, channels), m.cols());
}

void check_stream(const std::string& f, std::uint64_t size, std::int64_t channels,
                  std::int64_t block, SampleLayout l) {
  SampleStream s(f, channels, block, l);
  Matrix b;
  std::uint64_t bytes = 0;
  while (s.next(b)) {
    ASSERT_EQ(b.rows(), channels);
    ASSERT_LE(b.cols(), block);
    bytes += std::uint64_t(b.rows() * b.cols()) * 4;
  }
  ASSERT_EQ(bytes, size);
}

struct Seed {
  const char* kind;
  std::string bytes;
};

std::vector<Seed> seeds(const ScratchDir& dir) {
  std::vector<Seed> out;
  std::mt19937_64 rng(3);
  auto keep = [&](const char* kind, const std::string& path) {
    out.push_back({kind, read_bytes(path)});
  };
  Matrix a(DType::f32, 3, 4), b(DType::f32, 4, 2), c(DType::f32, 3, 2);
  fill_random_normal(a, rng);
  fill_random_normal(b, rng);
  write_matmul_dat(dir.file("s.dat"), a, b, c);
  keep("matmul", dir.file("s.dat"));
  for (DType t : {DType::f32, DType::f64, DType::i32, DType::f16, DType::i8}) {
    for (Layout l : {Layout::RowMajor, Layout::ColMajor}) {
      Matrix m(t, 3, 5, l);
      fill_random_normal(m, rng);
      write_npy(dir.file("s.npy"), m);
      keep("npy", dir.file("s.npy"));
    }
  }
  write_npy(dir.file("s.npy"), Matrix(DType::f32, 1, 6), true);
  keep("npy", dir.file("s.npy"));
  Matrix raw(DType::f32, 3, 7);
  fill_random_normal(raw, rng);
  write_raw_samples(dir.file("s.f32"), raw, SampleLayout::Interleaved);
  keep("raw", dir.file("s.f32"));
  return out;
}

// Memory-backed when the system has /dev/shm: thousands of small files, not disk syncs.
std::filesystem::path fast_temp() {
  std::error_code ec;
  return std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
             ? std::filesystem::path("/dev/shm")
             : std::filesystem::path();
}

TEST(IoFuzz, MutatedFilesAreReadConsistentlyOrRefused) {
  ScratchDir dir("fuzz", fast_temp());
  const std::vector<Seed> base = seeds(dir);
  Mutator mutate(20261123);
  std::mt19937_64 pick(99);
  Outcome matmul, npy, raw, stream;
  const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  int n = 0;
  const std::string f = dir.file("fuzz.bin"), again = dir.file("again.npy");
  for (; n < 20000 && std::chrono::steady_clock::now() < stop; ++n) {
    const Seed& s = base[pick() % base.size()];
    const std::string bytes = mutate.mutate(s.bytes);
    write_bytes(f, bytes);
    const std::string what = std::string(s.kind) + " case " + std::to_string(n);
    const std::uint64_t size = bytes.size();
    // Every reader sees every file: a .npy read as matmul.dat must be refused cleanly too.
    try_read([&] { check_matmul(f, size); }, matmul, what + " as matmul.dat");
    try_read([&] { check_npy(f, again, size); }, npy, what + " as .npy");
    const std::int64_t channels = 1 + std::int64_t(pick() % 4);
    const SampleLayout l = pick() % 2 ? SampleLayout::Planar : SampleLayout::Interleaved;
    try_read([&] { check_raw(f, size, channels, l); }, raw, what + " as raw samples");
    try_read([&] { check_stream(f, size, channels, 1 + std::int64_t(pick() % 5), l); }, stream,
             what + " as a sample stream");
    if (HasFailure()) break;  // the first bad case is the one to read
  }
  EXPECT_GT(n, 200) << "too few cases ran to mean anything";
  // Both outcomes occur for each reader: the mutations reach past the first checks.
  for (const auto* o : {&matmul, &npy, &raw, &stream}) {
    EXPECT_GT(o->read, 0);
    EXPECT_GT(o->refused, 0);
  }
  std::printf("fuzz: %d cases; read/refused: matmul %d/%d, npy %d/%d, raw %d/%d, stream %d/%d\n", n,
              matmul.read, matmul.refused, npy.read, npy.refused, raw.read, raw.refused,
              stream.read, stream.refused);
}

}  // namespace
}  // namespace kafel
